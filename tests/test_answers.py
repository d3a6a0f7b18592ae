"""Availability answers reused while nothing has changed (berth.services.answers): reused only
under the same change mark and for at most BERTH_ANSWER_CACHE_SECONDS; a commit by another
process (another Services on the same database) is seen on the very next request."""

from __future__ import annotations

import httpx
import pytest

from berth.app import create_app
from berth.container import Services, build_services
from berth.services.answers import AnswerCache
from berth.settings import Settings
from berth.store.database import Database
from tests.bookings_helpers import KAYAK, reservation, vacancies
from tests.conftest import Clock, auth

KAYAK_SLOT = "2026-06-06T18:00:00+01:00"


class Counting:
    """An answer computed afresh each time, counting how often."""

    def __init__(self) -> None:
        self.computed = 0

    async def __call__(self) -> bytes:
        self.computed += 1
        return f"answer {self.computed}".encode()


async def _commit_elsewhere(url: str) -> None:
    """A write by another process: its own engine and connections."""
    other = Database(url)
    try:
        async with other.transaction(write=True) as conn:
            from sqlalchemy import insert

            from berth.store.tables import rate_buckets

            await conn.execute(insert(rate_buckets).values(connection_id="elsewhere", tokens=1.0, at=0.0))
    finally:
        await other.dispose()


async def test_reused_until_a_commit_anywhere(services: Services, settings: Settings, clock: Clock) -> None:
    cache = AnswerCache(services.database, clock, seconds=5)
    compute = Counting()
    assert await cache.answer("q", compute) == b"answer 1"
    assert await cache.answer("q", compute) == b"answer 1"
    assert await cache.answer("other question", compute) == b"answer 2"
    await _commit_elsewhere(settings.database_url)
    assert await cache.answer("q", compute) == b"answer 3"
    assert await cache.answer("q", compute) == b"answer 3"
    assert compute.computed == 3


async def test_answers_of_an_older_mark_are_dropped_once_the_mark_moves(
    services: Services, settings: Settings, clock: Clock
) -> None:
    """They can never be served again: kept, they were memory a busy worker never used."""
    cache = AnswerCache(services.database, clock, seconds=5)
    compute = Counting()
    for question in range(10):
        await cache.answer(question, compute)
    assert cache.kept == 10
    await _commit_elsewhere(settings.database_url)
    assert await cache.answer("after", compute) == b"answer 11"
    assert cache.kept == 1


async def test_reused_for_at_most_its_seconds(services: Services, clock: Clock) -> None:
    cache = AnswerCache(services.database, clock, seconds=1)
    compute = Counting()
    await cache.answer("q", compute)
    clock.advance(seconds=0.9)
    assert await cache.answer("q", compute) == b"answer 1"
    clock.advance(seconds=0.1)
    assert await cache.answer("q", compute) == b"answer 2"
    clock.advance(seconds=-5)  # a clock set back: nothing kept from its future
    assert await cache.answer("q", compute) == b"answer 3"


async def test_errors_are_not_kept_and_zero_seconds_keeps_nothing(services: Services, clock: Clock) -> None:
    cache = AnswerCache(services.database, clock, seconds=5)

    async def failing() -> bytes:
        raise ValueError("no answer")

    with pytest.raises(ValueError):
        await cache.answer("q", failing)
    assert await cache.answer("q", Counting()) == b"answer 1"

    never = AnswerCache(services.database, clock, seconds=0)
    compute = Counting()
    await never.answer("q", compute)
    await never.answer("q", compute)
    assert compute.computed == 2


async def test_bounded(services: Services, clock: Clock) -> None:
    cache = AnswerCache(services.database, clock, seconds=5, max_answers=2)
    compute = Counting()
    for key in ("a", "b", "a", "c"):  # "a" used again, so "b" is the oldest when "c" comes
        await cache.answer(key, compute)
    assert await cache.answer("a", compute) == b"answer 1"
    assert await cache.answer("c", compute) == b"answer 3"
    assert await cache.answer("b", compute) == b"answer 4"


async def test_another_process_hold_is_seen_on_the_next_check(
    bookable: Services, settings: Settings, clock: Clock
) -> None:
    """Two servers on one database: a hold made through one shows in the other's very next
    availability answer, although that answer was just asked and kept."""
    other = build_services(settings, clock)
    try:
        first = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(services=bookable)), base_url="http://a"
        )
        second = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(services=other)), base_url="http://b"
        )
        async with first, second:
            before = await vacancies(first)
            assert await vacancies(first) == before  # asked twice: the second is the kept answer
            held = await second.post("/octo/bookings", json=reservation(("adult", "adult")), headers=auth())
            assert held.status_code == 200, held.text
            assert await vacancies(first) == before - 2
            cancelled = await second.delete(f"/octo/bookings/{held.json()['uuid']}", headers=auth())
            assert cancelled.status_code == 200, cancelled.text
            assert await vacancies(first) == before

            # The calendar too (the kayak: one departure a day)
            day = {**KAYAK, "localDateStart": KAYAK_SLOT[:10], "localDateEnd": KAYAK_SLOT[:10]}
            calendar = (await first.post("/octo/availability/calendar", json=day, headers=auth())).json()
            kayak = reservation(("paddler",), availability_id=KAYAK_SLOT, **KAYAK)
            held = await second.post("/octo/bookings", json=kayak, headers=auth())
            assert held.status_code == 200, held.text
            again = (await first.post("/octo/availability/calendar", json=day, headers=auth())).json()
            assert again[0]["vacancies"] == calendar[0]["vacancies"] - 1
    finally:
        await other.close()
