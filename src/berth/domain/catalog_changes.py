"""What importing a catalogue would change, and which live bookings it would take places from.

`compare_catalogs(before, after, bookings, now)` is pure: the service hands in the bookings
that may hold places, as `HeldBooking`s (what the check reads of each, not the whole record:
an import may read tens of thousands). It answers
- the products, options and units added, changed (with the file keys that differ) or removed;
- the departures that lose places (removed, closed, or a lower capacity) from now to the last
  date with a live booking (the booking horizon; with no live booking nothing is compared);
- the conflicts: live bookings on departures ahead (not yet left; for OPENING_HOURS, a day not
  yet over) or without a date, that the new catalogue would remove or shrink below what they
  hold. A live booking holds places: on hold and not expired, pending, confirmed (and redeemed
  early). "Below what they hold" depends on how the option counts places:
  - plain capacity: the departure's capacity below the places its live bookings hold;
  - rentals: the stock at a rental's pick-up below the most items out at one instant of it
    (the check the booking passed when made);
  - resources: a resource of a booking's allocation removed, not serving the departure any
    more, with fewer places than allocated on it in the departure, or one of its seats removed
    or blocked (and the departure's own capacity, as for plain capacity).
  Only what this import takes away counts: a departure already gone, or a capacity already
  below the places held and not lowered further, is not a conflict.
- the contracts' nets it puts above the retail they apply to (`nets_above_retail`): a price
  list entry of a connection's contract (not revoked) whose net the new catalogue's retail is
  below, where the old one's was not, and whose entry does not accept it (`allowAboveRetail`).
  Staff choose what happens before such an import is saved (docs/contracts.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from berth.domain.bookings import BookingStatus, holds_places
from berth.domain.catalog import Catalog, CatalogModel, Option, Product, Resource
from berth.domain.catalog_values import value_changes
from berth.domain.connections import Connection
from berth.domain.contracts import NetAboveRetail, nets_above_retail
from berth.domain.errors import BadRequest
from berth.domain.rentals import HeldInterval, peak_held
from berth.domain.resources import Allocation, places_of, serves, serving
from berth.domain.slots import Slot, slot_for_id, slots_between


class Change(StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    REMOVED = "removed"


@dataclass(frozen=True)
class ItemChange:
    """A product, option (with `option_id`) or unit (with `unit_id`) added, changed or removed;
    `fields`: for a change, the file keys that differ (its options or units are items of their own);
    `values`: what they were and are, in a few words (`EUR 25.00 -> 27.00`)."""

    change: Change
    product_id: str
    option_id: str | None = None
    unit_id: str | None = None
    fields: tuple[str, ...] = ()
    values: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return "unit" if self.unit_id else "option" if self.option_id else "product"

    @property
    def name(self) -> str:
        return "/".join(part for part in (self.product_id, self.option_id, self.unit_id) if part)


class LossReason(StrEnum):
    REMOVED = "removed"  # no such departure any more
    CLOSED = "closed"  # a closed date
    LOWERED = "capacity lowered"


@dataclass(frozen=True)
class DepartureLoss:
    """A departure with fewer places: capacity `before` (None: no limit) to `after` (0 when
    removed or closed); `booked`: the places its live bookings hold."""

    product_id: str
    option_id: str
    availability_id: str
    reason: LossReason
    before: int | None
    after: int
    booked: int


@dataclass(frozen=True, slots=True)
class HeldBooking:
    """What the check reads of a booking that may hold places."""

    supplier_reference: str
    reseller_reference: str | None
    status: BookingStatus
    test_mode: bool
    expires_at: datetime | None
    product_id: str
    option_id: str
    availability_id: str | None
    slot_start: datetime | None
    slot_end: datetime | None
    local_date: date | None
    pax: int
    unit_ids: tuple[str, ...]
    rental_duration_id: str | None
    resource_allocations: tuple[Allocation, ...]

    def holds_places(self, now: datetime) -> bool:
        return holds_places(self.test_mode, self.status, self.expires_at, now)


@dataclass(frozen=True)
class BookedPlaces:
    supplier_reference: str
    reseller_reference: str | None
    status: BookingStatus
    places: int


@dataclass(frozen=True)
class Conflict:
    """Live bookings of one departure (None: bookings without a date) the import would hurt."""

    product_id: str
    option_id: str
    availability_id: str | None
    reason: str
    bookings: tuple[BookedPlaces, ...]


@dataclass(frozen=True)
class ContractNet:
    """A connection's contract net the import puts above the retail it applies to."""

    connection_id: str
    connection_name: str
    net: NetAboveRetail

    def __str__(self) -> str:
        return f"{self.connection_name}: {self.net}"


