"""The allocation engine (berth.domain.resources), pure: seat choice, resource choice under
the split rules, availability of resource-based slots. Property-tested with hypothesis."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.domain.availability import AvailabilityStatus
from berth.domain.catalog import (
    CountBy,
    Option,
    Resource,
    ResourceGroup,
    Schedule,
    Seat,
    SeatMap,
    ServiceRule,
    Unit,
    UnitType,
)
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.resources import (
    NO_USE,
    Allocation,
    Party,
    ResourceUse,
    SeatLayout,
    allocate,
    can_allocate,
    choose_seats,
    demand,
    free_places,
    free_seats,
    group_label,
    layout_of,
    natural_key,
    resource_slot_state,
    serves,
    together_in_a_row,
)
from berth.domain.slots import Slot, slots_between
from tests.test_slots import make_product

COLUMNS = "ABCDEF"
DAY = date(2026, 6, 2)  # a Tuesday
NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
ADULT = Unit(id="adult", internal_name="Adult", type=UnitType.ADULT)


def grid(rows: int, columns: int, blocked: tuple[str, ...] = ()) -> SeatMap:
    seats = tuple(
        Seat(id=f"{r}{COLUMNS[c]}", row=str(r), column=COLUMNS[c])
        for r in range(1, rows + 1)
        for c in range(columns)
    )
    return SeatMap(seats=seats, blocked=blocked)


def option_with(*groups: ResourceGroup, start_times: tuple[str, ...] = ("10:00",)) -> Option:
    return Option(
        id="DEFAULT",
        internal_name="Trip",
        units=(ADULT,),
        schedules=(Schedule(start_times=start_times, capacity=None),),
        resource_groups=groups,
    )


def slot_of(option: Option, clock: str = "10:00") -> Slot:
    product = make_product(option)
    return next(s for s in slots_between(product, option, DAY, DAY) if s.start.strftime("%H:%M") == clock)


def seated(resource_id: str, rows: int, columns: int, blocked: tuple[str, ...] = ()) -> Resource:
    return Resource(id=resource_id, title=resource_id.title(), seat_map=grid(rows, columns, blocked))


def plain(resource_id: str, capacity: int) -> Resource:
    return Resource(id=resource_id, title=resource_id.title(), capacity=capacity)


def group(
    group_id: str,
    *resources: Resource,
    split: bool = False,
    required: bool = True,
    count_by: CountBy = CountBy.PAX,
) -> ResourceGroup:
    return ResourceGroup(
        id=group_id,
        title=group_id.title(),
        split=split,
        required=required,
        count_by=count_by,
        resources=resources,
    )


# --- seat layouts and seat choice --------------------------------------------------------------


def test_rows_and_columns_sort_naturally() -> None:
    seats = tuple(Seat(id=f"{r}{c}", row=r, column=c) for r in ("10", "2", "1") for c in ("B", "A"))
    layout = layout_of(SeatMap(seats=seats))
    assert [row for row, _ in layout.rows] == ["1", "2", "10"]
    assert layout.rows[0][1] == ("1A", "1B")
    assert natural_key("2") < natural_key("10") < natural_key("A")


def test_a_party_sits_together_in_the_tightest_run() -> None:
    layout = layout_of(grid(3, 4))
    # Row 1: A B free, C taken, D free; row 2 all free; row 3: A taken, B C D free.
    free = layout.bookable - {"1C", "3A"}
    assert choose_seats(layout, free, 2) == ("1A", "1B")  # the run of exactly two
    assert choose_seats(layout, free, 3) == ("3B", "3C", "3D")  # a run of three beats row 2's four
    assert choose_seats(layout, free, 4) == ("2A", "2B", "2C", "2D")
    assert choose_seats(layout, free, 1) == ("1D",)  # a lone seat first: runs stay whole


def test_a_big_party_takes_adjacent_rows() -> None:
    layout = layout_of(grid(4, 4))
    free = layout.bookable - {"2B", "2C"}  # row 2 is broken up
    # Two rows either way; rows 3-4 give two pieces (4 + 2), rows 1-2 three (4 + 1 + 1).
    assert choose_seats(layout, free, 6) == ("3A", "3B", "3C", "3D", "4A", "4B")
    taken_front = layout.bookable - {"1A", "1B", "1C", "1D", "2A", "2B"}
    assert choose_seats(layout, taken_front, 6) == ("2C", "2D", "3A", "3B", "3C", "3D")


def test_kept_seats_stay_when_the_party_does_not_grow() -> None:
    layout = layout_of(grid(2, 4))
    assert choose_seats(layout, layout.bookable, 2, keep=("2C", "2D", "2B")) == ("2B", "2C")
    # A kept seat someone else has now: chosen afresh.
    assert choose_seats(layout, layout.bookable - {"2C"}, 2, keep=("2C", "2D")) == ("2A", "2B")


def _rows_of(layout: SeatLayout, seats: tuple[str, ...]) -> set[int]:
    return {i for i, (_, row) in enumerate(layout.rows) for s in seats if s in row}


def _fewest_rows(layout: SeatLayout, free: frozenset[str], count: int) -> int:
    counts = [sum(1 for s in row if s in free) for _, row in layout.rows]
    return min(
        last - first + 1
        for first in range(len(counts))
        for last in range(first, len(counts))
        if sum(counts[first : last + 1]) >= count
    )


@st.composite
def seat_situations(draw: st.DrawFn) -> tuple[SeatLayout, frozenset[str], int]:
    rows = draw(st.integers(1, 7))
    columns = draw(st.integers(1, 6))
    seat_map = grid(rows, columns)
    ids = sorted(s.id for s in seat_map.seats)
    blocked = draw(st.sets(st.sampled_from(ids), max_size=len(ids) - 1))
    layout = layout_of(grid(rows, columns, tuple(sorted(blocked))))
    bookable = sorted(layout.bookable)
    taken = draw(st.sets(st.sampled_from(bookable), max_size=len(bookable) - 1))
    free = layout.bookable - taken
    count = draw(st.integers(1, len(free)))
    return layout, frozenset(free), count


@settings(max_examples=300, deadline=None)
@given(seat_situations())
def test_seat_choice_properties(situation: tuple[SeatLayout, frozenset[str], int]) -> None:
    layout, free, count = situation
    chosen = choose_seats(layout, free, count)
    assert len(chosen) == count and len(set(chosen)) == count  # never a seat twice
    assert set(chosen) <= free  # never a taken or blocked seat
    assert chosen == choose_seats(layout, free, count)  # deterministic
    assert chosen == layout.ordered(chosen)
    rows = _rows_of(layout, chosen)
    if together_in_a_row(layout, free, count):
        # One row, side by side.
        assert len(rows) == 1
        row = layout.rows[rows.pop()][1]
        positions = [row.index(s) for s in chosen]
        assert positions == list(range(positions[0], positions[0] + count))
    else:
        # Otherwise the fewest consecutive rows that have enough free seats.
        assert max(rows) - min(rows) + 1 == _fewest_rows(layout, free, count)


# --- choosing resources ------------------------------------------------------------------------


def test_best_fit_boat_and_seats_together() -> None:
    boats = group("boats", seated("big", 4, 4), seated("small", 2, 4))
    option = option_with(boats)
    slot = slot_of(option)
    (allocation,) = allocate(option, slot, {}, (1, 1, 1))
    assert allocation == Allocation("boats", "small", 3, 3, ("1A", "1B", "1C"))
    # The small boat cannot seat 5 side by side; the big one cannot either: the fuller fits.
    (five,) = allocate(option, slot, {}, (1,) * 5)
    assert five.resource_id == "small" and five.seat_ids == ("1A", "1B", "1C", "1D", "2A")


def test_rule_5_one_resource_must_take_the_whole_party() -> None:
    ribs = group("ribs", plain("falcon", 6), plain("osprey", 8))
    option = option_with(ribs)
    slot = slot_of(option)
    use = {"falcon": ResourceUse(1, 1), "osprey": ResourceUse(3, 1)}  # 5 + 5 free
    assert not can_allocate(option, slot, use, (1,) * 6)
    with pytest.raises(
        UnprocessableEntity, match=r"'ribs' \(Ribs\) does not split .* 6 free places .* most .* is 5"
    ):
        allocate(option, slot, use, (1,) * 6)
    state = resource_slot_state(option, slot, use, 0, NOW, (1,) * 6)
    assert (state.status, state.vacancies, state.capacity) == (AvailabilityStatus.SOLD_OUT, 10, 14)
    assert resource_slot_state(option, slot, use, 0, NOW, (1,) * 5).status is AvailabilityStatus.AVAILABLE
    fuller = {"falcon": ResourceUse(3, 1), "osprey": ResourceUse(5, 1)}  # 3 + 3 free of 14
    assert resource_slot_state(option, slot, fuller, 0, NOW).status is AvailabilityStatus.LIMITED
    with pytest.raises(UnprocessableEntity, match="does not split: select one of its resources"):
        allocate(option, slot, {}, (1, 1), selection=["falcon", "osprey"])


def test_a_split_group_splits_only_when_it_must() -> None:
    coaches = group("coaches", plain("c1", 10), plain("c2", 6), plain("c3", 4), split=True)
    option = option_with(coaches)
    slot = slot_of(option)
    assert [(a.resource_id, a.places) for a in allocate(option, slot, {}, (1,) * 5)] == [("c2", 5)]
    # 13: the roomiest first (10), then the fullest that takes the rest (c3: 4 for 3).
    assert [(a.resource_id, a.places) for a in allocate(option, slot, {}, (1,) * 13)] == [
        ("c1", 10),
        ("c3", 3),
    ]
    with pytest.raises(UnprocessableEntity, match="has 20 free places; the booking needs 21"):
        allocate(option, slot, {}, (1,) * 21)


def test_rule_4_every_required_group_and_optional_ones_only_when_chosen() -> None:
    boats = group("boats", plain("boat", 10))
    guides = group("guides", plain("ana", 3), plain("ben", 3), split=True)
    lunch = group("lunch", plain("table", 8), required=False)
    option = option_with(boats, guides, lunch)
    slot = slot_of(option)
    auto = allocate(option, slot, {}, (1,) * 4)
    assert [(a.resource_group_id, a.resource_id, a.places) for a in auto] == [
        ("boats", "boat", 4), ("guides", "ana", 3), ("guides", "ben", 1),
    ]  # fmt: skip
    chosen = allocate(option, slot, {}, (1,) * 4, selection=["boat", "ben", "ana", "table"])
    assert [(a.resource_id, a.places) for a in chosen] == [("boat", 4), ("ben", 3), ("ana", 1), ("table", 4)]
    with pytest.raises(UnprocessableEntity, match="is short: the selected resources have 3 free places"):
        allocate(option, slot, {}, (1,) * 4, selection=["boat", "ben"])
    with pytest.raises(UnprocessableEntity, match="'ben' \\(Ben\\) is not needed"):
        allocate(option, slot, {}, (1, 1), selection=["boat", "ana", "ben"])
    with pytest.raises(BadRequest, match="'nope' is not a resource of option 'DEFAULT'"):
        allocate(option, slot, {}, (1,), selection=["nope"])


def test_counting_by_units_and_by_booking() -> None:
    tables = group("tables", plain("t1", 2), plain("t2", 3), split=True, count_by=CountBy.UNITS)
    rooms = group("rooms", plain("suite", 4), plain("double", 2), split=True, count_by=CountBy.BOOKING)
    option = option_with(tables, rooms)
    slot = slot_of(option)
    party: Party = (4, 1, 0)  # a family ticket of 4, an adult, an infant: 3 units, 5 people
    assert demand(tables, party) == 3 and demand(rooms, party) == 5
    allocations = allocate(option, slot, {}, party)
    assert [(a.resource_id, a.places, a.pax_count) for a in allocations] == [
        ("t2", 3, 5), ("suite", 4, 4), ("double", 1, 1),
    ]  # fmt: skip
    # A room used by one booking has no room for another, however small.
    assert free_places(rooms, rooms.resources[0], ResourceUse(1, 1)) == 0
    assert not can_allocate(option, slot, {"suite": ResourceUse(1, 1)}, (1, 1, 1))


def test_resources_serve_some_slots() -> None:
    heron = Resource(
        id="heron", title="Heron", capacity=5, serves=(ServiceRule(start_times=("10:00",)),),
        closed_dates=(date(2026, 6, 3),),
    )  # fmt: skip
    option = option_with(group("boats", heron, plain("kingfisher", 8)), start_times=("10:00", "14:00"))
    assert serves(heron, slot_of(option, "10:00")) and not serves(heron, slot_of(option, "14:00"))
    assert [a.resource_id for a in allocate(option, slot_of(option, "14:00"), {}, (1,))] == ["kingfisher"]
    lonely = option_with(group("boats", heron), start_times=("10:00", "14:00"))
    state = resource_slot_state(lonely, slot_of(lonely, "14:00"), {}, 0, NOW)
    assert (state.status, state.capacity) == (AvailabilityStatus.CLOSED, 0)
    with pytest.raises(UnprocessableEntity, match="has no resource serving availability"):
        allocate(lonely, slot_of(lonely, "14:00"), {}, (1,))


def test_previous_allocations_are_kept_while_they_fit() -> None:
    boats = group("boats", seated("a", 2, 4), seated("b", 3, 4))
    option = option_with(boats)
    slot = slot_of(option)
    before = (Allocation("boats", "b", 3, 3, ("3B", "3C", "3D")),)
    smaller = allocate(option, slot, {}, (1, 1), previous=before)
    assert smaller == (Allocation("boats", "b", 2, 2, ("3B", "3C")),)
    # b is full apart from the party's own seats: growing to 5 moves it to a.
    full = {"b": ResourceUse(9, 3, frozenset({"1A", "1B", "1C", "1D", "2A", "2B", "2C", "2D", "3A"}))}
    moved = allocate(option, slot, full, (1,) * 5, previous=before)
    assert [a.resource_id for a in moved] == ["a"]


def test_a_selection_governs_only_the_groups_it_names() -> None:
    boats = group("boats", plain("small", 6), plain("big", 10))
    guides = group("guides", plain("ana", 3), plain("ben", 3), split=True)
    lunch = group("lunch", plain("table", 8), required=False)
    option = option_with(boats, guides, lunch)
    slot = slot_of(option)

    def shape(found: tuple[Allocation, ...]) -> list[tuple[str, int]]:
        return [(a.resource_id, a.places) for a in found]

    # Unnamed required groups are allocated as automatic allocation would; optional ones are not.
    assert shape(allocate(option, slot, {}, (1,) * 4, selection=["big"])) == [
        ("big", 4),
        ("ana", 3),
        ("ben", 1),
    ]
    assert shape(allocate(option, slot, {}, (1,) * 4, selection=["table"])) == [
        ("small", 4), ("ana", 3), ("ben", 1), ("table", 4),
    ]  # fmt: skip
    # A named group must still take the party; an unnamed one that cannot is refused by name.
    with pytest.raises(UnprocessableEntity, match=r"'guides' \(Guides\) is short"):
        allocate(option, slot, {}, (1,) * 4, selection=["big", "ben"])
    busy = {"ana": ResourceUse(3, 1), "ben": ResourceUse(2, 1)}
    with pytest.raises(
        UnprocessableEntity, match=r"'guides' \(Guides\) has 1 free places; the booking needs 4"
    ):
        allocate(option, slot, busy, (1,) * 4, selection=["big"])
    # With allocations before (a PATCH or confirm), unnamed groups keep theirs while they fit ...
    before = (
        Allocation("boats", "small", 4, 4),
        Allocation("guides", "ben", 3, 3),
        Allocation("guides", "ana", 1, 1),
        Allocation("lunch", "table", 4, 4),
    )
    assert shape(allocate(option, slot, {}, (1,) * 4, selection=["big"], previous=before)) == [
        ("big", 4), ("ben", 3), ("ana", 1), ("table", 4),
    ]  # fmt: skip
    assert shape(allocate(option, slot, {}, (1,) * 4, selection=["ana", "ben"], previous=before)) == [
        ("small", 4), ("ana", 3), ("ben", 1), ("table", 4),
    ]  # fmt: skip
    # ... on the same resources when the party changes and they still take it, else afresh
    # (an optional group that no longer fits is dropped).
    busier = {"small": ResourceUse(1, 1), "table": ResourceUse(3, 1)}
    grown = allocate(option, slot, busier, (1,) * 6, selection=["ana", "ben"], previous=before)
    assert shape(grown) == [("big", 6), ("ana", 3), ("ben", 3)]
    assert shape(allocate(option, slot, {}, (1,) * 5, selection=["big"], previous=before)) == [
        ("big", 5), ("ben", 3), ("ana", 2), ("table", 5),
    ]  # fmt: skip


def test_unnamed_seated_groups_keep_their_seats() -> None:
    boats = group("boats", seated("a", 2, 4), seated("b", 2, 4))
    coaches = group("coaches", plain("c1", 12), plain("c2", 10), split=True)
    option = option_with(boats, coaches)
    slot = slot_of(option)
    before = (Allocation("boats", "b", 2, 2, ("2C", "2D")), Allocation("coaches", "c2", 2, 2))
    kept = allocate(option, slot, {}, (1, 1), selection=["c1"], previous=before)
    assert kept == (Allocation("boats", "b", 2, 2, ("2C", "2D")), Allocation("coaches", "c1", 2, 2))
    # Someone else now sits in 2D: the party stays on b, seated afresh.
    taken = {"b": ResourceUse(1, 1, frozenset({"2D"}))}
    (boat, _) = allocate(option, slot, taken, (1, 1), selection=["c1"], previous=before)
    assert (boat.resource_id, boat.seat_ids) == ("b", ("2A", "2B"))
    # Without a list too, each group is decided alone: boat b is full, the coach is kept (a
    # fresh allocation would take the tighter c2).
    full_b = {"b": ResourceUse(8, 4, frozenset(f"{row}{column}" for row in "12" for column in "ABCD"))}
    moved = allocate(option, slot, full_b, (1, 1), previous=(before[0], Allocation("coaches", "c1", 2, 2)))
    assert [(a.resource_id, a.seat_ids) for a in moved] == [("a", ("1A", "1B")), ("c1", ())]
    assert [a.resource_id for a in allocate(option, slot, full_b, (1, 1))] == ["a", "c2"]


# --- properties of whole allocations -----------------------------------------------------------


@st.composite
def resource_strategy(draw: st.DrawFn, index: int) -> Resource:
    if draw(st.booleans()):
        rows, columns = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        ids = [f"{r}{COLUMNS[c]}" for r in range(1, rows + 1) for c in range(columns)]
        blocked = draw(st.sets(st.sampled_from(ids), max_size=len(ids) - 1))
        return seated(f"r{index}", rows, columns, tuple(sorted(blocked)))
    return plain(f"r{index}", draw(st.integers(1, 12)))


@st.composite
def situations(draw: st.DrawFn) -> tuple[Option, Slot, dict[str, ResourceUse], Party]:
    groups: list[ResourceGroup] = []
    index = 0
    for number in range(draw(st.integers(1, 3))):
        resources = []
        for _ in range(draw(st.integers(1, 3))):
            resources.append(draw(resource_strategy(index)))
            index += 1
        groups.append(
            group(
                f"g{number}",
                *resources,
                split=draw(st.booleans()),
                required=draw(st.booleans()) or number == 0,
                count_by=draw(st.sampled_from(list(CountBy))),
            )
        )
    option = option_with(*groups)
    use: dict[str, ResourceUse] = {}
    for g in groups:
        for resource in g.resources:
            if g.count_by is CountBy.BOOKING:
                if draw(st.booleans()):
                    use[resource.id] = ResourceUse(1, 1)
            elif resource.seat_map is not None:
                layout = layout_of(resource.seat_map)
                taken = draw(st.sets(st.sampled_from(sorted(layout.bookable))))
                use[resource.id] = ResourceUse(len(taken), len(taken), frozenset(taken))
            else:
                places = draw(st.integers(0, resource.places))
                use[resource.id] = ResourceUse(places, 1 if places else 0)
    party = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=10)))
    return option, slot_of(option), use, party


def check_allocations(
    option: Option, use: dict[str, ResourceUse], party: Party, found: tuple[Allocation, ...]
) -> None:
    by_group = Counter(a.resource_group_id for a in found)
    for g in option.resource_groups:
        mine = [a for a in found if a.resource_group_id == g.id]
        need = demand(g, party)
        if g.required and need > 0:
            assert sum(a.places for a in mine) == need  # rule 4: enough in every required group
            assert sum(a.pax_count for a in mine) == sum(party)
        if not g.split:
            assert by_group[g.id] <= 1  # rule 5: one resource
        if not g.required:
            assert not mine  # optional groups only on request
        for a in mine:
            resource = g.resource(a.resource_id)
            assert resource is not None
            assert a.places <= free_places(g, resource, use.get(resource.id, NO_USE))
            if resource.seat_map is not None:
                assert len(a.seat_ids) == a.places == len(set(a.seat_ids))
                assert set(a.seat_ids) <= free_seats(resource, use.get(resource.id, NO_USE))
            else:
                assert a.seat_ids == ()
        if g.split and len(mine) > 1:
            # Split only when no single resource could take the party.
            assert all(free_places(g, r, use.get(r.id, NO_USE)) < need for r in g.resources)


@settings(max_examples=400, deadline=None)
@given(situations())
def test_automatic_allocation_properties(
    situation: tuple[Option, Slot, dict[str, ResourceUse], Party],
) -> None:
    option, slot, use, party = situation
    possible = can_allocate(option, slot, use, party)
    try:
        found = allocate(option, slot, use, party)
    except UnprocessableEntity:
        assert not possible
        assert resource_slot_state(option, slot, use, 0, NOW, party).status is AvailabilityStatus.SOLD_OUT
        return
    assert possible
    assert found == allocate(option, slot, use, party)  # deterministic
    check_allocations(option, use, party, found)


@settings(max_examples=200, deadline=None)
@given(situations(), st.data())
def test_selected_allocation_properties(
    situation: tuple[Option, Slot, dict[str, ResourceUse], Party], data: st.DataObject
) -> None:
    option, slot, use, party = situation
    ids = [r.id for g in option.resource_groups for r in g.resources]
    selection = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4))
    try:
        found = allocate(option, slot, use, party, selection=selection)
    except UnprocessableEntity:
        return
    # In the groups it names, only what was selected; the rules hold (optional groups appear
    # only when selected).
    named = {g.id for g in option.resource_groups if any(r.id in selection for r in g.resources)}
    assert {a.resource_id for a in found if a.resource_group_id in named} <= set(selection)
    assert all(
        g.required or g.id in named
        for g in option.resource_groups
        if any(a.resource_group_id == g.id for a in found)
    )
    for g in option.resource_groups:
        mine = [a for a in found if a.resource_group_id == g.id]
        need = demand(g, party)
        if g.required and need > 0:
            assert sum(a.places for a in mine) == need
        if not g.split:
            assert len(mine) <= 1
        for a in mine:
            resource = g.resource(a.resource_id)
            assert resource is not None
            assert a.places <= free_places(g, resource, use.get(resource.id, NO_USE))
            assert set(a.seat_ids) <= free_seats(resource, use.get(resource.id, NO_USE))


@settings(max_examples=300, deadline=None)
@given(situations(), st.data())
def test_partial_selection_properties(
    situation: tuple[Option, Slot, dict[str, ResourceUse], Party], data: st.DataObject
) -> None:
    """A selection governs the groups it names. Every other group gets what it would get
    without a selection: on create (no allocations before) the automatic allocation, on a
    change the booking's allocation before, kept exactly while the party is the same and it
    still fits."""
    option, slot, use, party = situation
    named = data.draw(st.sets(st.sampled_from([g.id for g in option.resource_groups]), min_size=1))
    selection = data.draw(
        st.lists(
            st.sampled_from([r.id for g in option.resource_groups if g.id in named for r in g.resources]),
            min_size=1, max_size=4,
        )
    )  # fmt: skip
    named = {g.id for g in option.resource_groups if any(r.id in selection for r in g.resources)}
    labels = [group_label(g) for g in option.resource_groups if g.id in named]

    def unnamed(found: tuple[Allocation, ...]) -> list[Allocation]:
        return [a for a in found if a.resource_group_id not in named]

    try:
        automatic: tuple[Allocation, ...] | None = allocate(option, slot, use, party)
    except UnprocessableEntity:
        automatic = None
    try:
        fresh = allocate(option, slot, use, party, selection=selection)
    except UnprocessableEntity as error:
        # Refused for a named group, or for an unnamed one automatic allocation refuses too.
        assert automatic is None or any(label in error.message for label in labels)
    else:
        if automatic is not None:
            assert unnamed(fresh) == unnamed(automatic)
        assert {a.resource_id for a in fresh if a.resource_group_id in named} <= set(selection)
    if automatic is None:
        return
    # The booking had the automatic allocation: unnamed groups keep it as it was.
    try:
        changed = allocate(option, slot, use, party, selection=selection, previous=automatic)
    except UnprocessableEntity as error:
        assert any(label in error.message for label in labels)
        return
    assert unnamed(changed) == unnamed(automatic)


@settings(max_examples=150, deadline=None)
@given(situations(), st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=6), min_size=1, max_size=25))
def test_one_party_after_another_never_overfills(
    situation: tuple[Option, Slot, dict[str, ResourceUse], Party], parties: list[list[int]]
) -> None:
    """Parties arrive one by one (as the slot lock makes them): no resource over capacity, no
    seat given twice, every party that was refused could not have been allocated."""
    option, slot, _, _ = situation
    use: dict[str, ResourceUse] = {}
    given_seats: dict[str, list[str]] = {}
    for party in parties:
        try:
            found = allocate(option, slot, use, tuple(party))
        except UnprocessableEntity:
            assert not can_allocate(option, slot, use, tuple(party))
            continue
        for a in found:
            before = use.get(a.resource_id, NO_USE)
            use[a.resource_id] = ResourceUse(
                before.places + a.places, before.bookings + 1, before.seats | set(a.seat_ids)
            )
            given_seats.setdefault(a.resource_id, []).extend(a.seat_ids)
    for g in option.resource_groups:
        for resource in g.resources:
            used = use.get(resource.id, NO_USE)
            if g.count_by is CountBy.BOOKING:
                assert used.bookings <= 1  # a whole resource per booking
            assert used.places <= resource.places
            seats = given_seats.get(resource.id, [])
            assert len(seats) == len(set(seats))
            if resource.seat_map is not None:
                assert set(seats) <= layout_of(resource.seat_map).bookable
