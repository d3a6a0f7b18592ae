"""Availability answers reused while nothing they show has changed (berth.services.answers): a
commit that changes a product's places on a day drops the answers of that product and day, in
every process, on its very next request; other answers stay kept, for at most
BERTH_ANSWER_CACHE_SECONDS. Another process here is another engine on the same database, and,
once, another OS process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import insert, select

from berth.app import create_app
from berth.container import Services, build_services
from berth.services.answers import EVERY, AnswerCache, Reach
from berth.settings import Settings
from berth.store import availability_changes_repo
from berth.store.availability_changes_repo import KEEP_FOR
from berth.store.change_marks import EVERYTHING, READER_PATIENCE, Change
from berth.store.database import Database
from berth.store.tables import availability_changes, rate_buckets
from tests.bookings_helpers import KAYAK, MUSEUM, SLOT, TOUR, reservation, vacancies
from tests.conftest import START, Clock, auth

KAYAK_SLOT = "2026-06-06T18:00:00+01:00"


class Counting:
    """An answer computed afresh each time, counting how often."""

    def __init__(self) -> None:
        self.computed = 0

    async def __call__(self) -> bytes:
        self.computed += 1
        return f"answer {self.computed}".encode()


async def _commit_elsewhere(url: str, changes: Sequence[Change] = ()) -> None:
    """A write by another process (its own engine and connections): a row that changes no
    availability, and the availability changes given, as their writers record them."""
    other = Database(url)
    try:
        async with other.transaction(write=True) as conn:
            await conn.execute(
                insert(rate_buckets).values(connection_id=str(uuid.uuid4()), tokens=1.0, at=0.0)
            )
            await availability_changes_repo.record(conn, changes, START)
    finally:
        await other.dispose()


MUSEUM_JUNE = Reach(frozenset({"museum"}), "2026-06-01", "2026-06-30")
MUSEUM_JULY = Reach(frozenset({"museum"}), "2026-07-01", "2026-07-01")
CRUISE_DAY = Reach(frozenset({"cruise"}), "2026-06-02", "2026-06-02")
PACKAGE_DAY = Reach(frozenset({"package", "museum"}), "2026-06-02", "2026-06-02")


async def _ask_all(cache: AnswerCache, compute: Counting) -> dict[str, bytes]:
    answers = {}
    for name, reach in (
        ("museum june", MUSEUM_JUNE), ("museum july", MUSEUM_JULY),
        ("cruise", CRUISE_DAY), ("package", PACKAGE_DAY), ("anything", EVERY),
    ):  # fmt: skip
        answers[name] = await cache.answer(name, compute, reach)
    return answers


async def test_kept_until_a_commit_changes_its_product_on_one_of_its_days(
    services: Services, settings: Settings, clock: Clock
) -> None:
    cache = AnswerCache(services.database, clock, seconds=5)
    compute = Counting()
    first = await _ask_all(cache, compute)
    assert await _ask_all(cache, compute) == first and compute.computed == 5

    await _commit_elsewhere(settings.database_url)  # a commit that changes no places
    assert await _ask_all(cache, compute) == first and compute.computed == 5

    await _commit_elsewhere(settings.database_url, [("museum", "2026-06-02")])
    second = await _ask_all(cache, compute)
    redone = {name for name in first if second[name] != first[name]}
    assert redone == {"museum june", "package", "anything"}  # the museum's July and the cruise kept
    assert compute.computed == 8

    await _commit_elsewhere(settings.database_url, [("cruise", None)])  # every day of the cruise
    third = await _ask_all(cache, compute)
    assert {name for name in first if third[name] != second[name]} == {"cruise", "anything"}

    await _commit_elsewhere(settings.database_url, [EVERYTHING])
    fourth = await _ask_all(cache, compute)
    assert all(fourth[name] != third[name] for name in first)
    assert compute.computed == 15


async def test_answers_a_change_touches_are_dropped_at_once(
    services: Services, settings: Settings, clock: Clock
) -> None:
    """They can never be served again: kept, they were memory a busy worker never used."""
    cache = AnswerCache(services.database, clock, seconds=5)
    compute = Counting()
    for day in range(1, 11):
        await cache.answer(
            day, compute, Reach(frozenset({"museum"}), f"2026-06-{day:02}", f"2026-06-{day:02}")
        )
    await cache.answer("cruise", compute, CRUISE_DAY)
    assert cache.kept == 11
    await _commit_elsewhere(settings.database_url, [("museum", "2026-06-03"), ("museum", "2026-06-07")])
    await cache.answer("cruise", compute, CRUISE_DAY)
    assert cache.kept == 9
    await _commit_elsewhere(settings.database_url, [("museum", None)])
    await cache.answer("cruise", compute, CRUISE_DAY)
    assert cache.kept == 1 and compute.computed == 11


async def test_an_answer_computed_while_a_change_of_it_came_is_not_kept(
    services: Services, settings: Settings, clock: Clock
) -> None:
    """The change may have come too late for the answer: another request's look took it in
    while this one was being computed."""
    cache = AnswerCache(services.database, clock, seconds=5)
    other = Counting()

    def computing_while(changes: Sequence[Change]) -> Counting:
        class Racing(Counting):
            async def __call__(self) -> bytes:
                await _commit_elsewhere(settings.database_url, changes)
                await cache.answer("another request", other)  # its look finds the change
                return await super().__call__()

        return Racing()

    racing = computing_while([("museum", "2026-06-02")])
    await cache.answer("q", racing, MUSEUM_JUNE)
    await cache.answer("q", racing, MUSEUM_JUNE)
    assert racing.computed == 2  # the first was not kept

    elsewhere = computing_while([("cruise", "2026-06-02")])
    await cache.answer("r", elsewhere, MUSEUM_JUNE)
    assert await cache.answer("r", elsewhere, MUSEUM_JUNE) == b"answer 1"  # kept: not its change


async def test_a_reader_that_has_not_looked_for_long_counts_everything_as_changed(
    services: Services, settings: Settings
) -> None:
    look = await services.database.changes_since(None)
    assert look is not None and look.changes is None  # the first look: nothing can be told
    again = await services.database.changes_since(look.position)
    assert again is not None and again.changes == frozenset()
    await _commit_elsewhere(settings.database_url, [("museum", "2026-06-02"), ("museum", "2026-06-02")])
    changed = await services.database.changes_since(again.position)
    expected: frozenset[Change] = frozenset({("museum", "2026-06-02")})
    assert changed is not None and changed.changes == expected
    long_ago = replace(changed.position, at=time.monotonic() - READER_PATIENCE.total_seconds() - 1)
    stale = await services.database.changes_since(long_ago)
    assert stale is not None and stale.changes is None


async def test_the_sweep_drops_changes_older_than_every_reader_asks(
    services: Services, settings: Settings
) -> None:
    old, young = START - KEEP_FOR - timedelta(seconds=1), START - KEEP_FOR + timedelta(seconds=1)
    async with services.database.transaction(write=True) as conn:
        for at, product in ((old, "a"), (old, "b"), (young, "c"), (old, "d")):
            await availability_changes_repo.record(conn, [(product, "2026-06-02")], at)
    async with services.database.transaction(write=True) as conn:
        await availability_changes_repo.forget_old(conn, START)
    async with services.database.transaction(write=False) as conn:
        left = (await conn.execute(select(availability_changes.c.product_id))).scalars().all()
    assert left == ["c", "d"]  # from the first young row on, by id
    async with services.database.transaction(write=True) as conn:
        await availability_changes_repo.forget_old(conn, START + KEEP_FOR)
    async with services.database.transaction(write=False) as conn:
        assert (await conn.execute(select(availability_changes.c.id))).first() is None


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


async def test_a_value_is_read_again_only_once_everything_changed(
    services: Services, settings: Settings, clock: Clock
) -> None:
    """`until_everything_changes` (the catalogue the web shop's pages read): kept through
    commits that change some places or none, whatever the seconds, and read again after a
    commit of any process changed everything (a catalogue or a contract saved)."""
    cache = AnswerCache(services.database, clock, seconds=1)
    read = Counting()
    assert await cache.until_everything_changes("catalogue", read) == b"answer 1"
    await _commit_elsewhere(settings.database_url)
    await _commit_elsewhere(settings.database_url, [("museum", "2026-06-02"), ("cruise", None)])
    clock.advance(seconds=5)
    assert await cache.until_everything_changes("catalogue", read) == b"answer 1"
    await _commit_elsewhere(settings.database_url, [EVERYTHING])
    assert await cache.until_everything_changes("catalogue", read) == b"answer 2"
    assert await cache.until_everything_changes("catalogue", read) == b"answer 2"

    never = AnswerCache(services.database, clock, seconds=0)
    assert [await never.until_everything_changes("catalogue", read) for _ in range(2)] == [
        b"answer 3",
        b"answer 4",
    ]


async def test_bounded_dropping_the_oldest(services: Services, clock: Clock) -> None:
    cache = AnswerCache(services.database, clock, seconds=5, max_answers=2)
    compute = Counting()
    for key in ("a", "b", "a", "c"):  # "a" is the oldest when "c" comes, though asked again
        await cache.answer(key, compute)
    assert await cache.answer("b", compute) == b"answer 2"
    assert await cache.answer("c", compute) == b"answer 3"
    assert await cache.answer("a", compute) == b"answer 4"
    assert cache.kept == 2


async def test_bounded_by_bytes_too(services: Services, clock: Clock) -> None:
    """A process keeps at most `max_bytes` of answers: the oldest go first, and an answer
    bigger than the bound is not kept at all."""
    cache = AnswerCache(services.database, clock, seconds=5, max_bytes=250)
    sizes = {"a": 100, "b": 100, "c": 100, "huge": 300}
    computed: list[str] = []

    def of(key: str) -> Callable[[], Awaitable[bytes]]:
        async def compute() -> bytes:
            computed.append(key)
            return b"x" * sizes[key]

        return compute

    for key in ("a", "b", "c", "huge", "b", "c", "a", "huge"):
        await cache.answer(key, of(key))
    # "c" pushed "a" out; "huge" was never kept; "a" again pushed "b" out.
    assert computed == ["a", "b", "c", "huge", "a", "huge"]
    assert cache.kept == 2


def _client(services: Services, base_url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(services=services)), base_url=base_url
    )


async def test_another_process_hold_is_seen_on_the_next_check(
    bookable: Services, settings: Settings, clock: Clock
) -> None:
    """Two servers on one database: a hold made through one shows in the other's very next
    availability answer, although that answer was just asked and kept."""
    other = build_services(settings, clock)
    try:
        first, second = _client(bookable, "http://a"), _client(other, "http://b")
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


# Run by another OS process: books the given reservation through its own Berth (its own
# services and database connections) at the tests' clock, and prints the answer's status.
_BOOK_ELSEWHERE = """
import asyncio, json, sys
from datetime import datetime

import httpx

from berth.app import create_app
from berth.container import build_services
from berth.settings import Settings


async def main() -> None:
    url, now, body, key = sys.argv[1], datetime.fromisoformat(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
    services = build_services(Settings(database_url=url, log_level="WARNING", rate_limit_per_minute=0), lambda: now)
    try:
        transport = httpx.ASGITransport(app=create_app(services=services))
        async with httpx.AsyncClient(transport=transport, base_url="http://elsewhere") as client:
            answer = await client.post("/octo/bookings", json=body, headers={"Authorization": f"Bearer {key}"})
        print(answer.status_code, answer.json().get("status") or answer.text)
    finally:
        await services.close()


asyncio.run(main())
"""


def _book_in_another_process(settings: Settings, clock: Clock, body: dict[str, object]) -> str:
    key = auth()["Authorization"].removeprefix("Bearer ")
    done = subprocess.run(
        [sys.executable, "-c", _BOOK_ELSEWHERE, settings.database_url, clock().isoformat(), json.dumps(body), key],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def test_another_os_process_books_the_last_place_and_the_next_read_here_says_sold_out(
    bookable: Services, settings: Settings, clock: Clock
) -> None:
    async with _client(bookable, "http://here") as client:
        left = await vacancies(client)
        while left > 1:  # all but one place, in parties the option allows
            party = min(left - 1, 10)
            held = await client.post("/octo/bookings", json=reservation(("adult",) * party), headers=auth())
            assert held.status_code == 200, held.text
            left -= party

        ask = {**TOUR, "availabilityIds": [SLOT]}
        before = (await client.post("/octo/availability", json=ask, headers=auth())).json()[0]
        assert (before["status"], before["vacancies"]) == ("LIMITED", 1)
        assert (await client.post("/octo/availability", json=ask, headers=auth())).json()[0] == before
        assert bookable.answers.kept == 1  # kept: the next read reuses it unless told

        assert _book_in_another_process(settings, clock, reservation(("adult",))) == "200 ON_HOLD"

        after = (await client.post("/octo/availability", json=ask, headers=auth())).json()[0]
        assert (after["status"], after["vacancies"], after["available"]) == ("SOLD_OUT", 0, False)


async def test_a_booking_leaves_the_other_products_answers_kept(
    bookable: Services, settings: Settings, clock: Clock
) -> None:
    """Two servers on one database: a hold on the tour, made through the second, drops the
    first's kept answer of the tour and keeps its answer of the museum."""
    other = build_services(settings, clock)
    try:
        first, second = _client(bookable, "http://a"), _client(other, "http://b")
        museum = {**MUSEUM, "localDateStart": SLOT[:10], "localDateEnd": SLOT[:10]}
        async with first, second:
            tour = await vacancies(first)
            seen = (await first.post("/octo/availability", json=museum, headers=auth())).json()
            assert bookable.answers.kept == 2
            held = await second.post("/octo/bookings", json=reservation(("adult",)), headers=auth())
            assert held.status_code == 200, held.text
            assert (await first.post("/octo/availability", json=museum, headers=auth())).json() == seen
            assert bookable.answers.kept == 1  # the museum's, reused; the tour's was dropped
            assert await vacancies(first) == tour - 1
            assert bookable.answers.kept == 2
    finally:
        await other.close()
