"""What a contract save changes of departures (domain.contract_views), and who hears of a
departure announced several times (domain.webhooks.Audience): pure, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.allotments import Block, StopSell
from berth.domain.availability import AvailabilityStatus, SlotState
from berth.domain.connections import Connection
from berth.domain.contract_views import Touched, seen, terms_of, touched
from berth.domain.contracts import Contract
from berth.domain.webhooks import Audience
from tests.bookings_helpers import booking_catalog
from tests.rentals_helpers import BIKES, rentals_catalog

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)  # 09:00 in London
CATALOG = booking_catalog()
CRUISE, MUSEUM = "thames-sightseeing", "tower-of-stories"


def contract(**fields: object) -> Contract:
    return Contract.model_validate(fields)


def ids(found: list[Touched], option: str = "DEFAULT") -> dict[str, list[str]]:
    return {t.product.id: [s.id for s in t.slots] for t in found if t.option.id == option}


def test_the_same_terms_touch_nothing_and_no_departure_is_read() -> None:
    stopping = contract(
        stopSells=[{"product": CRUISE}], allotments=[{"product": CRUISE, "places": 2, "releaseHours": 1}]
    )
    assert touched(CATALOG, "b", stopping, stopping, NOW, 366) == []
    assert touched(CATALOG, "b", contract(notes="x"), contract(paymentTerms="PREPAID"), NOW, 366) == []


def test_a_stop_sell_touches_the_departures_it_covers_on_the_days_ahead_not_over() -> None:
    whole_cruise = contract(stopSells=[{"product": CRUISE, "until": "2026-06-02"}])
    found = touched(CATALOG, "b", contract(), whole_cruise, NOW, 366)
    # Today's 10:00 is not over at 09:00; the evening option runs THU-SAT only (none until Tuesday).
    assert ids(found) == {
        CRUISE: [f"2026-06-0{d}T{t}:00+01:00" for d in (1, 2) for t in ("10:00", "12:00", "14:00", "16:00")]
    }
    assert ids(found, "evening") == {}
    later = NOW + timedelta(hours=2)  # 11:00 in London: today's 10:00 is over
    assert (
        ids(touched(CATALOG, "b", contract(), whole_cruise, later, 366))[CRUISE][0]
        == "2026-06-01T12:00:00+01:00"
    )
    # Two days: today and tomorrow, whatever the stop-sell covers past them.
    forever = contract(stopSells=[{"product": MUSEUM}])
    days = [s.local_date.isoformat() for s in touched(CATALOG, "b", contract(), forever, NOW, 2)[0].slots]
    assert days == ["2026-06-01", "2026-06-02"]


def test_a_stop_sell_on_what_is_sold_only_before_or_after_touches_nothing() -> None:
    """Starting or stopping to sell a product is a product_update, not an availability_update."""
    museum_only = contract(products=[{"product": MUSEUM}])
    stopped_cruise = contract(
        products=[{"product": MUSEUM}, {"product": CRUISE}], stopSells=[{"product": CRUISE}]
    )
    assert touched(CATALOG, "b", museum_only, stopped_cruise, NOW, 30) == []
    assert touched(CATALOG, "b", None, contract(stopSells=[{"product": CRUISE}]), NOW, 30) == []


def test_a_block_touches_the_departures_where_it_differs() -> None:
    block = {"product": CRUISE, "option": "DEFAULT", "startTimes": ["10:00"], "places": 4, "releaseHours": 0}
    before = contract(allotments=[block])
    after = contract(allotments=[{**block, "places": 5, "from": "2026-06-03"}])
    found = ids(touched(CATALOG, "b", before, after, NOW, 4))
    # Until 06-02 the block is gone (it differs), from 06-03 it has five places (it differs).
    assert found == {CRUISE: [f"2026-06-0{d}T10:00:00+01:00" for d in (1, 2, 3, 4)]}
    same_first = contract(allotments=[block, {**block, "places": 9}])  # a connection's first block wins
    assert touched(CATALOG, "b", before, same_first, NOW, 4) == []


def test_a_block_left_on_a_rental_option_touches_nothing() -> None:
    """A rental option is rented by duration: a block on it holds nothing (AllotmentService)."""
    rentals = rentals_catalog()
    bikes = contract(allotments=[{"product": BIKES["productId"], "places": 2, "releaseHours": 1}])
    assert touched(rentals, "b", contract(), bikes, NOW, 30) == []
    stop = contract(stopSells=[{"product": BIKES["productId"], "until": "2026-06-01"}])
    assert {t.option.id for t in touched(rentals, "b", contract(), stop, NOW, 30)} == {"DEFAULT", "ebike"}


def test_a_contract_applies_while_its_connection_is_active_and_it_is_in_force() -> None:
    june = contract(validFrom="2026-06-01", validUntil="2026-06-30")
    active = Connection("b", "B", "…b", NOW, None)
    assert terms_of(active, june, NOW.date()) is june
    assert terms_of(active, june, NOW.date() + timedelta(days=30)) is None
    assert terms_of(Connection("b", "B", "…b", NOW, NOW), june, NOW.date()) is None


def test_seen_closes_to_the_stopped_viewer_and_takes_the_others_unused_blocks() -> None:
    state = SlotState(AvailabilityStatus.AVAILABLE, True, 17, 20)  # 3 of 20 held
    blocks = (Block("b", 10, NOW + timedelta(days=1)),)
    at = (CRUISE, "DEFAULT", NOW.date())
    stop = (StopSell(product=CRUISE),)
    assert seen(state, "a", (), blocks, {"b": 4}, NOW, frozenset(), at).vacancies == 17 - 6
    assert seen(state, "b", (), blocks, {"b": 4}, NOW, frozenset(), at) == state
    assert seen(state, "b", stop, blocks, {}, NOW, frozenset(), at).status is AvailabilityStatus.CLOSED
    assert seen(state, "a", (), blocks, {}, NOW, frozenset({"b"}), at) == state  # released early


def test_an_audience_is_whoever_one_announcement_is_for() -> None:
    audience = Audience()
    audience.add({"onlyFor": ["b"]})
    assert [audience.includes(c) for c in "abc"] == [False, True, False]
    audience.add({"unchangedFor": ["a", "b"]})
    assert [audience.includes(c) for c in "abc"] == [False, True, True]
    audience.add({"unchangedFor": ["a"]})
    assert [audience.includes(c) for c in "abc"] == [False, True, True]
    audience.add({})
    assert [audience.includes(c) for c in "abc"] == [True, True, True]


@given(st.lists(st.one_of(
    st.builds(lambda c: {"onlyFor": sorted(c)}, st.sets(st.sampled_from("abcd"))),
    st.builds(lambda c: {"unchangedFor": sorted(c)}, st.sets(st.sampled_from("abcd"))),
), min_size=1))  # fmt: skip
def test_an_audience_is_the_union_of_its_announcements(announcements: list[dict[str, list[str]]]) -> None:
    audience = Audience()
    for announcement in announcements:
        audience.add(announcement)
    for connection in "abcd":
        for_it = [
            connection in a["onlyFor"] if "onlyFor" in a else connection not in a["unchangedFor"]
            for a in announcements
        ]
        assert audience.includes(connection) == any(for_it)
