"""Limits on what one request or one connection may cost: body size, rate, run time, list sizes
and ranges, webhooks per connection. Each limit is exercised here through the HTTP API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import text

from berth.app import create_app
from berth.container import Services, build_services
from berth.domain.limits import Bucket, take_up_to
from berth.settings import Settings
from tests.berth_process import berth_serve
from tests.bookings_helpers import SLOT, reservation, reserve, vacancies
from tests.conftest import ADMIN, KEY_B, Clock, auth

# --- body size --------------------------------------------------------------------------------


async def test_a_body_over_the_limit_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    bookable.settings.max_body_bytes = 2000
    small = reservation(notes="x" * 100)
    assert (await client.post("/octo/bookings", json=small, headers=auth())).status_code == 200
    big = reservation(notes="x" * 3000)
    response = await client.post("/octo/bookings", json=big, headers=auth(capabilities="octo/pricing"))
    assert response.status_code == 400
    assert response.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "The request body is larger than the limit of 2000 bytes",
    }
    assert response.headers["Octo-Capabilities"] == "octo/pricing"
    assert response.headers["content-type"] == "application/json"
    assert await vacancies(client) == 18  # only the small reservation holds places


async def test_a_streamed_body_is_cut_off_once_past_the_limit(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """Without Content-Length (chunked), the bytes are counted as they arrive and reading stops
    at the first chunk past the limit."""
    bookable.settings.max_body_bytes = 1000
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for index in range(100):
            sent.append(index)
            yield b" " * 300

    response = await client.post(
        "/octo/bookings", content=chunks(), headers={**auth(), "Content-Type": "application/json"}
    )
    assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST"
    assert "larger than the limit of 1000 bytes" in response.json()["errorMessage"]
    assert len(sent) < 10

    async def fits() -> AsyncIterator[bytes]:
        body = httpx.Request("POST", "/", json=reservation()).content
        for start in range(0, len(body), 50):
            yield body[start : start + 50]

    streamed = await client.post(
        "/octo/bookings", content=fits(), headers={**auth(), "Content-Type": "application/json"}
    )
    assert streamed.status_code == 200, streamed.text


async def test_authentication_comes_before_the_body_limit(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    bookable.settings.max_body_bytes = 10
    response = await client.post(
        "/octo/bookings", json=reservation(), headers={"Authorization": "Bearer nope"}
    )
    assert response.json()["error"] == "UNAUTHORIZED"
    admin = await client.post("/admin/api/connections", json={"name": "a" * 50}, headers=ADMIN)
    assert admin.status_code == 400 and "larger than the limit" in admin.json()["errorMessage"]


# --- rate ----------------------------------------------------------------------------------------


async def test_rate_limit_per_connection(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    bookable.settings.rate_limit_per_minute = 3
    for _ in range(3):
        assert (await client.get("/octo/supplier", headers=auth())).status_code == 200
    refused = await client.post("/octo/bookings", json=reservation(), headers=auth(capabilities="octo/cart"))
    assert refused.status_code == 429
    assert refused.json() == {
        "error": "TOO_MANY_REQUESTS",
        "errorMessage": "Too many requests: this connection may send 3 a minute; retry in 20 s",
        "retryAfter": 20,
    }
    assert refused.headers["Retry-After"] == "20"
    assert refused.headers["Octo-Capabilities"] == "octo/cart"
    assert await vacancies_as(client, KEY_B) == 20  # the refused reservation held nothing
    # Another connection has its own allowance; requests without a valid key and staff calls
    # are not counted against anyone.
    assert (await client.get("/octo/supplier", headers=auth(KEY_B))).status_code == 200
    assert (await client.get("/octo/supplier", headers=auth("wrong-key"))).json()["error"] == "UNAUTHORIZED"
    for _ in range(5):
        assert (await client.get("/admin/api/connections", headers=ADMIN)).status_code == 200
    clock.advance(seconds=19)
    assert (await client.get("/octo/supplier", headers=auth())).json()["retryAfter"] == 1
    clock.advance(seconds=1)
    assert (await client.get("/octo/supplier", headers=auth())).status_code == 200
    bookable.settings.rate_limit_per_minute = 0  # off
    for _ in range(10):
        assert (await client.get("/octo/supplier", headers=auth())).status_code == 200


async def test_rate_limit_burst(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    bookable.settings.rate_limit_per_minute = 600
    bookable.settings.rate_limit_burst = 2
    statuses = [(await client.get("/octo/supplier", headers=auth())).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    clock.advance(seconds=1)  # 10 a second come back, but no more than the burst is saved up
    statuses = [(await client.get("/octo/supplier", headers=auth())).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


async def test_the_rate_limit_holds_across_processes(
    settings: Settings, clock: Clock, bookable: Services
) -> None:
    """Two service containers on one database stand for two API processes: together they let
    through what one would, though each takes a second's worth of tokens at a time."""
    settings.rate_limit_per_minute, settings.rate_limit_burst = 600, 25
    second = build_services(settings, clock)
    try:
        apps = [create_app(services=bookable), create_app(services=second)]
        statuses = []
        for number in range(40):
            transport = httpx.ASGITransport(app=apps[number % 2])
            async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as process:
                statuses.append((await process.get("/octo/supplier", headers=auth())).status_code)
        assert statuses.count(200) == 25 and set(statuses) == {200, 429}  # the burst, shared
        clock.advance(seconds=1)  # 10 more tokens a second, for both processes
        again = []
        for number in range(20):
            transport = httpx.ASGITransport(app=apps[number % 2])
            async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as process:
                again.append((await process.get("/octo/supplier", headers=auth())).status_code)
        assert again.count(200) == 10
    finally:
        await second.close()


