"""A PostgreSQL server that refuses Berth's connections ("too many connections", as when every
slot of `max_connections` or of the role's CONNECTION LIMIT is taken): each request is answered
503 with `Retry-After` and an OCTO error body, counted in /metrics, and the episode is logged
once when it begins and once when it ends, not once per request (issue 47).

Berth runs here as a role of its own, owner of a database made for the test, because a
superuser is exempt from connection limits."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from berth.container import Services
from berth.http.errors import DATABASE_FAULTS, DATABASE_RETRY_AFTER_SECONDS
from berth.settings import Settings
from tests.bookings_helpers import vacancies
from tests.conftest import ADMIN, auth
from tests.databases import POSTGRES_URL, _migrate
from tests.test_faults import Logs

REFUSED = {
    "error": "SERVICE_UNAVAILABLE",
    "errorMessage": DATABASE_FAULTS["refused"],
    "retryAfter": DATABASE_RETRY_AFTER_SECONDS,
}


class Limits:
    """Sets the connection limit of Berth's role, and ends its connections, from a superuser's
    connection to another database."""

    def __init__(self, admin: asyncpg.Connection, role: str) -> None:
        self._admin = admin
        self.role = role

    async def refuse(self) -> None:
        """No new connection of the role is accepted; the ones it had are ended."""
        await self._admin.execute(f'ALTER ROLE "{self.role}" CONNECTION LIMIT 0')
        await self._admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", self.role
        )

    async def accept(self) -> None:
        await self._admin.execute(f'ALTER ROLE "{self.role}" CONNECTION LIMIT -1')


pytestmark = pytest.mark.postgresql  # connection limits a test can set


@pytest.fixture
async def admin() -> AsyncIterator[asyncpg.Connection]:
    assert POSTGRES_URL
    dsn = make_url(POSTGRES_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    connection = await asyncpg.connect(dsn)
    try:
        yield connection
    finally:
        await connection.close()


@pytest.fixture
async def database_url(admin: asyncpg.Connection) -> AsyncIterator[str]:
    """A database owned by a role of its own (not a superuser), migrated by that role."""
    assert POSTGRES_URL is not None
    name = f"berth_refused_{uuid.uuid4().hex[:12]}"
    await admin.execute(f'CREATE ROLE "{name}" LOGIN')
    await admin.execute(f'CREATE DATABASE "{name}" OWNER "{name}"')
    url = (
        make_url(POSTGRES_URL)
        .set(drivername="postgresql+asyncpg", username=name, password=None, database=name)
        .render_as_string(hide_password=False)
    )
    try:
        await _migrate(url)
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'DROP ROLE IF EXISTS "{name}"')


@pytest.fixture
async def limits(admin: asyncpg.Connection, database_url: str) -> AsyncIterator[Limits]:
    found = Limits(admin, str(make_url(database_url).username))
    try:
        yield found
    finally:
        await found.accept()


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # Every request checks its key in the database; a pooled connection is pinged before use.
    return settings.model_copy(update={"auth_cache_seconds": 0, "database_ping_idle_seconds": 0})


@pytest.fixture
def logs(capsys: pytest.CaptureFixture[str]) -> Logs:
    return Logs(capsys)


def _metric(text: str, name: str) -> float:
    (value,) = [line.split()[-1] for line in text.splitlines() if line.split(" ")[0] == name]
    return float(value)


async def test_refused_connections_are_a_503_counted_and_logged_once_per_episode(
    client: httpx.AsyncClient, bookable: Services, limits: Limits, logs: Logs
) -> None:
    assert await vacancies(client) == 20
    logs.read()
    await limits.refuse()
    during = [
        await client.get("/octo/products", headers=auth()),
        await client.post(
            "/octo/availability",
            json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": "2026-06-02"},
            headers=auth(),
        ),
        await client.get("/admin/api/bookings", headers=ADMIN),
        await client.get("/octo/supplier", headers=auth()),
    ]
    for response in during:
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == str(DATABASE_RETRY_AFTER_SECONDS)
        assert response.json() == REFUSED  # the whole body: no driver text, host or role
    metrics = await client.get("/metrics")
    assert metrics.status_code == 200, metrics.text
    assert _metric(metrics.text, "berth_database_refused_total") >= len(during)
    assert _metric(metrics.text, "berth_database_refusing") == 1
    assert _metric(metrics.text, "berth_database_outages_total") == 1

    # One line for the episode, naming the driver's reason; none per request.
    faults = [line for line in logs.read() if line["level"] in ("warning", "error")]
    assert [line["event"] for line in faults] == ["database unavailable"], faults
    assert "too many connections for role" in faults[0]["error"]

    await limits.accept()
    assert (await client.get("/octo/products", headers=auth())).status_code == 200
    assert await vacancies(client) == 20
    ended = [line for line in logs.read() if line["event"] == "database available again"]
    assert len(ended) == 1 and ended[0]["refused"] >= len(during), ended
    after = (await client.get("/metrics")).text
    assert (
        _metric(after, "berth_database_outages_total") == 1 and _metric(after, "berth_database_refusing") == 0
    )
