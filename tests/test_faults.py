"""Faults: the database going away for a moment (PostgreSQL, taken away for real), receivers
that hang or trickle, and the background loops riding out database errors. Disk full on SQLite:
tests/test_disk_full.py."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from berth.background import run_background
from berth.container import Services
from berth.http.errors import DATABASE_FAULTS, DATABASE_RETRY_AFTER_SECONDS
from berth.settings import Settings
from tests.bookings_helpers import confirm, reservation, reserve, vacancies
from tests.conftest import ADMIN, Clock, auth
from tests.databases import POSTGRES_URL
from tests.receivers import receiver, stalling_receiver
from tests.test_mappings import mapped, notifications, put, row
from tests.test_webhooks import drain, subscribe

UNAVAILABLE = {"error": "INTERNAL_SERVER_ERROR", "errorMessage": DATABASE_FAULTS["unavailable"]}
REFUSED = {
    "error": "SERVICE_UNAVAILABLE",
    "errorMessage": DATABASE_FAULTS["refused"],
    "retryAfter": DATABASE_RETRY_AFTER_SECONDS,
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # Every request checks its key in the database (no remembered checks); receivers get 1 s.
    return settings.model_copy(
        update={"auth_cache_seconds": 0, "delivery_timeout_seconds": 1, "database_ping_idle_seconds": 0}
    )


async def until(condition: Callable[[], bool | Awaitable[bool]], seconds: float = 8) -> None:
    """Wait until `condition()` holds; fail (rather than hang) after `seconds`."""
    async with asyncio.timeout(seconds):
        while True:
            held = condition()
            if await held if inspect.isawaitable(held) else held:
                return
            await asyncio.sleep(0.02)


class Logs:
    """The JSON log lines written so far (structlog writes to whatever stderr is)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self._capsys = capsys
        self.lines: list[dict[str, Any]] = []

    def read(self) -> list[dict[str, Any]]:
        for line in self._capsys.readouterr().err.splitlines():
            if line.startswith("{"):
                self.lines.append(json.loads(line))
        return self.lines

    def events(self) -> set[str]:
        return {line["event"] for line in self.read()}

    def fault_of(self, response: httpx.Response) -> dict[str, Any]:
        """The one line logged for this response's failure (a warning or an error), found by
        its X-Request-Id."""
        request_id = response.headers["x-request-id"]
        (found,) = [
            line
            for line in self.read()
            if line.get("request_id") == request_id and line["level"] in ("warning", "error")
        ]
        return found

    def error_of(self, response: httpx.Response) -> dict[str, Any]:
        """The error line logged for this response, found by its X-Request-Id."""
        request_id = response.headers["x-request-id"]
        (found,) = [
            line for line in self.read() if line.get("request_id") == request_id and line["level"] == "error"
        ]
        return found


@pytest.fixture
def logs(capsys: pytest.CaptureFixture[str]) -> Logs:
    return Logs(capsys)


# --- the database going away (PostgreSQL) -------------------------------------------------------


class Outage:
    """Takes Berth's PostgreSQL database away and brings it back, from a connection to another
    database of the same server."""

    def __init__(self, admin: asyncpg.Connection, database: str) -> None:
        self._admin = admin
        self._database = database

    async def kill(self, keep: int | None = None) -> int:
        """End the server side of every connection to Berth's database (but `keep`)."""
        killed = await self._admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = $1 AND pid <> pg_backend_pid() AND pid <> $2",
            self._database,
            keep or 0,
        )
        return int(killed)

    async def begin(self) -> None:
        """The database refuses new connections and loses the ones it had."""
        await self._admin.execute(f'ALTER DATABASE "{self._database}" ALLOW_CONNECTIONS false')
        await self.kill()

    async def end(self) -> None:
        await self._admin.execute(f'ALTER DATABASE "{self._database}" ALLOW_CONNECTIONS true')

    async def waiting_for_a_lock(self) -> bool:
        count = await self._admin.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
            self._database,
        )
        return bool(count)


@pytest.fixture
async def outage(database_url: str) -> AsyncIterator[Outage]:
    assert POSTGRES_URL
    admin_dsn = make_url(POSTGRES_URL).set(drivername="postgresql").render_as_string(hide_password=False)
    admin = await asyncpg.connect(admin_dsn)
    found = Outage(admin, str(make_url(database_url).database))
    try:
        yield found
    finally:
        await found.end()
        await admin.close()


