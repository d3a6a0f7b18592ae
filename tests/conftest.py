from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import AsyncIterator, Generator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from _pytest.nodeid import NodeId
from fastapi import FastAPI

from berth.app import create_app
from berth.container import Services, build_services
from berth.demo.loader import DEMO_ADMIN_TOKEN, load_demo
from berth.domain.webhooks import fixed_signing_secret
from berth.settings import Settings
from tests import databases
from tests.chromium import CHROMIUM, MISSING, browsers_may_be_skipped
from tests.databases import POSTGRES_URL, PostgresDatabase, SqliteTemplate, backend_name

KEY_A = "demo-reseller-a"
KEY_B = "demo-reseller-b"
# The webhook signing secrets of the builders' two connections (`tests.builders.load`).
SECRET_A = fixed_signing_secret("reseller-a-test-signing-secret")
SECRET_B = fixed_signing_secret("reseller-b-test-signing-secret")


def pytest_report_header() -> str:
    return f"berth test database: {backend_name()}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """With BERTH_TEST_NO_SKIP=1 (CI), a skipped test is a failure: CI runs every test it has."""
    report: pytest.TestReport = yield
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get("BERTH_TEST_NO_SKIP") == "1":
        report.outcome = "failed"
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped, and a skipped test fails CI (BERTH_TEST_NO_SKIP=1): {why}"
    return report


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A browser test without a browser fails, saying what is missing; it is skipped only when
    the run was told to go without browsers (`tests/chromium.py`)."""
    if item.get_closest_marker("browser") is None or CHROMIUM.exists():
        return
    if browsers_may_be_skipped():
        pytest.skip(MISSING)
    pytest.fail(MISSING, pytrace=False)


# The fixture every database fixture is built on (database_url, settings, services, app,
# client, the catalogues, the back office's server): a test without it in its fixture closure
# reaches no database and no Berth server through the fixtures.
DATABASE_FIXTURE = "test_database"
# Why a run deselected tests, and how many (the summary's lines).
DESELECTED = pytest.StashKey[dict[str, int]]()
NO_DATABASE = (
    "postgresql: {} tests not run again (deselected): they reach no database "
    f"(no {DATABASE_FIXTURE} in their fixtures, nothing from tests/databases.py in their module); "
    "the SQLite run runs them"
)
ONLY_POSTGRES = (
    "sqlite: {} tests of PostgreSQL only not run (deselected, marked `postgresql`): "
    "the run with BERTH_TEST_POSTGRES_URL runs them"
)
ONLY_SQLITE = (
    "postgresql: {} tests of SQLite only not run (deselected, marked `sqlite`): the SQLite run runs them"
)


def _imports_from_databases(module: ModuleType) -> bool:
    return "POSTGRES_URL" in vars(module) or any(
        value is databases or getattr(value, "__module__", None) == databases.__name__
        for value in vars(module).values()
    )


def _reads_postgres_url(module: ModuleType) -> bool:
    """A test module, or a `tests` helper module it imports from, that reads `tests/databases.py`
    itself (not through `test_database`): it makes its own PostgreSQL databases, or skips
    without one. The conftest's own use is its `test_database` fixture."""
    helpers = {getattr(value, "__module__", None) for value in vars(module).values()}
    return _imports_from_databases(module) or any(
        _imports_from_databases(sys.modules[name])
        for name in helpers
        if isinstance(name, str) and name.startswith("tests.") and name != __name__ and name in sys.modules
    )


def reaches_a_database(item: pytest.Item) -> bool:
    if not isinstance(item, pytest.Function):
        return True
    return (
        DATABASE_FIXTURE in item.fixturenames
        or item.get_closest_marker("postgresql") is not None
        or _reads_postgres_url(item.module)
    )


def _name_each_test_once(items: list[pytest.Item]) -> None:
    """schemathesis (4.32) on pytest 9 gives every operation's test of `tests/test_fuzz.py` the
    same node id (only its name has the operation); pytest-xdist tells tests apart by node id
    and ran one operation of 91. Each gets the id its name says (pytest's own `_id`: no public
    way to set it)."""
    seen = Counter(item.nodeid for item in items)
    for item in items:
        if seen[item.nodeid] > 1 and isinstance(item, pytest.Function):
            item._id = NodeId.parse(f"{item.nodeid.rpartition('::')[0]}::{item.name}")