@pytest.mark.parametrize(("limit", "expected"), [(None, [200] * 5), ("2", [200, 200, 429, 429, 429])])
def test_the_demo_has_no_limit_unless_one_is_set(
    tmp_path: Path, limit: str | None, expected: list[int]
) -> None:
    """`berth serve --demo` is for trying things out: no rate limit, unless the environment
    sets one, which then holds as anywhere else."""
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'berth.db'}"
    if limit is None:
        server = berth_serve(database_url, "--demo")
    else:
        server = berth_serve(database_url, "--demo", BERTH_RATE_LIMIT_PER_MINUTE=limit)
    with server as base:
        statuses = [
            httpx.get(f"{base}/octo/supplier", headers=auth(), timeout=10).status_code for _ in range(5)
        ]
    assert statuses == expected


async def vacancies_as(client: httpx.AsyncClient, key: str) -> int:
    response = await client.post(
        "/octo/availability",
        json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityIds": [SLOT]},
        headers=auth(key),
    )
    value: int = response.json()[0]["vacancies"]
    return value


@given(
    capacity=st.integers(1, 50),
    per_minute=st.integers(1, 6000),
    steps=st.lists(
        st.tuples(st.floats(0, 30, allow_nan=False), st.integers(1, 20)), min_size=1, max_size=200
    ),
)
def test_token_bucket_never_lets_more_through_than_capacity_plus_refill(
    capacity: int, per_minute: int, steps: list[tuple[float, int]]
) -> None:
    per_second = per_minute / 60
    bucket: Bucket | None = None
    now = 1000.0
    allowed = 0
    for gap, wanted in steps:
        now += gap
        before = bucket
        bucket, granted, wait = take_up_to(bucket, now, capacity, per_second, wanted)
        assert 0 <= bucket.tokens <= capacity and 0 <= granted <= wanted
        if granted:
            assert wait == 0
            allowed += granted
        else:
            # Refused only when less than a token is there, and waiting as told is enough.
            assert bucket.tokens < 1
            _, again, _ = take_up_to(bucket, now + wait + 1e-9, capacity, per_second)
            assert again == 1
            assert before is not None
    assert allowed <= capacity + (now - 1000.0) * per_second + 1e-6


@given(st.integers(1, 100), st.floats(0.01, 100))
def test_a_new_bucket_allows_a_full_burst(capacity: int, per_second: float) -> None:
    bucket = None
    for _ in range(capacity):
        bucket, granted, wait = take_up_to(bucket, 0.0, capacity, per_second)
        assert (granted, wait) == (1, 0)
    _, granted, wait = take_up_to(bucket, 0.0, capacity, per_second)
    assert granted == 0 and wait == pytest.approx(1 / per_second)


# --- run time ----------------------------------------------------------------------------------


@pytest.fixture
async def slow_app(client: httpx.AsyncClient) -> FastAPI:
    app: FastAPI = client._transport.app  # type: ignore[attr-defined]

    @app.get("/octo/_slow")
    async def slow() -> dict[str, Any]:
        await asyncio.sleep(30)
        return {}

    return app


async def test_a_request_that_runs_too_long_is_stopped(
    client: httpx.AsyncClient, bookable: Services, slow_app: FastAPI
) -> None:
    bookable.settings.request_timeout_seconds = 0.2
    loop = asyncio.get_running_loop()
    started = loop.time()
    response = await client.get("/octo/_slow", headers=auth(capabilities="octo/content"))
    assert loop.time() - started < 10
    assert response.status_code == 500
    assert response.json() == {
        "error": "INTERNAL_SERVER_ERROR",
        "errorMessage": "The request did not finish within 0.2 s and was stopped; repeat it to learn its outcome",
    }
    assert response.headers["Octo-Capabilities"] == "octo/content"


