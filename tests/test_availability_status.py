from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.availability import SELLABLE, AvailabilityStatus, SlotState, day_state, slot_state
from berth.domain.slots import Slot

AVAILABLE = AvailabilityStatus.AVAILABLE
LIMITED = AvailabilityStatus.LIMITED
SOLD_OUT = AvailabilityStatus.SOLD_OUT
FREESALE = AvailabilityStatus.FREESALE
CLOSED = AvailabilityStatus.CLOSED

NOW = datetime(2026, 7, 1, 8, 0, tzinfo=UTC)
START = datetime(2026, 7, 1, 10, 0, tzinfo=ZoneInfo("Europe/London"))


def make_slot(
    capacity: int | None, *, closed: bool = False, cutoff: datetime = NOW + timedelta(hours=1)
) -> Slot:
    return Slot(
        id="2026-07-01T10:00:00+01:00",
        local_date=date(2026, 7, 1),
        start=START,
        end=START + timedelta(hours=1),
        all_day=False,
        opening_hours=(),
        capacity=capacity,
        closed=closed,
        cutoff_utc=cutoff,
    )


def summary(state: SlotState) -> tuple[AvailabilityStatus, bool, int | None, int | None]:
    return (state.status, state.available, state.vacancies, state.capacity)


# --- one slot ---------------------------------------------------------------------------------


def test_an_empty_slot_is_available() -> None:
    assert summary(slot_state(make_slot(10), 0, NOW)) == (AVAILABLE, True, 10, 10)


def test_limited_below_half_of_the_capacity() -> None:
    # Exactly half remaining is still AVAILABLE; one less is LIMITED.
    assert summary(slot_state(make_slot(10), 5, NOW)) == (AVAILABLE, True, 5, 10)
    assert summary(slot_state(make_slot(10), 6, NOW)) == (LIMITED, True, 4, 10)
    assert summary(slot_state(make_slot(10), 9, NOW)) == (LIMITED, True, 1, 10)
    # Odd capacity: 5 of 9 is more than half, 4 of 9 is less.
    assert slot_state(make_slot(9), 4, NOW).status is AVAILABLE
    assert slot_state(make_slot(9), 5, NOW).status is LIMITED
    assert slot_state(make_slot(1), 0, NOW).status is AVAILABLE


def test_sold_out_when_nothing_remains() -> None:
    assert summary(slot_state(make_slot(10), 10, NOW)) == (SOLD_OUT, False, 0, 10)
    # Held beyond capacity (capacity lowered after sales): vacancies never go negative.
    assert summary(slot_state(make_slot(10), 13, NOW)) == (SOLD_OUT, False, 0, 10)
    assert summary(slot_state(make_slot(0), 0, NOW)) == (SOLD_OUT, False, 0, 0)


def test_sold_out_when_the_request_does_not_fit() -> None:
    assert summary(slot_state(make_slot(10), 7, NOW, requested=3)) == (LIMITED, True, 3, 10)
    assert summary(slot_state(make_slot(10), 7, NOW, requested=4)) == (SOLD_OUT, False, 3, 10)
    assert summary(slot_state(make_slot(10), 0, NOW, requested=10)) == (AVAILABLE, True, 10, 10)
    assert summary(slot_state(make_slot(10), 0, NOW, requested=11)) == (SOLD_OUT, False, 10, 10)
    assert summary(slot_state(make_slot(10), 10, NOW, requested=0)) == (SOLD_OUT, False, 0, 10)
    assert summary(slot_state(make_slot(10), 2, NOW, requested=0)) == (AVAILABLE, True, 8, 10)


def test_a_freesale_slot_never_sells_out() -> None:
    assert summary(slot_state(make_slot(None), 0, NOW)) == (FREESALE, True, None, None)
    assert summary(slot_state(make_slot(None), 10_000, NOW, requested=500)) == (FREESALE, True, None, None)


def test_closed_dates_close_the_slot() -> None:
    assert summary(slot_state(make_slot(10, closed=True), 0, NOW)) == (CLOSED, False, 0, 10)
    assert summary(slot_state(make_slot(10, closed=True), 12, NOW, requested=1)) == (CLOSED, False, 0, 10)
    assert summary(slot_state(make_slot(None, closed=True), 0, NOW)) == (CLOSED, False, 0, None)


def test_the_sales_cutoff_closes_the_slot() -> None:
    slot = make_slot(10, cutoff=NOW)
    assert summary(slot_state(slot, 0, NOW)) == (CLOSED, False, 0, 10)
    assert summary(slot_state(slot, 0, NOW + timedelta(days=1))) == (CLOSED, False, 0, 10)
    assert summary(slot_state(slot, 0, NOW - timedelta(seconds=1))) == (AVAILABLE, True, 10, 10)
    # Any aware `now` compares by instant: 09:00 in London is 08:00 UTC, the cutoff itself.
    assert slot_state(slot, 0, datetime(2026, 7, 1, 9, 0, tzinfo=ZoneInfo("Europe/London"))).status is CLOSED
    assert slot_state(make_slot(None, cutoff=NOW), 0, NOW).status is CLOSED