@pytest.mark.postgresql  # a PostgreSQL server to take away
async def test_requests_during_an_outage_get_a_503_and_the_next_ones_succeed(
    client: httpx.AsyncClient, bookable: Services, outage: Outage, logs: Logs
) -> None:
    assert await vacancies(client) == 20
    body = reservation()
    await outage.begin()
    during = [
        await client.post("/octo/bookings", json=body, headers=auth()),
        await client.post(
            "/octo/availability",
            json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": "2026-06-02"},
            headers=auth(),
        ),
        await client.get("/admin/api/bookings", headers=ADMIN),
    ]
    for response in during:
        assert response.status_code == 503
        assert response.headers["retry-after"] == str(DATABASE_RETRY_AFTER_SECONDS)
        assert response.json() == REFUSED  # the whole body: no driver text, host or SQL
    # ... which the log has, under the first request's id: one warning line for the outage,
    # no traceback (tests/test_database_refused.py: with a connection limit)
    logged = logs.fault_of(during[0])
    assert logged["level"] == "warning" and "exception" not in logged
    assert logged["event"] == "database unavailable" and logged["fault"] == "refused"
    assert "is not currently accepting connections" in logged["error"]
    for response in during[1:]:
        request_id = response.headers["x-request-id"]
        assert not [line for line in logs.read() if line.get("request_id") == request_id]
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.json()["status"] == "unavailable"

    await outage.end()  # no restart: the pool makes new connections by itself
    assert (await client.get("/readyz")).status_code == 200
    assert "database available again" in logs.events()
    assert await vacancies(client) == 20
    held = await reserve(client, body)  # the same uuid: the failed attempt left nothing behind
    assert held["status"] == "ON_HOLD" and await vacancies(client) == 18


@pytest.mark.postgresql  # a PostgreSQL server to take away
async def test_a_connection_lost_mid_transaction_rolls_back_and_the_pool_recovers(
    client: httpx.AsyncClient, bookable: Services, outage: Outage, logs: Logs
) -> None:
    """A reservation waits inside its transaction (another one holds the bookings locked) when
    the server ends its connection, and every idle one in the pool."""
    body = reservation()
    async with bookable.database.transaction(write=True) as locker:
        await locker.execute(text("LOCK TABLE bookings IN ACCESS EXCLUSIVE MODE"))
        locker_pid = (await locker.execute(text("SELECT pg_backend_pid()"))).scalar_one()
        request = asyncio.create_task(client.post("/octo/bookings", json=body, headers=auth()))
        await until(outage.waiting_for_a_lock)
        assert await outage.kill(keep=locker_pid) >= 1
        response = await asyncio.wait_for(request, 8)
    assert response.status_code == 500 and response.json() == UNAVAILABLE
    logged = logs.fault_of(response)
    assert logged["level"] == "warning" and "exception" not in logged
    assert "terminating connection due to administrator command" in logged["error"]

    # Having seen a disconnect, SQLAlchemy drops the pooled connections made before it: the
    # next requests get fresh ones, with no restart. Nothing of the reservation was kept.
    assert await vacancies(client) == 20
    missing = await client.get(f"/octo/bookings/{body['uuid']}", headers=auth())
    assert missing.json()["error"] == "INVALID_BOOKING_UUID"
    held = await reserve(client, body)
    assert held["status"] == "ON_HOLD" and await vacancies(client) == 18
    # Idle connections lost while nothing used them are found out before use (pre-ping).
    assert await outage.kill() >= 1
    assert await vacancies(client) == 18


@pytest.mark.postgresql  # a PostgreSQL server to take away
async def test_the_background_loops_ride_out_an_outage(
    client: httpx.AsyncClient, bookable: Services, clock: Clock, outage: Outage, logs: Logs
) -> None:
    """The sweeper and the delivery loop fail on every tick while the database is away, say so
    in the log once for the outage, and carry on once it is back: a hold that ran out meanwhile
    is expired and announced."""
    bookable.settings.expiry_sweep_seconds = 0.05
    bookable.settings.delivery_poll_seconds = 0.05
    async with receiver() as target:
        await subscribe(client, target.url)
        await reserve(client, reservation(expirationMinutes=1))
        stop = asyncio.Event()
        await outage.begin()
        loops = asyncio.create_task(run_background(bookable, stop))
        try:
            refused = bookable.database.outages.refused
            await until(lambda: bookable.database.outages.refused >= refused + 10)  # many failed ticks
            assert not loops.done()
            said = [line for line in logs.read() if line["level"] in ("warning", "error")]
            assert [line["event"] for line in said if line["event"] == "database unavailable"] == [
                "database unavailable"
            ]
            assert {line["level"] for line in said} == {"warning"}
            assert not any("exception" in line for line in said)
            await outage.end()
            clock.advance(minutes=2)
            await until(lambda: any(p["booking"]["status"] == "EXPIRED" for p in target.payloads()))
        finally:
            stop.set()
            await asyncio.wait_for(loops, 8)
    assert await vacancies(client) == 20


