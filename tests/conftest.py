from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from berth.app import create_app
from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services, build_services
from berth.demo.loader import DEMO_ADMIN_TOKEN, demo_catalog_text, load_demo
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import parse_catalog
from berth.settings import Settings
from tests.databases import POSTGRES_URL, PostgresDatabase, SqliteTemplate, backend_name

KEY_A = "demo-reseller-a"
KEY_B = "demo-reseller-b"


def pytest_report_header() -> str:
    return f"berth test database: {backend_name()}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    fuzz = sys.modules.get("tests.test_fuzz")
    cases = getattr(fuzz, "CASES", None)
    if cases:
        operations = len([name for name in cases if name != "stateful"])
        terminalreporter.write_line(
            f"fuzz: {sum(cases.values())} requests ({operations} operations, "
            f"{cases['stateful']} in stateful sequences) on {backend_name()}"
        )


@pytest.fixture(scope="session")
def test_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteTemplate | PostgresDatabase]:
    database: SqliteTemplate | PostgresDatabase
    if POSTGRES_URL:
        database = PostgresDatabase(POSTGRES_URL)
    else:
        database = SqliteTemplate(tmp_path_factory.mktemp("template"))
    yield database
    database.close()


@pytest.fixture
async def database_url(
    test_database: SqliteTemplate | PostgresDatabase, tmp_path: Path
) -> AsyncIterator[str]:
    url = test_database.fresh(tmp_path)
    yield url
    if isinstance(test_database, PostgresDatabase):
        await test_database.truncate()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        admin_token=DEMO_ADMIN_TOKEN,
        log_level="WARNING",
        webhook_allow_private_targets=True,
        retry_schedule="60,120,240",
        rate_limit_per_minute=0,
    )


class Clock:
    """The time source the services read; tests move it forward to pass cutoffs and expiries."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


# A Monday in British Summer Time, far enough ahead of the demo's fixed dates.
START = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
async def services(settings: Settings, clock: Clock) -> AsyncIterator[Services]:
    built = build_services(settings, clock)
    yield built
    await built.close()


# The tests were written for a Thames cruise of 20 places a departure; the shipped demo's is
# larger (a conformance run holds about 130 places of one departure). The tests state the
# capacity they depend on instead of following the product's demo (tests/test_demo.py tests it).
TOUR_CAPACITY = 20


def demo_catalog_for_tests() -> Catalog:
    """The packaged demo catalogue with the Thames cruise's daytime departures at TOUR_CAPACITY."""
    catalog = parse_catalog(demo_catalog_text(), CATALOG_RULES)
    products = []
    for product in catalog.products:
        if product.id == "thames-sightseeing":
            options = tuple(
                option.model_copy(
                    update={
                        "schedules": tuple(
                            s.model_copy(update={"capacity": TOUR_CAPACITY}) for s in option.schedules
                        )
                    }
                )
                if option.id == "DEFAULT"
                else option
                for option in product.options
            )
            product = product.model_copy(update={"options": options})
        products.append(product)
    return catalog.model_copy(update={"products": tuple(products)})


async def load_test_demo(services: Services) -> None:
    await load_demo(services, demo_catalog_for_tests())


@pytest.fixture
async def demo(services: Services) -> Services:
    await load_test_demo(services)
    return services


@pytest.fixture
async def bookable(services: Services) -> Services:
    """The booking tests' own catalogue (`tests.bookings_helpers.booking_catalog`), not the
    demo, with the two reseller connections."""
    from tests.bookings_helpers import booking_catalog
    from tests.builders import load

    return await load(services, booking_catalog())


@pytest.fixture
def app(services: Services) -> FastAPI:
    return create_app(services=services)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as http:
        yield http


def auth(key: str = KEY_A, capabilities: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}", **extra}
    if capabilities is not None:
        headers["Octo-Capabilities"] = capabilities
    return headers


ADMIN = {"Authorization": f"Bearer {DEMO_ADMIN_TOKEN}"}