# --- one day ----------------------------------------------------------------------------------


def state(status: AvailabilityStatus, vacancies: int | None, capacity: int | None) -> SlotState:
    return SlotState(status, status in SELLABLE, vacancies, capacity)


def test_a_day_without_slots_is_closed() -> None:
    assert summary(day_state([])) == (CLOSED, False, 0, 0)


def test_a_day_of_closed_slots_is_closed() -> None:
    closed = [state(CLOSED, 0, 10), state(CLOSED, 0, None), state(CLOSED, 0, 25)]
    assert summary(day_state(closed)) == (CLOSED, False, 0, 25)
    assert summary(day_state([state(CLOSED, 0, None)])) == (CLOSED, False, 0, 0)


def test_closed_slots_do_not_count_when_others_operate() -> None:
    day = [state(CLOSED, 0, 50), state(SOLD_OUT, 0, 10), state(SOLD_OUT, 0, 12)]
    assert summary(day_state(day)) == (SOLD_OUT, False, 0, 12)
    assert summary(day_state([state(CLOSED, 0, None), state(LIMITED, 2, 10)])) == (LIMITED, True, 2, 10)


def test_the_best_slot_gives_the_status_and_maxima_the_numbers() -> None:
    day = [state(SOLD_OUT, 0, 30), state(LIMITED, 4, 20), state(LIMITED, 3, 10)]
    assert summary(day_state(day)) == (LIMITED, True, 4, 30)
    day = [state(LIMITED, 9, 40), state(AVAILABLE, 6, 10), state(SOLD_OUT, 0, 5)]
    assert summary(day_state(day)) == (AVAILABLE, True, 9, 40)


def test_any_freesale_slot_makes_the_day_freesale() -> None:
    day = [state(SOLD_OUT, 0, 10), state(FREESALE, None, None), state(AVAILABLE, 8, 10)]
    assert summary(day_state(day)) == (FREESALE, True, None, None)
    assert summary(day_state([state(CLOSED, 0, None), state(SOLD_OUT, 0, 4)])) == (SOLD_OUT, False, 0, 4)


def test_a_day_of_real_slot_states() -> None:
    states = [
        slot_state(make_slot(10), 10, NOW),
        slot_state(make_slot(10), 7, NOW),
        slot_state(make_slot(10, closed=True), 0, NOW),
    ]
    assert summary(day_state(states)) == (LIMITED, True, 3, 10)


# --- properties -------------------------------------------------------------------------------

slot_inputs = st.tuples(
    st.none() | st.integers(0, 60),  # capacity
    st.booleans(),  # closed date
    st.integers(-120, 120),  # minutes from the sales cutoff to now
    st.integers(0, 100),  # held
    st.none() | st.integers(0, 80),  # requested
)


def state_of(inputs: tuple[int | None, bool, int, int, int | None]) -> SlotState:
    capacity, closed, minutes, held, requested = inputs
    slot = make_slot(capacity, closed=closed, cutoff=NOW + timedelta(minutes=minutes))
    return slot_state(slot, held, NOW, requested)


def assert_consistent(result: SlotState) -> None:
    assert result.available == (result.status in SELLABLE)
    assert (result.vacancies is None) == (result.status is FREESALE)
    if result.capacity is None:
        assert result.status in {FREESALE, CLOSED}
    if result.vacancies is not None and result.capacity is not None:
        assert 0 <= result.vacancies <= result.capacity


@given(slot_inputs)
def test_slot_states_are_consistent(inputs: tuple[int | None, bool, int, int, int | None]) -> None:
    result = state_of(inputs)
    capacity, closed, minutes, held, requested = inputs
    assert_consistent(result)
    assert (result.status is CLOSED) == (closed or minutes <= 0)
    assert (result.status is FREESALE) == (result.status is not CLOSED and capacity is None)
    if result.status is CLOSED:
        assert (result.vacancies, result.capacity) == (0, capacity)
    if result.status in {AVAILABLE, LIMITED}:
        assert result.vacancies is not None
        assert result.vacancies > 0
        assert requested is None or result.vacancies >= requested
        assert result.vacancies == (capacity or 0) - held


@given(st.lists(slot_inputs, max_size=6))
def test_day_states_are_consistent(inputs: list[tuple[int | None, bool, int, int, int | None]]) -> None:
    states = [state_of(i) for i in inputs]
    result = day_state(states)
    assert_consistent(result)
    operating = [s for s in states if s.status is not CLOSED]
    assert (result.status is CLOSED) == (not operating)
    assert result.available == any(s.available for s in states)
    if result.status in {AVAILABLE, LIMITED, SOLD_OUT}:
        assert result.vacancies == max(s.vacancies or 0 for s in operating)
