"""octo/resources: the resources of one availability, as the `/availability/resources` route
and the back office's seat map show them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC

from berth.domain.availability import AvailabilityStatus, SlotState
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog.lookup import find_option, find_product, requested_units
from berth.domain.errors import InvalidAvailabilityId, UnprocessableEntity
from berth.domain.resources import (
    NO_USE,
    Allocation,
    Party,
    SlotUse,
    allocate,
    availability_state,
    check_selection,
    demand,
    free_places,
    free_seats,
    party_of_units,
    places_of,
    seats_of,
    serves,
)
from berth.domain.slots import Slot, slot_for_id
from berth.read_models.resources import GroupState, ResourceState, SlotResources
from berth.services.bookings.capacity import slots_as_run
from berth.services.clock import Clock
from berth.store import bookings_reads, resources_repo
from berth.store.database import Database


@dataclass(frozen=True)
class ResourcesQuery:
    """GET/POST /availability/resources: one availability, optionally a party and a selection."""

    product_id: str | None
    option_id: str | None
    availability_id: str | None
    units: tuple[tuple[str, int], ...] | None = None
    resource_ids: tuple[str, ...] | None = None


def _status(free: int, capacity: int, enough: bool) -> AvailabilityStatus:
    if free <= 0 or not enough:
        return AvailabilityStatus.SOLD_OUT
    if 2 * free < capacity:
        return AvailabilityStatus.LIMITED
    return AvailabilityStatus.AVAILABLE


def describe_slot(
    product: Product,
    option: Option,
    slot: Slot,
    use: SlotUse,
    state: SlotState,
    party: Party | None,
    preview: Sequence[Allocation] = (),
) -> SlotResources:
    """Every group and resource of the option in one slot, with what is free; for a party,
    whether each resource (or group) could take it."""
    previewed = {a.resource_id: a for a in preview}
    closed = state.status is AvailabilityStatus.CLOSED
    groups = []
    for group in option.resource_groups:
        need = demand(group, party) if party is not None else None
        resources = []
        for resource in group.resources:
            working = serves(resource, slot)
            resource_use = use.get(resource.id, NO_USE)
            free = free_places(group, resource, resource_use) if working else 0
            enough = need is None or (free >= need if not group.split else free > 0) or need == 0
            status = (
                AvailabilityStatus.CLOSED
                if closed or not working
                else _status(free, places_of(resource), enough)
            )
            allocation = previewed.get(resource.id)
            available = (
                seats_of(resource, sorted(free_seats(resource, resource_use)))
                if working and not closed
                else ()
            )
            resources.append(
                ResourceState(
                    group, resource, working, free, status, available,
                    seats_of(resource, allocation.seat_ids) if allocation else (), allocation,
                )
            )  # fmt: skip
        working_states = [r for r in resources if r.serving]
        capacity = sum(places_of(r.resource) for r in working_states)
        free_total = sum(r.free for r in working_states)
        if need is None or need == 0:
            fits = True
        elif group.split:
            fits = free_total >= need
        else:
            fits = any(r.free >= need for r in working_states)
        group_status = (
            AvailabilityStatus.CLOSED if closed or not working_states else _status(free_total, capacity, fits)
        )
        groups.append(GroupState(group, capacity, free_total, group_status, tuple(resources)))
    return SlotResources(product, option, slot, state, tuple(groups), tuple(preview))


class ResourceService:
    """The resources of one availability: the `/availability/resources` route and the back
    office's seat map."""

    def __init__(self, database: Database, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    async def slot_resources(self, catalog: Catalog, query: ResourcesQuery) -> SlotResources:
        product = find_product(catalog, query.product_id)
        option = find_option(product, query.option_id)
        if not query.availability_id:
            raise InvalidAvailabilityId(query.availability_id, "availabilityId is required")
        slot = slot_for_id(product, option, query.availability_id)
        if slot is None:
            raise InvalidAvailabilityId(query.availability_id)
        party: Party | None = None
        if query.units is not None:
            requested_units(option, query.units)  # INVALID_UNIT_ID for units of another option
            party = party_of_units(option, query.units)
        if query.resource_ids:
            check_selection(catalog, product, option, query.resource_ids)
        now = self._clock()
        key = (product.id, option.id, slot.id)
        start = slot.start.astimezone(UTC)
        async with self._db.transaction(write=False) as conn:
            (slot,) = await slots_as_run(conn, product, option, [slot])
            use = (
                (await resources_repo.use_of_slot(conn, key, start, now)).use
                if option.resource_groups
                else {}
            )
            held = (
                (await bookings_reads.held_places(conn, product.id, option.id, start, start, now)).get(
                    slot.id, 0
                )
                if slot.capacity is not None
                else 0
            )
        state = availability_state(option, slot, held, use, now, party)
        preview: tuple[Allocation, ...] = ()
        if party is not None and option.resource_groups and state.status is not AvailabilityStatus.CLOSED:
            if query.resource_ids:
                preview = allocate(option, slot, use, party, query.resource_ids)
            else:
                try:
                    preview = allocate(option, slot, use, party)
                except UnprocessableEntity:
                    preview = ()  # sold out for this party: nothing to preview
        return describe_slot(product, option, slot, use, state, party, preview)

    async def staff_slot(
        self, product: Product, option: Option, slot: Slot, state: SlotState
    ) -> SlotResources | None:
        """The slot's resources as staff see them (no party)."""
        if not option.resource_groups:
            return None
        now = self._clock()
        async with self._db.transaction(write=False) as conn:
            index = await resources_repo.use_of_slot(
                conn, (product.id, option.id, slot.id), slot.start.astimezone(UTC), now
            )
        return describe_slot(product, option, slot, index.use, state, None)
