"""Resources (octo/resources): which resources serve a slot, what is left of them, and which
resources and seats a party gets.

Pure and deterministic: the same option, slot, usage and party always give the same
allocation. Ties are broken by catalogue order (groups, resources) and by seat position
(rows front to back, columns left to right, in natural order: row 2 before row 10).

Rules (OCTO.md §6.5):
- every booking takes enough places in every *required* group (rule 4); optional groups only
  when the client selects their resources;
- a selection governs the groups it names; the others keep the booking's allocation while it
  fits, and required ones are otherwise allocated automatically;
- a group with `split: false` gives the whole party one resource (rule 5); a split group may
  spread it over several, but only when no single resource can take it;
- seats: one contiguous run in one row where possible (the smallest run that fits, front rows
  first), otherwise the fewest consecutive rows, in as few pieces as possible; never a seat
  that is taken or blocked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from berth.domain.availability import SELLABLE, AvailabilityStatus, SlotState, slot_state
from berth.domain.catalog import Catalog, CountBy, Option, Product, Resource, ResourceGroup, Seat, SeatMap
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.slots import Slot, slot_clock

# The paxCount of each unit item of a booking (or of an availability request's units), in order.
Party = tuple[int, ...]


def party_of(option: Option, unit_ids: Sequence[str]) -> Party:
    """The party of a booking's unit items (the units must be the option's)."""
    party = []
    for unit_id in unit_ids:
        unit = option.unit(unit_id)
        party.append(unit.restrictions.pax_count if unit is not None else 0)
    return tuple(party)


def party_of_units(option: Option, units: Sequence[tuple[str, int]]) -> Party:
    """The party of an availability request's `units` ((unit id, quantity) pairs)."""
    return party_of(option, [unit_id for unit_id, quantity in units for _ in range(quantity)])