# --- receivers that hang ------------------------------------------------------------------------


async def _attempt_log(
    client: httpx.AsyncClient, hook_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    listed = (await client.get(f"/admin/api/webhooks/{hook_id}/deliveries", headers=ADMIN)).json()
    (delivery,) = listed["deliveries"]
    detail = (await client.get(f"/admin/api/deliveries/{delivery['id']}", headers=ADMIN)).json()
    return detail, detail["attemptLog"]


@pytest.mark.parametrize("mode", ["silent", "trickle-headers"])
async def test_a_receiver_that_never_answers_is_given_up_on_and_retried(
    client: httpx.AsyncClient, bookable: Services, clock: Clock, mode: str
) -> None:
    """The worker gives up at the delivery timeout, records why and schedules a retry; a
    healthy receiver's message of the same batch is not held back behind it."""
    async with stalling_receiver(mode) as stuck, receiver() as healthy:
        healthy_had: list[int] = []
        stuck.on_give_up = lambda: healthy_had.append(len(healthy.requests))
        stuck_hook = await subscribe(client, stuck.url)
        healthy_hook = await subscribe(client, healthy.url)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await asyncio.wait_for(drain(bookable), 8)
        await until(lambda: stuck.given_up == 1)
        assert stuck.requests == 1 and len(healthy.requests) == 1
        assert healthy_had == [1], "the healthy receiver waited for the stuck one"
        detail, (attempt,) = await _attempt_log(client, stuck_hook["id"])
        assert attempt["statusCode"] is None and attempt["error"] == "no answer within 1 s"
        assert detail["status"] == "pending" and detail["nextAttemptAt"] is not None
        healthy_detail, _ = await _attempt_log(client, healthy_hook["id"])
        assert healthy_detail["status"] == "delivered"

        stuck.mode = "answer"  # the receiver got better: the retry reaches it
        clock.advance(seconds=80)
        await asyncio.wait_for(drain(bookable), 8)
        detail, attempts = await _attempt_log(client, stuck_hook["id"])
        assert [a["statusCode"] for a in attempts] == [None, 200]
        assert detail["status"] == "delivered" and stuck.requests == 2


async def test_a_receiver_that_trickles_its_body_is_cut_off_at_the_deadline(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """It answered 200 in time, so the message is delivered; the body it keeps trickling (for
    hours at this pace) is read only until the deadline."""
    async with stalling_receiver("trickle-body") as slow:
        hook = await subscribe(client, slow.url)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await asyncio.wait_for(drain(bookable), 8)
        await until(lambda: slow.given_up == 1)
        detail, (attempt,) = await _attempt_log(client, hook["id"])
        assert attempt["statusCode"] == 200 and attempt["error"] is None
        assert set(attempt["responseExcerpt"]) <= {"x"}
        assert detail["status"] == "delivered"


async def test_a_mapping_notification_to_a_receiver_that_hangs_is_retried(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with stalling_receiver("silent") as stuck:
        await put(client, [row("B1", stuck.url)])
        await mapped(client, "B1", productId="thames-sightseeing", optionId="DEFAULT")
        await asyncio.wait_for(drain(bookable), 8)
        (notification,) = await notifications(client, "B1")
        assert notification["status"] == "pending" and notification["attempts"] == 1
        detail = (await client.get(f"/admin/api/deliveries/{notification['id']}", headers=ADMIN)).json()
        assert [a["error"] for a in detail["attemptLog"]] == ["no answer within 1 s"]

        stuck.mode = "answer"
        clock.advance(seconds=80)
        await asyncio.wait_for(drain(bookable), 8)
        (notification,) = await notifications(client, "B1")
        assert notification["status"] == "delivered" and notification["attempts"] == 2