async def test_a_request_stuck_on_a_database_lock_is_stopped_and_leaves_nothing(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """Another transaction holds the bookings locked; a reservation waits for it, is stopped at
    the deadline, writes nothing, and the server serves the next request normally."""
    bookable.settings.request_timeout_seconds = 0.5
    async with bookable.database.transaction(write=True) as locker:
        if not bookable.database.is_sqlite:  # SQLite: the write transaction itself holds the lock
            await locker.execute(text("LOCK TABLE bookings IN ACCESS EXCLUSIVE MODE"))
        response = await client.post("/octo/bookings", json=reservation(), headers=auth())
        assert response.status_code == 500, response.text
        assert response.json()["error"] == "INTERNAL_SERVER_ERROR"
        assert "did not finish within 0.5 s" in response.json()["errorMessage"]
    bookable.settings.request_timeout_seconds = 30
    assert await vacancies(client) == 20
    held = await reserve(client)
    assert held["status"] == "ON_HOLD" and await vacancies(client) == 18


# --- list sizes and ranges ----------------------------------------------------------------------


async def test_booking_lists_are_bounded(client: httpx.AsyncClient, bookable: Services) -> None:
    bookable.settings.max_list_items = 2
    made = [await reserve(client, reservation(("adult",))) for _ in range(3)]

    async def listing(**params: Any) -> httpx.Response:
        return await client.get(
            "/octo/bookings", params={"localDate": "2026-06-02", **params}, headers=auth()
        )

    refused = await listing()
    assert refused.status_code == 400 and refused.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "More than 2 bookings match: narrow the filter, or page with limit and offset",
    }
    first, second = (await listing(limit=2)).json(), (await listing(limit=2, offset=2)).json()
    assert len(first) == 2 and sorted(b["uuid"] for b in first + second) == sorted(b["uuid"] for b in made)
    assert (await listing(limit=3)).json()["errorMessage"] == "limit must be at most 2"
    bookable.settings.max_list_items = 3
    assert len((await listing()).json()) == 3
    for params, message in (
        ({"localDateStart": "2026-06-01", "localDateEnd": "2027-06-02"}, "The range covers 367 days"),
        ({"localDateStart": "2026-06-03", "localDateEnd": "2026-06-02"}, "is before localDateStart"),
        ({"localDate": "2026-06-02", "limit": "0"}, "limit"),
        ({"localDate": "2026-06-02", "offset": "-1"}, "offset"),
    ):
        response = await client.get("/octo/bookings", params=params, headers=auth())
        assert response.status_code == 400 and message in response.json()["errorMessage"], response.json()
    year = await client.get(
        "/octo/bookings",
        params={"localDateStart": "2026-06-01", "localDateEnd": "2027-06-01"},
        headers=auth(),
    )
    assert len(year.json()) == 3


async def test_webhooks_per_connection_and_the_staff_list_are_bounded(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    bookable.settings.max_webhooks_per_connection = 2
    for index in range(2):
        created = await client.post(
            "/octo/webhooks",
            json={"event": "booking_update", "url": f"https://h.example/{index}"},
            headers=auth(),
        )
        assert created.status_code == 200
    refused = await client.post(
        "/octo/webhooks", json={"event": "booking_update", "url": "https://h.example/2"}, headers=auth()
    )
    assert refused.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "A connection may have at most 2 webhooks; delete one first",
    }
    other = await client.post(
        "/octo/webhooks", json={"event": "booking_update", "url": "https://h.example/b"}, headers=auth(KEY_B)
    )
    assert other.status_code == 200
    page = await client.get("/admin/api/webhooks", params={"limit": 2}, headers=ADMIN)
    assert len(page.json()) == 2 and page.headers["X-Total-Count"] == "3"
    rest = await client.get("/admin/api/webhooks", params={"limit": 2, "offset": 2}, headers=ADMIN)
    assert len(rest.json()) == 1
    assert {w["url"] for w in page.json() + rest.json()} == {
        "https://h.example/0",
        "https://h.example/1",
        "https://h.example/b",
    }
    too_many = await client.get("/admin/api/webhooks", params={"limit": 501}, headers=ADMIN)
    assert too_many.status_code == 400


async def test_the_nul_character_is_refused_everywhere(client: httpx.AsyncClient, bookable: Services) -> None:
    """PostgreSQL cannot store U+0000 in text: found by the fuzzer as a 500 on both APIs."""
    message = "The request contains the NUL character (U+0000), which no field accepts"
    for response in (
        await client.post("/octo/bookings", json=reservation(notes="a\x00b"), headers=auth()),
        await client.get("/octo/bookings", params={"resellerReference": "x\x00"}, headers=auth()),
        await client.get("/octo/bookings/a%00b", headers=auth()),
        await client.get("/admin/api/deliveries", params={"status": "\x00"}, headers=ADMIN),
        await client.post(
            "/octo/bookings",
            content=b'{"notes": "\\\\\\u0000"}',
            headers={**auth(), "Content-Type": "application/json"},
        ),
    ):
        assert response.status_code == 400 and response.json() == {
            "error": "BAD_REQUEST",
            "errorMessage": message,
        }
    literal = await reserve(client, reservation(notes="a backslash: \\u0000 is text here"))
    assert literal["notes"] == "a backslash: \\u0000 is text here"
    assert await vacancies(client) == 18