@dataclass(frozen=True)
class Allocation:
    """Part of a booking on one resource: `places` of its capacity (counted as the group
    counts; one seat per place on a seated resource) for `pax_count` people."""

    resource_group_id: str
    resource_id: str
    places: int
    pax_count: int
    seat_ids: tuple[str, ...] = ()

    def to_document(self) -> dict[str, Any]:
        return {
            "resourceGroupId": self.resource_group_id,
            "resourceId": self.resource_id,
            "places": self.places,
            "paxCount": self.pax_count,
            "seatIds": list(self.seat_ids),
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> Allocation:
        return cls(
            resource_group_id=document["resourceGroupId"],
            resource_id=document["resourceId"],
            places=int(document["places"]),
            pax_count=int(document["paxCount"]),
            seat_ids=tuple(document.get("seatIds", ())),
        )


@dataclass(frozen=True)
class ResourceUse:
    """What live bookings take of one resource in one slot."""

    places: int = 0
    bookings: int = 0
    seats: frozenset[str] = field(default_factory=frozenset)


SlotUse = Mapping[str, ResourceUse]  # by resource id, for one slot
NO_USE = ResourceUse()


# --- which resources serve a slot, and what is free ----------------------------------------


def serves(resource: Resource, slot: Slot) -> bool:
    return resource.serves_on(slot.local_date, slot_clock(slot))


def serving(group: ResourceGroup, slot: Slot) -> list[Resource]:
    return [r for r in group.resources if serves(r, slot)]


def has_resources(option: Option, slot: Slot) -> bool:
    """Whether any resource serves this slot (OCTO `hasResources`)."""
    return any(serves(r, slot) for g in option.resource_groups for r in g.resources)


def demand(group: ResourceGroup, party: Party) -> int:
    """The places a party needs in a group."""
    return len(party) if group.count_by is CountBy.UNITS else sum(party)


def free_seats(resource: Resource, use: ResourceUse) -> frozenset[str]:
    if resource.seat_map is None:
        return frozenset()
    return layout_of(resource.seat_map).bookable - use.seats


def free_places(group: ResourceGroup, resource: Resource, use: ResourceUse) -> int:
    if group.count_by is CountBy.BOOKING:
        return places_of(resource) if use.bookings == 0 else 0
    free = max(places_of(resource) - use.places, 0)
    if resource.seat_map is not None:
        free = min(free, len(free_seats(resource, use)))
    return free


# --- seat maps -----------------------------------------------------------------------------

_CHUNKS = re.compile(r"\d+|\D+")


def natural_key(label: str) -> tuple[tuple[tuple[int, int | str], ...], str]:
    """`2` before `10`, `A` before `B`; the label itself breaks the remaining ties."""
    parts: list[tuple[int, int | str]] = [
        (0, int(chunk)) if chunk.isdigit() else (1, chunk.casefold()) for chunk in _CHUNKS.findall(label)
    ]
    return tuple(parts), label


@dataclass(frozen=True)
class SeatLayout:
    """A seat map in reading order: rows front to back, each row's seats left to right (blocked
    seats included, as they break a row into runs)."""

    rows: tuple[tuple[str, tuple[str, ...]], ...]
    columns: tuple[str, ...]
    seats: Mapping[str, Seat]
    bookable: frozenset[str]
    position: Mapping[str, int]  # seat id -> index in reading order

    def ordered(self, seat_ids: AbstractSet[str] | Sequence[str]) -> tuple[str, ...]:
        return tuple(sorted(seat_ids, key=lambda s: self.position.get(s, len(self.position))))


# Layouts by the identity of their seat map: the catalogue's objects live as long as its
# snapshot, and hashing a frozen model of 200 seats on every look-up would cost more than the
# look-up saves. The map is kept with its layout, so its id cannot be reused while cached.
_LAYOUTS: dict[int, tuple[SeatMap, SeatLayout]] = {}
_MAX_LAYOUTS = 4096


def layout_of(seat_map: SeatMap) -> SeatLayout:
    found = _LAYOUTS.get(id(seat_map))
    if found is not None and found[0] is seat_map:
        return found[1]
    layout = _layout(seat_map)
    if len(_LAYOUTS) >= _MAX_LAYOUTS:
        _LAYOUTS.clear()
    _LAYOUTS[id(seat_map)] = (seat_map, layout)
    return layout


def places_of(resource: Resource) -> int:
    """A resource's capacity: `capacity`, or its seats that are not blocked."""
    if resource.capacity is not None:
        return resource.capacity
    return len(layout_of(resource.seat_map).bookable) if resource.seat_map is not None else 0


def _layout(seat_map: SeatMap) -> SeatLayout:
    by_row: dict[str, list[Seat]] = {}
    for seat in seat_map.seats:
        by_row.setdefault(seat.row, []).append(seat)
    rows = tuple(
        (row, tuple(s.id for s in sorted(seats, key=lambda s: natural_key(s.column))))
        for row, seats in sorted(by_row.items(), key=lambda item: natural_key(item[0]))
    )
    columns = tuple(sorted({s.column for s in seat_map.seats}, key=natural_key))
    position = {seat_id: index for index, seat_id in enumerate(s for _, row in rows for s in row)}
    seats = {s.id: s for s in seat_map.seats}
    return SeatLayout(rows, columns, seats, frozenset(seats) - set(seat_map.blocked), position)


def seats_of(resource: Resource, seat_ids: Sequence[str] | AbstractSet[str]) -> tuple[Seat, ...]:
    """The seat objects of seat ids of a resource, in reading order (unknown ids left out)."""
    if resource.seat_map is None:
        return ()
    layout = layout_of(resource.seat_map)
    return tuple(layout.seats[s] for s in layout.ordered(seat_ids) if s in layout.seats)


def _runs(row: tuple[str, ...], free: AbstractSet[str]) -> list[tuple[int, tuple[str, ...]]]:
    """Maximal runs of free, side-by-side seats of one row: (index of the first, the seats)."""
    runs: list[tuple[int, tuple[str, ...]]] = []
    start: int | None = None
    for index, seat_id in enumerate((*row, None)):
        if seat_id is not None and seat_id in free:
            if start is None:
                start = index
        elif start is not None:
            runs.append((start, row[start:index]))
            start = None
    return runs


def together_in_a_row(layout: SeatLayout, free: AbstractSet[str], count: int) -> bool:
    """Whether `count` free seats side by side exist in one row."""
    return any(len(run) >= count for _, row in layout.rows for _, run in _runs(row, free))


def choose_seats(
    layout: SeatLayout, free: AbstractSet[str], count: int, keep: Sequence[str] = ()
) -> tuple[str, ...]:
    """`count` of the `free` seats for one party, in reading order.

    `keep`: the seats the party had (it is being re-seated on the same resource); when they
    are all still free and enough, the party keeps the first `count` of them.
    """
    if count <= 0:
        return ()
    free = free & layout.bookable
    if len(free) < count:
        raise ValueError(f"{count} seats wanted, {len(free)} free")
    if keep and len(keep) >= count and all(seat in free for seat in keep):
        return layout.ordered(keep)[:count]
    runs_by_row = [_runs(row, free) for _, row in layout.rows]
    # 1. One run in one row: the shortest run that fits (leaving long runs for big parties),
    #    front rows first, leftmost first.
    best: tuple[tuple[int, int, int], tuple[str, ...]] | None = None
    for row_index, runs in enumerate(runs_by_row):
        for start, run in runs:
            if len(run) >= count:
                key = (len(run), row_index, start)
                if best is None or key < best[0]:
                    best = (key, run)
    if best is not None:
        return best[1][:count]
    # 2. The fewest consecutive rows (for each first row, the shortest stretch of rows with
    #    enough free seats), then the fewest pieces; the largest pieces are taken first.
    totals = [sum(len(run) for _, run in runs) for runs in runs_by_row]
    chosen: tuple[tuple[int, int, int], list[str]] | None = None
    last = 0
    in_window = 0
    for first in range(len(runs_by_row)):
        if last < first:
            last, in_window = first, 0
        while last < len(runs_by_row) and in_window < count:
            in_window += totals[last]
            last += 1
        if in_window < count:
            break
        pieces = sorted(
            (
                (len(run), row_index, start, run)
                for row_index in range(first, last)
                for start, run in runs_by_row[row_index]
            ),
            key=lambda piece: (-piece[0], piece[1], piece[2]),
        )
        seats: list[str] = []
        rows_used: list[int] = []
        for length, row_index, _, run in pieces:
            take = min(length, count - len(seats))
            seats.extend(run[:take])
            rows_used.append(row_index)
            if len(seats) == count:
                break
        key = (max(rows_used) - min(rows_used) + 1, len(rows_used), min(rows_used))
        if chosen is None or key < chosen[0]:
            chosen = (key, seats)
        in_window -= totals[first]
    assert chosen is not None  # there are `count` free seats somewhere
    return layout.ordered(chosen[1])


# --- choosing resources --------------------------------------------------------------------


def group_label(group: ResourceGroup) -> str:
    return f"Resource group {group.id!r} ({group.title})"


def _resource_label(resource: Resource) -> str:
    return f"resource {resource.id!r} ({resource.title})"


@dataclass(frozen=True)
class _Candidate:
    index: int
    resource: Resource
    free: int


def _candidates(group: ResourceGroup, slot: Slot, use: SlotUse) -> list[_Candidate]:
    return [
        _Candidate(index, resource, free_places(group, resource, use.get(resource.id, NO_USE)))
        for index, resource in enumerate(group.resources)
        if serves(resource, slot)
    ]


def _seats_together(group: ResourceGroup, candidate: _Candidate, use: SlotUse, need: int) -> bool:
    resource = candidate.resource
    if resource.seat_map is None:
        return True
    layout = layout_of(resource.seat_map)
    return together_in_a_row(layout, free_seats(resource, use.get(resource.id, NO_USE)), need)


def _automatic_parts(
    group: ResourceGroup, candidates: list[_Candidate], use: SlotUse, need: int
) -> list[tuple[Resource, int]]:
    fitting = [c for c in candidates if c.free >= need]
    if fitting:
        # Seats together first; then the fullest resource that fits (best fit keeps the roomy
        # ones for big parties and fills one boat before the next); then catalogue order.
        best = min(fitting, key=lambda c: (not _seats_together(group, c, use, need), c.free, c.index))
        return [(best.resource, need)]
    if not group.split:
        most = max((c.free for c in candidates), default=0)
        raise UnprocessableEntity(
            f"{group_label(group)} does not split and none of its resources has {need} free places "
            f"for this booking (the most in one resource is {most})"
        )
    total = sum(c.free for c in candidates)
    if total < need:
        raise UnprocessableEntity(f"{group_label(group)} has {total} free places; the booking needs {need}")
    # Split: the roomiest resources first, and the last part on the fullest one that takes it.
    pool = sorted((c for c in candidates if c.free > 0), key=lambda c: (-c.free, c.index))
    parts: list[tuple[Resource, int]] = []
    remaining = need
    while remaining > 0:
        fit = [c for c in pool if c.free >= remaining]
        if fit:
            last = min(fit, key=lambda c: (c.free, c.index))
            parts.append((last.resource, remaining))
            break
        biggest = pool.pop(0)
        parts.append((biggest.resource, biggest.free))
        remaining -= biggest.free
    return parts


def _selected_parts(
    group: ResourceGroup, chosen: list[Resource], use: SlotUse, need: int
) -> list[tuple[Resource, int]]:
    if not group.split and len(chosen) > 1:
        raise UnprocessableEntity(
            f"{group_label(group)} does not split: select one of its resources for the whole booking, "
            f"not {len(chosen)}"
        )
    if need == 0:
        return [(resource, 0) for resource in chosen]
    parts: list[tuple[Resource, int]] = []
    remaining = need
    for resource in chosen:
        free = free_places(group, resource, use.get(resource.id, NO_USE))
        if not group.split:
            if free < need:
                raise UnprocessableEntity(
                    f"{group_label(group)} does not split and {_resource_label(resource)} has {free} free "
                    f"places; the booking needs {need}"
                )
            return [(resource, need)]
        if remaining == 0:
            raise UnprocessableEntity(
                f"{group_label(group)}: {_resource_label(resource)} is not needed: the resources "
                f"selected before it take all {need} places"
            )
        if free == 0:
            raise UnprocessableEntity(f"{group_label(group)}: {_resource_label(resource)} has no free places")
        take = min(free, remaining)
        parts.append((resource, take))
        remaining -= take
    if remaining > 0:
        raise UnprocessableEntity(
            f"{group_label(group)} is short: the selected resources have {need - remaining} free places; "
            f"the booking needs {need}"
        )
    return parts


def _allocations(
    group: ResourceGroup,
    parts: list[tuple[Resource, int]],
    party: Party,
    use: SlotUse,
    keep: Mapping[str, tuple[str, ...]],
) -> list[Allocation]:
    found = []
    offset = 0
    for resource, places in parts:
        # Split by units, a part's people are those of its unit items (in the booking's order).
        pax = sum(party[offset : offset + places]) if group.count_by is CountBy.UNITS else places
        offset += places
        seats: tuple[str, ...] = ()
        if resource.seat_map is not None:
            layout = layout_of(resource.seat_map)
            free = free_seats(resource, use.get(resource.id, NO_USE))
            seats = choose_seats(layout, free, places, keep.get(resource.id, ()))
        found.append(Allocation(group.id, resource.id, places, pax, seats))
    return found


def _picked(option: Option, slot: Slot, resource_ids: Sequence[str]) -> dict[str, list[Resource]]:
    """The selection's resources by group id, in the order listed (BAD_REQUEST for an id that
    is not the option's, UNPROCESSABLE_ENTITY for a resource that does not serve the slot)."""
    picked: dict[str, list[Resource]] = {}
    for resource_id in dict.fromkeys(resource_ids):
        found = option.find_resource(resource_id)
        if found is None:
            raise BadRequest(
                f"The resource {resource_id!r} is not a resource of option {option.id!r}",
                resourceId=resource_id,
            )
        group, resource = found
        if not serves(resource, slot):
            raise UnprocessableEntity(
                f"{group_label(group)}: {_resource_label(resource)} does not serve availability {slot.id}"
            )
        picked.setdefault(group.id, []).append(resource)
    return picked


def _kept_parts(
    group: ResourceGroup, slot: Slot, use: SlotUse, need: int, before: Sequence[Allocation]
) -> list[tuple[Resource, int]] | None:
    """A group's allocation before a change, kept: as it was while the party's demand is the
    same and every part still fits; else the same resources refitted to the party; None when
    they no longer serve the slot or cannot take the party."""
    parts = [
        (resource, a.places)
        for a in before
        if (resource := group.resource(a.resource_id)) is not None and serves(resource, slot)
    ]
    if not parts:
        return None
    if sum(places for _, places in parts) == need and all(
        free_places(group, resource, use.get(resource.id, NO_USE)) >= places for resource, places in parts
    ):
        return parts
    try:
        return _selected_parts(group, [resource for resource, _ in parts], use, need)
    except UnprocessableEntity:
        return None


def allocate(
    option: Option,
    slot: Slot,
    use: SlotUse,
    party: Party,
    selection: Sequence[str] | None = None,
    previous: Sequence[Allocation] = (),
) -> tuple[Allocation, ...]:
    """The allocations of a party in a slot whose resources are used as `use` says (the party's
    own booking left out of it).

    `selection`: resource ids the client chose. It governs the groups it names: only those
    resources, under the group's split rule (UNPROCESSABLE_ENTITY naming the group otherwise).
    `previous`: the booking's allocations before this write. Every group the selection does not
    name keeps its previous allocation while it still fits (its seats too when the party does
    not grow), else is allocated automatically when it is required (an optional one is then
    dropped); a required group with nothing before is allocated automatically.
    """
    keep = {a.resource_id: a.seat_ids for a in previous}
    picked = _picked(option, slot, selection or ())
    allocations: list[Allocation] = []
    for group in option.resource_groups:
        need = demand(group, party)
        chosen = picked.get(group.id)
        if chosen:
            parts = _selected_parts(group, chosen, use, need)
        else:
            before = [a for a in previous if a.resource_group_id == group.id]
            found = _kept_parts(group, slot, use, need, before) if before else None
            if found is None:
                if not group.required or need == 0:
                    continue
                candidates = _candidates(group, slot, use)
                if not candidates:
                    raise UnprocessableEntity(
                        f"{group_label(group)} has no resource serving availability {slot.id}"
                    )
                found = _automatic_parts(group, candidates, use, need)
            parts = found
        allocations.extend(_allocations(group, parts, party, use, keep))
    return tuple(allocations)


def can_allocate(option: Option, slot: Slot, use: SlotUse, party: Party) -> bool:
    """Whether automatic allocation of the party would succeed (required groups only)."""
    for group in option.resource_groups:
        need = demand(group, party)
        if not group.required or need == 0:
            continue
        frees = [c.free for c in _candidates(group, slot, use)]
        if group.split:
            if sum(frees) < need:
                return False
        elif max(frees, default=0) < need:
            return False
    return True


def check_selection(catalog: Catalog, product: Product, option: Option, resource_ids: Sequence[str]) -> None:
    """BAD_REQUEST for a resource id that is not the option's (naming the option it belongs to,
    when it is another option's)."""
    for resource_id in resource_ids:
        if option.find_resource(resource_id) is not None:
            continue
        owner = next(
            (
                (p.id, o.id)
                for p in catalog.products
                for o in p.options
                if o.find_resource(resource_id) is not None
            ),
            None,
        )
        if owner is None:
            message = f"The resource {resource_id!r} does not exist"
        else:
            message = (
                f"The resource {resource_id!r} belongs to option {owner[1]!r} of product {owner[0]!r}, "
                f"not to option {option.id!r} of product {product.id!r}"
            )
        raise BadRequest(message, resourceId=resource_id)


# --- availability of resource-based options ------------------------------------------------


def resource_slot_state(
    option: Option, slot: Slot, use: SlotUse, held: int, now: datetime, party: Party | None = None
) -> SlotState:
    """The state of a slot of an option with resources.

    Capacity and vacancies are those of the tightest required group: the sum over the
    resources that serve the slot (two 30-seat buses: capacity 60). For a party, the slot is
    SOLD_OUT unless every required group can take it, a non-split group in one resource (8
    people and two boats with 5 free places each: SOLD_OUT, with vacancies 10). A schedule
    capacity, if set, limits as well. No resource of a required group serving the slot: CLOSED.
    """
    groups = [g for g in option.resource_groups if g.required]
    if not groups:
        return slot_state(slot, held, now, sum(party) if party is not None else None)
    capacity = vacancies = 0
    operating = True
    for index, group in enumerate(groups):
        resources = serving(group, slot)
        operating = operating and bool(resources)
        group_capacity = sum(places_of(r) for r in resources)
        group_free = sum(free_places(group, r, use.get(r.id, NO_USE)) for r in resources)
        capacity = group_capacity if index == 0 else min(capacity, group_capacity)
        vacancies = group_free if index == 0 else min(vacancies, group_free)
    fits = party is None or can_allocate(option, slot, use, party)
    if slot.capacity is not None:
        capacity = min(capacity, slot.capacity)
        vacancies = min(vacancies, max(slot.capacity - held, 0))
        if party is not None and slot.capacity - held < sum(party):
            fits = False
    if not operating or slot.closed or now >= slot.cutoff_utc:
        return SlotState(AvailabilityStatus.CLOSED, False, 0, capacity)
    if vacancies <= 0 or not fits:
        status = AvailabilityStatus.SOLD_OUT
    elif 2 * vacancies < capacity:
        status = AvailabilityStatus.LIMITED
    else:
        status = AvailabilityStatus.AVAILABLE
    return SlotState(status, status in SELLABLE, vacancies, capacity)


def availability_state(
    option: Option, slot: Slot, held: int, use: SlotUse, now: datetime, party: Party | None = None
) -> SlotState:
    """A slot's state: from its resources when the option has resource groups, else from the
    schedule's capacity and the places held (`slot_state`)."""
    if option.resource_groups:
        return resource_slot_state(option, slot, use, held, now, party)
    return slot_state(slot, held, now, sum(party) if party is not None else None)