@dataclass(frozen=True)
class CatalogChanges:
    supplier_changed: bool
    items: tuple[ItemChange, ...]
    horizon_end: date | None  # the last date with a live booking: departures compared up to it
    departures: tuple[DepartureLoss, ...]
    conflicts: tuple[Conflict, ...]
    nets_above_retail: tuple[ContractNet, ...] = ()

    @property
    def changed(self) -> bool:
        return self.supplier_changed or bool(self.items)

    @property
    def affected_bookings(self) -> int:
        return len({b.supplier_reference for c in self.conflicts for b in c.bookings})


class ImportRefused(BadRequest):
    """The import would remove or shrink what live bookings hold and was not forced
    (`bookings`), or put contracts' nets above the retail and staff did not choose to sell
    them at the retail (`nets`)."""

    def __init__(self, changes: CatalogChanges, *, bookings: bool = True, nets: bool = False) -> None:
        reasons = []
        if bookings:
            reasons.append(f"remove or shrink what {changes.affected_bookings} live booking(s) hold")
        if nets:
            listed = "; ".join(str(n) for n in changes.nets_above_retail)
            reasons.append(
                f"put {len(changes.nets_above_retail)} contract net(s) above the retail they apply to ({listed})"
            )
        super().__init__(f"The catalogue would {' and '.join(reasons)}; nothing was imported")
        self.changes = changes
        self.bookings = bookings
        self.nets = nets


def compare_catalogs(
    before: Catalog,
    after: Catalog,
    bookings: Sequence[HeldBooking],
    now: datetime,
    connections: Sequence[Connection] = (),
) -> CatalogChanges:
    live = [b for b in bookings if b.holds_places(now)]
    old, new = _Departures(before), _Departures(after)
    upcoming = [b for b in live if _upcoming(old, b, now)]
    horizon_end = max((b.local_date for b in upcoming if b.local_date is not None), default=None)
    return CatalogChanges(
        supplier_changed=before.supplier != after.supplier,
        items=tuple(_item_changes(before, after)),
        horizon_end=horizon_end,
        departures=tuple(_departure_losses(before, after, live, now, horizon_end)),
        conflicts=_conflicts(old, new, live, upcoming),
        nets_above_retail=tuple(_nets_put_above_retail(connections, before, after)),
    )


def _nets_put_above_retail(
    connections: Iterable[Connection], before: Catalog, after: Catalog
) -> Iterable[ContractNet]:
    """The connections' contract nets above a retail of `after` that were not above one of
    `before` (those already were are sold at the retail since an earlier choice)."""
    for connection in connections:
        if not connection.active or not connection.contract.rate.net_prices:
            continue
        already = {found.key for found in nets_above_retail(connection.contract, before)}
        for found in nets_above_retail(connection.contract, after):
            if found.key not in already:
                yield ContractNet(connection.id, connection.name, found)


# --- products, options, units ----------------------------------------------------------------


def _document(model: CatalogModel, without: str) -> dict[str, Any]:
    document = model.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    document.pop(without, None)
    return document