def _deselect(config: pytest.Config, items: list[pytest.Item], dropped: list[pytest.Item], why: str) -> None:
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
    config.stash.setdefault(DESELECTED, {})[why] = len(dropped)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On PostgreSQL, run again only what can differ there: the tests that reach a database.
    The others (pure domain, rendering, parsing) ran on SQLite and would run the same here.
    A test of one database only (marked `postgresql` or `sqlite`) is deselected on the other's
    run, which says how many, rather than skipped: in CI a skipped test is a failure."""
    _name_each_test_once(items)
    if not POSTGRES_URL:
        _deselect(
            config, items, [item for item in items if item.get_closest_marker("postgresql")], ONLY_POSTGRES
        )
        return
    _deselect(config, items, [item for item in items if item.get_closest_marker("sqlite")], ONLY_SQLITE)
    _deselect(config, items, [item for item in items if not reaches_a_database(item)], NO_DATABASE)


def _fuzz_cases() -> Counter[str]:
    fuzz = sys.modules.get("tests.test_fuzz")
    return Counter(getattr(fuzz, "CASES", None) or {})


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist (`-n`), a worker collects and runs the tests and the controller
    writes the summary: the worker hands it what the summary reports."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["deselected"] = session.config.stash.get(DESELECTED, {})
        workeroutput["fuzz_cases"] = dict(_fuzz_cases())


WORKERS_FUZZ_CASES = pytest.StashKey[Counter[str]]()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller, as each worker ends: every worker collected every test (the same
    deselection), and each ran its share of the fuzz tests."""
    output = getattr(node, "workeroutput", {})
    config: pytest.Config = node.config
    config.stash[DESELECTED] = output.get("deselected", {})
    cases = config.stash.setdefault(WORKERS_FUZZ_CASES, Counter())
    cases.update(output.get("fuzz_cases", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    stash = terminalreporter.config.stash
    for why, count in stash.get(DESELECTED, {}).items():
        if count:
            terminalreporter.write_line(why.format(count))
    cases = _fuzz_cases() or stash.get(WORKERS_FUZZ_CASES, Counter())
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
        await test_database.empty()


def settings_for(database_url: str) -> Settings:
    """The settings of the tests' services over `database_url`."""
    return Settings(
        database_url=database_url,
        admin_token=DEMO_ADMIN_TOKEN,
        log_level="WARNING",
        webhook_allow_private_targets=True,
        retry_schedule="60,120,240",
        rate_limit_per_minute=0,
    )


@pytest.fixture
def settings(database_url: str) -> Settings:
    return settings_for(database_url)


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


@pytest.fixture
async def demo(services: Services) -> Services:
    """The shipped demo, for the tests of the demo as a product (tests/test_demo.py) and of
    its answers' conformance; every other test states its own data (tests/builders.py)."""
    await load_demo(services)
    return services


@pytest.fixture
async def bookable(services: Services) -> Services:
    """The booking tests' own catalogue (`tests.bookings_helpers.booking_catalog`), not the
    demo, with the two reseller connections."""
    from tests.bookings_helpers import booking_catalog
    from tests.builders import load

    return await load(services, booking_catalog())


@pytest.fixture
async def seated(services: Services) -> Services:
    """The resources tests' own catalogue (`tests.resources_helpers.resources_catalog`), with
    the box office's three parties on the harbour cruise's BOOKED_TEN departure."""
    from tests.builders import load
    from tests.resources_helpers import BOOKED_TEN, resources_catalog, seat_parties

    await seat_parties(await load(services, resources_catalog()), BOOKED_TEN)
    return services


@pytest.fixture
async def rentable(services: Services) -> Services:
    """The rentals tests' own catalogue (`tests.rentals_helpers.rentals_catalog`)."""
    from tests.builders import load
    from tests.rentals_helpers import rentals_catalog

    return await load(services, rentals_catalog())


@pytest.fixture
async def packaged(services: Services) -> Services:
    """The packages tests' own catalogue (`tests.packages_helpers.packages_catalog`)."""
    from tests.builders import load
    from tests.packages_helpers import packages_catalog

    return await load(services, packages_catalog())


@pytest.fixture
async def stocked(services: Services) -> Services:
    """Every capability's test products in one catalogue (`tests.every_capability`), with the box office's parties on the harbour cruise's BOOKED_TEN."""
    from tests.builders import load
    from tests.every_capability import every_capability_catalog
    from tests.resources_helpers import BOOKED_TEN, seat_parties

    await seat_parties(await load(services, every_capability_catalog()), BOOKED_TEN)
    return services


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
