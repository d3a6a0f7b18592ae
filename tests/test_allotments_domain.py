"""The allotment arithmetic (domain.allotments) against the issue's own formula and against a
brute-force model: what a connection sees is exactly what it may book, and a run of bookings
that each pass the check never sells more than the departure holds, never sells a block's
places to anyone else before its release, and never refuses a connection its block's places."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.allotments import Allotment, AllotmentBook, Block, StopSell, reserved_for, seen_with
from berth.domain.availability import AvailabilityStatus, slot_state
from berth.domain.slots import Slot

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
LONDON = ZoneInfo("Europe/London")
PARTIES = ("a", "b", "c", "box-office")


def departure(capacity: int | None, start: datetime | None = None) -> Slot:
    start = start or datetime(2026, 6, 3, 10, 0, tzinfo=LONDON)
    return Slot(
        id=start.isoformat(),
        local_date=start.date(),
        start=start,
        end=start + timedelta(hours=1),
        all_day=False,
        opening_hours=(),
        capacity=capacity,
        closed=False,
        cutoff_utc=start.astimezone(UTC),
    )


blocks_st = st.dictionaries(
    st.sampled_from(PARTIES[:3]),
    st.tuples(st.integers(1, 15), st.booleans()),  # places, released
    max_size=3,
)
holdings_st = st.dictionaries(st.sampled_from(PARTIES), st.integers(0, 20), max_size=4)


def as_blocks(spec: dict[str, tuple[int, bool]]) -> list[Block]:
    return [
        Block(party, places, NOW - timedelta(hours=1) if released else NOW + timedelta(hours=1))
        for party, (places, released) in spec.items()
    ]


def issue_formula(capacity: int, blocks: list[Block], holdings: dict[str, int], viewer: str) -> int:
    """The issue's words: general pool plus the viewer's own unused block."""
    live = {b.connection_id: b.places for b in blocks if b.release_at > NOW}
    pool = (
        capacity
        - sum(live.values())
        - sum(max(holdings.get(k, 0) - a, 0) for k, a in live.items())
        - sum(h for k, h in holdings.items() if k not in live)
    )
    own = max(live[viewer] - holdings.get(viewer, 0), 0) if viewer in live else 0
    return max(pool + own, 0)


def fits(capacity: int, blocks: list[Block], holdings: dict[str, int], party: str, pax: int) -> bool:
    """The writer's check under the lock: everything held, the new places, and the others'
    unused blocks fit in the departure."""
    held = sum(holdings.values())
    return held + pax + reserved_for(party, blocks, holdings, NOW) <= capacity


@given(st.integers(0, 40), blocks_st, holdings_st, st.sampled_from(PARTIES))
def test_what_a_connection_sees_is_the_issues_formula_and_what_it_may_book(
    capacity: int, spec: dict[str, tuple[int, bool]], holdings: dict[str, int], viewer: str
) -> None:
    blocks = as_blocks(spec)
    held = sum(holdings.values())
    state = seen_with(
        slot_state(departure(capacity), held, NOW), reserved_for(viewer, blocks, holdings, NOW), None
    )
    assert state.vacancies == issue_formula(capacity, blocks, holdings, viewer)
    # Brute force: the largest party the writer's check lets this viewer book.
    bookable = max((p for p in range(capacity + 1) if fits(capacity, blocks, holdings, viewer, p)), default=0)
    assert state.vacancies == bookable
    assert (state.status is AvailabilityStatus.SOLD_OUT) == (bookable == 0)


@given(
    st.integers(0, 30),
    blocks_st,
    st.lists(st.tuples(st.sampled_from(PARTIES), st.integers(1, 6)), max_size=40),
)
def test_a_run_of_checked_bookings_keeps_every_promise(
    capacity: int, spec: dict[str, tuple[int, bool]], attempts: list[tuple[str, int]]
) -> None:
    blocks = as_blocks(spec)
    live = {b.connection_id: b.places for b in blocks if b.release_at > NOW}
    # A supplier cannot promise more than the departure holds: the model starts from a sane one.
    if sum(live.values()) > capacity:
        return
    holdings: dict[str, int] = {}
    for party, pax in attempts:
        unused_own = max(live.get(party, 0) - holdings.get(party, 0), 0)
        if fits(capacity, blocks, holdings, party, pax):
            holdings[party] = holdings.get(party, 0) + pax
        else:
            assert pax > unused_own, "a connection was refused places its block still had"
        assert sum(holdings.values()) <= capacity
        # Every unreleased block's unused places are still free.
        unused = sum(max(a - holdings.get(k, 0), 0) for k, a in live.items())
        assert sum(holdings.values()) + unused <= capacity


def test_a_departure_sold_out_to_the_public_is_available_to_the_block_holder() -> None:
    blocks = [Block("b", 10, NOW + timedelta(hours=48))]
    state = slot_state(departure(20), 10, NOW)
    public = seen_with(state, reserved_for("a", blocks, {"a": 10}, NOW), None)
    own = seen_with(state, reserved_for("b", blocks, {"a": 10}, NOW), None)
    assert (public.status, public.vacancies, public.capacity) == (AvailabilityStatus.SOLD_OUT, 0, 10)
    assert (own.status, own.vacancies, own.capacity) == (AvailabilityStatus.AVAILABLE, 10, 20)
    # Released early, the block is everyone's.
    early = seen_with(state, reserved_for("a", blocks, {"a": 10}, NOW, frozenset({"b"})), None)
    assert early.vacancies == 10


def test_closed_and_freesale_departures_are_as_they_are() -> None:
    closed = slot_state(departure(20), 0, departure(20).cutoff_utc)
    assert seen_with(closed, 5, None) == closed
    freesale = slot_state(departure(None), 0, NOW)
    assert seen_with(freesale, 5, None) == freesale


def test_which_departures_a_block_covers_and_when_it_releases() -> None:
    allotment = Allotment.model_validate(
        {
            "product": "cruise",
            "option": "DEFAULT",
            "from": "2026-06-01",
            "until": "2026-06-30",
            "weekdays": ["WED"],
            "startTimes": ["10:00"],
            "places": 10,
            "releaseHours": 48,
        }
    )
    wednesday_ten = departure(20, datetime(2026, 6, 3, 10, 0, tzinfo=LONDON))
    assert allotment.covers("cruise", "DEFAULT", wednesday_ten)
    assert not allotment.covers("cruise", "EVENING", wednesday_ten)
    assert not allotment.covers("museum", "DEFAULT", wednesday_ten)
    assert not allotment.covers(
        "cruise", "DEFAULT", departure(20, datetime(2026, 6, 3, 14, 0, tzinfo=LONDON))
    )
    assert not allotment.covers(
        "cruise", "DEFAULT", departure(20, datetime(2026, 6, 4, 10, 0, tzinfo=LONDON))
    )
    assert not allotment.covers(
        "cruise", "DEFAULT", departure(20, datetime(2026, 7, 1, 10, 0, tzinfo=LONDON))
    )
    assert allotment.release_at(wednesday_ten) == datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    book = AllotmentBook([("b", [allotment, allotment.model_copy(update={"places": 3})]), ("c", [])])
    assert book.blocks("cruise", "DEFAULT", wednesday_ten) == (
        Block("b", 10, datetime(2026, 6, 1, 9, 0, tzinfo=UTC)),
    )
    assert not book.has_blocks("museum")


def test_stop_sells_cover_their_products_options_and_dates() -> None:
    everything = StopSell.model_validate({"from": "2026-06-02", "until": "2026-06-02", "reason": "unpaid"})
    assert everything.covers("any", "DEFAULT", date(2026, 6, 2))
    assert not everything.covers("any", "DEFAULT", date(2026, 6, 3))
    one = StopSell.model_validate({"product": "cruise", "option": "EVENING"})
    assert one.covers("cruise", "EVENING", date(2030, 1, 1))
    assert not one.covers("cruise", "DEFAULT", date(2030, 1, 1))
    with pytest.raises(ValueError, match="without its product"):
        StopSell.model_validate({"option": "EVENING"})