def _changed(
    before: CatalogModel, after: CatalogModel, without: str = ""
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys that differ, and what they were and are."""
    old, new = _document(before, without), _document(after, without)
    fields = tuple(key for key in {**old, **new} if old.get(key) != new.get(key))
    return fields, tuple(words for key in fields for words in value_changes(key, old.get(key), new.get(key)))


def _item_changes(before: Catalog, after: Catalog) -> Iterable[ItemChange]:
    for product in before.products:
        new_product = after.product(product.id)
        if new_product is None:
            yield ItemChange(Change.REMOVED, product.id)
            continue
        fields, values = _changed(product, new_product, "options")
        if fields:
            yield ItemChange(Change.CHANGED, product.id, fields=fields, values=values)
        for option in product.options:
            new_option = new_product.option(option.id)
            if new_option is None:
                yield ItemChange(Change.REMOVED, product.id, option.id)
                continue
            fields, values = _changed(option, new_option, "units")
            if fields:
                yield ItemChange(Change.CHANGED, product.id, option.id, fields=fields, values=values)
            for unit in option.units:
                new_unit = new_option.unit(unit.id)
                if new_unit is None:
                    yield ItemChange(Change.REMOVED, product.id, option.id, unit.id)
                    continue
                fields, values = _changed(unit, new_unit)
                if fields:
                    yield ItemChange(
                        Change.CHANGED, product.id, option.id, unit.id, fields=fields, values=values
                    )
            for unit in new_option.units:
                if option.unit(unit.id) is None:
                    yield ItemChange(Change.ADDED, product.id, option.id, unit.id)
        for option in new_product.options:
            if product.option(option.id) is None:
                yield ItemChange(Change.ADDED, product.id, option.id)
    for product in after.products:
        if before.product(product.id) is None:
            yield ItemChange(Change.ADDED, product.id)


# --- departures --------------------------------------------------------------------------------


def _today(product: Product, now: datetime) -> date:
    return now.astimezone(ZoneInfo(product.time_zone)).date()


class _Departures:
    """The options and departures of one catalogue that bookings name, each looked up once."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._slots: dict[tuple[str, str, str], Slot | None] = {}

    def option(self, product_id: str, option_id: str) -> Option | None:
        product = self.catalog.product(product_id)
        return product.option(option_id) if product is not None else None

    def slot(self, product_id: str, option_id: str, availability_id: str) -> Slot | None:
        key = (product_id, option_id, availability_id)
        if key not in self._slots:
            product = self.catalog.product(product_id)
            option = product.option(option_id) if product is not None else None
            found = slot_for_id(product, option, availability_id) if product and option else None
            self._slots[key] = found
        return self._slots[key]


def _ahead(slot: Slot, now: datetime) -> bool:
    """A departure that has not left, or a day (OPENING_HOURS) that has not ended."""
    return (slot.end if slot.all_day else slot.start) > now


def _upcoming(departures: _Departures, booking: HeldBooking, now: datetime) -> bool:
    """On a departure ahead (or with no date at all)."""
    if booking.availability_id is None or booking.slot_start is None:
        return True
    slot = departures.slot(booking.product_id, booking.option_id, booking.availability_id)
    return _ahead(slot, now) if slot is not None else booking.slot_start > now


def _departure_capacity(option: Option, slot: Slot) -> int | None:
    """The places a departure offers (None: no limit): 0 on a closed date; with resources, the
    tightest required group's resources serving it, within the schedule's capacity."""
    if slot.closed:
        return 0
    capacity = slot.capacity
    for group in option.resource_groups:
        if group.required:
            places = sum(places_of(resource) for resource in serving(group, slot))
            capacity = places if capacity is None else min(capacity, places)
    return capacity


def _less(after: int | None, before: int | None) -> bool:
    return after is not None and (before is None or after < before)


def _departure_losses(
    before: Catalog, after: Catalog, live: Sequence[HeldBooking], now: datetime, horizon_end: date | None
) -> Iterable[DepartureLoss]:
    if horizon_end is None:
        return
    booked: dict[tuple[str, str, str], int] = defaultdict(int)
    for b in live:
        if b.availability_id is not None:
            booked[(b.product_id, b.option_id, b.availability_id)] += b.pax
    for product in before.products:
        new_product = after.product(product.id)
        if new_product is None:
            continue
        first = _today(product, now)
        for option in product.options:
            new_option = new_product.option(option.id)
            if new_option is None or (new_option == option and new_product.time_zone == product.time_zone):
                continue
            new_slots = {s.id: s for s in slots_between(new_product, new_option, first, horizon_end)}
            for slot in slots_between(product, option, first, horizon_end):
                if not _ahead(slot, now):
                    continue
                old = _departure_capacity(option, slot)
                new_slot = new_slots.get(slot.id)
                new = _departure_capacity(new_option, new_slot) if new_slot is not None else 0
                if old == 0 or not _less(new, old):
                    continue
                assert new is not None
                reason = (
                    LossReason.REMOVED
                    if new_slot is None
                    else LossReason.CLOSED
                    if new_slot.closed
                    else LossReason.LOWERED
                )
                places = booked[(product.id, option.id, slot.id)]
                yield DepartureLoss(product.id, option.id, slot.id, reason, old, new, places)


# --- live bookings in the way ------------------------------------------------------------------

_Key = tuple[str, str, str | None, str]  # product, option, availability id, reason


def _conflicts(
    old: _Departures, new: _Departures, live: Sequence[HeldBooking], upcoming: Sequence[HeldBooking]
) -> tuple[Conflict, ...]:
    found: dict[_Key, dict[str, HeldBooking]] = defaultdict(dict)  # by supplier reference, in order

    def add(booking: HeldBooking, reason: str) -> None:
        key = (booking.product_id, booking.option_id, booking.availability_id, reason)
        found[key].setdefault(booking.supplier_reference, booking)

    by_slot: dict[tuple[str, str, str], list[HeldBooking]] = defaultdict(list)
    intervals: dict[tuple[str, str], list[HeldInterval]] = defaultdict(list)  # rentals' items out
    for booking in live:
        if booking.slot_start is not None and booking.slot_end is not None:
            interval = HeldInterval(booking.slot_start, booking.slot_end, booking.pax)
            intervals[(booking.product_id, booking.option_id)].append(interval)
    for booking in upcoming:
        for reason in _removals(old, new, booking):
            add(booking, reason)
        if booking.availability_id is not None:
            by_slot[(booking.product_id, booking.option_id, booking.availability_id)].append(booking)
    for (product_id, option_id, availability_id), on_slot in by_slot.items():
        old_option, new_option = old.option(product_id, option_id), new.option(product_id, option_id)
        old_slot = old.slot(product_id, option_id, availability_id)
        new_slot = new.slot(product_id, option_id, availability_id)
        if old_option is None or new_option is None or old_slot is None or new_slot is None:
            continue
        if new_option.is_rental:
            held = intervals[(product_id, option_id)]
            for booking, reason in _rental_shortfalls(old_slot, new_slot, on_slot, held):
                add(booking, reason)
            continue
        booked = sum(b.pax for b in on_slot)
        if _less(new_slot.capacity, old_slot.capacity) and booked > (new_slot.capacity or 0):
            for booking in on_slot:
                add(booking, f"capacity {new_slot.capacity} is below the {booked} places booked")
        for booking, reason in _resource_shortfalls(old_option, old_slot, new_option, new_slot, on_slot):
            add(booking, reason)

    def order(key: _Key) -> tuple[datetime, str, str, str]:
        product_id, option_id, availability_id, reason = key
        start = (
            datetime.fromisoformat(availability_id) if availability_id else datetime.min.replace(tzinfo=UTC)
        )
        return start, product_id, option_id, reason

    return tuple(
        Conflict(*key, bookings=tuple(_places(b) for b in found[key].values()))
        for key in sorted(found, key=order)
    )


def _places(booking: HeldBooking) -> BookedPlaces:
    return BookedPlaces(booking.supplier_reference, booking.reseller_reference, booking.status, booking.pax)


def _removals(old: _Departures, new: _Departures, booking: HeldBooking) -> Iterable[str]:
    """What the booking names that this import removes: its product, option, units, rental
    duration, departure; or closes: its date."""
    option = old.option(booking.product_id, booking.option_id)
    if option is None:
        return  # gone before this import
    if new.catalog.product(booking.product_id) is None:
        yield f"product {booking.product_id!r} is removed"
        return
    new_option = new.option(booking.product_id, booking.option_id)
    if new_option is None:
        yield f"option {option.id!r} is removed"
        return
    for unit_id in dict.fromkeys(booking.unit_ids):
        if option.unit(unit_id) is not None and new_option.unit(unit_id) is None:
            yield f"unit {unit_id!r} is removed"
    duration = booking.rental_duration_id
    if duration is not None and option.rental_duration(duration) and not new_option.rental_duration(duration):
        yield f"rental duration {duration!r} is removed"
    if booking.availability_id is None:
        return
    old_slot = old.slot(booking.product_id, booking.option_id, booking.availability_id)
    new_slot = new.slot(booking.product_id, booking.option_id, booking.availability_id)
    if old_slot is None:
        return
    if new_slot is None:
        yield "the departure is removed"
    elif new_slot.closed and not old_slot.closed:
        yield "the date is closed"


def _rental_shortfalls(
    old_slot: Slot, new_slot: Slot, on_slot: Sequence[HeldBooking], held: Sequence[HeldInterval]
) -> Iterable[tuple[HeldBooking, str]]:
    if not _less(new_slot.capacity, old_slot.capacity):
        return
    stock = new_slot.capacity or 0
    rentals = [
        (b, b.slot_start, b.slot_end) for b in on_slot if b.slot_start is not None and b.slot_end is not None
    ]
    peaks = peak_held(
        held, [(start, end) for _, start, end in rentals if start is not None and end is not None]
    )
    for (booking, _, _), peak in zip(rentals, peaks, strict=True):
        if peak > stock:
            yield booking, f"a stock of {stock} is below the {peak} items out during the rental"


def _resource_shortfalls(
    old_option: Option, old_slot: Slot, new_option: Option, new_slot: Slot, held: Sequence[HeldBooking]
) -> Iterable[tuple[HeldBooking, str]]:
    on_resource: dict[str, list[HeldBooking]] = defaultdict(list)
    places: dict[str, int] = defaultdict(int)
    for booking in held:
        for allocation in booking.resource_allocations:
            on_resource[allocation.resource_id].append(booking)
            places[allocation.resource_id] += allocation.places
    for resource_id, bookings in on_resource.items():
        bookings = list({b.supplier_reference: b for b in bookings}.values())
        old, new = old_option.find_resource(resource_id), new_option.find_resource(resource_id)
        if old is None:
            continue  # gone before this import
        old_resource = old[1]
        if new is None:
            yield from ((b, f"resource {resource_id!r} is removed") for b in bookings)
            continue
        resource = new[1]
        if serves(old_resource, old_slot) and not serves(resource, new_slot):
            yield from (
                (b, f"resource {resource_id!r} does not serve this departure any more") for b in bookings
            )
            continue
        new_places, old_places = places_of(resource), places_of(old_resource)
        if new_places < places[resource_id] and new_places < old_places:
            reason = f"resource {resource_id!r} has {new_places} places, below the {places[resource_id]} booked on it"
            yield from ((b, reason) for b in bookings)
        if resource.seat_map is not None:
            yield from _seats_lost(resource_id, _bookable(old_resource), _bookable(resource), bookings)


def _bookable(resource: Resource) -> set[str]:
    if resource.seat_map is None:
        return set()
    return {seat.id for seat in resource.seat_map.seats} - set(resource.seat_map.blocked)


def _seats_lost(
    resource_id: str, before: set[str], after: set[str], bookings: Sequence[HeldBooking]
) -> Iterable[tuple[HeldBooking, str]]:
    for booking in bookings:
        lost = [
            seat
            for allocation in booking.resource_allocations
            if allocation.resource_id == resource_id
            for seat in allocation.seat_ids
            if seat in before and seat not in after
        ]
        if lost:
            yield booking, f"seats {', '.join(lost)} of resource {resource_id!r} are removed or blocked"
