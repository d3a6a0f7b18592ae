"""Departure operations for staff: list departures with their places, close or reopen one,
give it a capacity of its own, and cancel it (every live booking on it, then closed; after
boarding began, the tickets not through the gate cancelled or kept, as staff choose), each a
transaction under the departure's slot lock, announced to resellers as any slot change is."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from berth.domain.audit import departure_target
from berth.domain.bookings import ENDED, Booking, BookingStatus, as_of
from berth.domain.calendar import check_supported
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.catalog.lookup import find_option, find_product
from berth.domain.checkin import not_through, partly_through
from berth.domain.departures import DepartureOverride, NotThrough, check_capacity, check_note
from berth.domain.errors import BadRequest, InvalidAvailabilityId, UnprocessableEntity
from berth.domain.slots import Slot, check_day_range, slot_for_id
from berth.domain.staff import Actor
from berth.read_models.departures import Affected, Boarding, Departure, DepartureCancellation
from berth.services.availability import AvailabilityService
from berth.services.bookings.inputs import SUPPLIER
from berth.services.bookings.steps import BookingSteps
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.settings import Settings
from berth.store import audit_repo, bookings_reads, departures_repo, packages_repo
from berth.store.bookings_reads import BookingFilter
from berth.store.connection import DbConnection
from berth.store.database import Database

# The bookings a departure's cancellation cancels: those whose guests could still travel.
LIVE = (BookingStatus.ON_HOLD, BookingStatus.PENDING, BookingStatus.CONFIRMED)


def unused(booking: Booking) -> bool:
    """Whether the departure's cancellation cancels the booking: live, and none of its tickets
    admitted at the gate (a booking partly through the gate is used, as a REDEEMED one is)."""
    return booking.status in LIVE and not booking.admitted


@dataclass(frozen=True)
class DepartureChange:
    """What a PATCH sends; a field left out (None, `set_capacity` False) keeps its value.
    With `set_capacity`, `capacity` None goes back to the catalogue's."""

    closed: bool | None = None
    set_capacity: bool = False
    capacity: int | None = None
    note: str | None = None


class DepartureService:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        availability: AvailabilityService,
        steps: BookingSteps,
        observer: ChangeObserver,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._availability = availability
        self._steps = steps
        self._observer = observer

    # --- reads -------------------------------------------------------------------------------

    def _departure_of(
        self, catalog: Catalog, product_id: str, option_id: str, availability_id: str
    ) -> tuple[Product, Option, Slot]:
        product = find_product(catalog, product_id)
        option = find_option(product, option_id)
        slot = slot_for_id(product, option, availability_id)
        if slot is None:
            raise InvalidAvailabilityId(availability_id)
        return product, option, slot

    async def _describe(
        self, conn: DbConnection, product: Product, option: Option, slots: list[Slot]
    ) -> list[Departure]:
        if not slots:
            return []
        now = self._clock()
        policy = self._availability.policies.of(option)
        rental = policy.duration(option, None, None)
        states = await policy.states(conn, product, option, [policy.stretch(s, rental) for s in slots], now)
        first = min(s.start for s in slots).astimezone(UTC)
        last = max(s.start for s in slots).astimezone(UTC)
        overrides = await departures_repo.between(conn, product.id, option.id, first, last)
        held = await bookings_reads.held_places(conn, product.id, option.id, first, last, now)
        confirmed = await departures_repo.confirmed_places(conn, product.id, option.id, first, last)
        return [
            Departure(
                product,
                option,
                slot,
                overrides.get(slot.id),
                state,
                held.get(slot.id, 0),
                confirmed.get(slot.id, 0),
            )
            for slot, state in zip(slots, states, strict=True)
        ]

    async def find(
        self,
        catalog: Catalog,
        product_id: str | None,
        option_id: str | None,
        first: date,
        last: date,
    ) -> list[Departure]:
        """The departures from `first` to `last` (local dates) of one product (and option), or of
        every product, by start time."""
        check_day_range(first, last, self._settings.max_range_days)
        if product_id is None and option_id is not None:
            raise BadRequest("optionId needs productId")
        products = [find_product(catalog, product_id)] if product_id is not None else list(catalog.products)
        found: list[Departure] = []
        async with self._db.transaction(write=False) as conn:
            for product in products:
                options = (
                    [find_option(product, option_id)] if option_id is not None else list(product.options)
                )
                for option in options:
                    slots = self._availability.slots(catalog, product, option, first, last)
                    found.extend(await self._describe(conn, product, option, slots))
        return sorted(found, key=lambda d: (d.slot.start.astimezone(UTC), d.product.id, d.option.id))

    async def get(self, catalog: Catalog, product_id: str, option_id: str, availability_id: str) -> Departure:
        product, option, slot = self._departure_of(catalog, product_id, option_id, availability_id)
        async with self._db.transaction(write=False) as conn:
            return (await self._describe(conn, product, option, [slot]))[0]

    async def _on(self, conn: DbConnection, product: Product, option: Option, slot: Slot) -> list[Booking]:
        """The bookings on the departure, as they stand now."""
        found, _ = await bookings_reads.find_bookings(conn, departure_filter(product, option, slot))
        now = self._clock()
        return [as_of(b, now) for b in found]

    async def _live_on(
        self, conn: DbConnection, product: Product, option: Option, slot: Slot
    ) -> list[Booking]:
        """The bookings on the departure whose guests could still travel."""
        return [b for b in await self._on(conn, product, option, slot) if unused(b)]

    async def _boarding_on(
        self, conn: DbConnection, product: Product, option: Option, slot: Slot
    ) -> list[Booking]:
        """The bookings on the departure partly through the gate (a package's included booking
        aside: it stays as it is, priced with its package)."""
        return [
            b
            for b in await self._on(conn, product, option, slot)
            if partly_through(b) and b.package_booking_id is None
        ]

    async def affected(
        self, catalog: Catalog, product_id: str, option_id: str, availability_id: str
    ) -> Affected:
        """What cancelling the departure would cancel now, and the bookings partly through the
        gate, whose other tickets staff choose to cancel or keep."""
        product, option, slot = self._departure_of(catalog, product_id, option_id, availability_id)
        async with self._db.transaction(write=False) as conn:
            live = await self._live_on(conn, product, option, slot)
            boarding = await self._boarding_on(conn, product, option, slot)
        return Affected(
            len(live),
            tuple(sorted({b.connection_id for b in live})),
            tuple(Boarding(b, not_through(b)) for b in boarding),
        )

    # --- changes -----------------------------------------------------------------------------

    async def _lock(self, conn: DbConnection, product: Product, option: Option, slot: Slot) -> None:
        policy = self._availability.policies.of(option)
        await self._steps.locks.lock(conn, [policy.lock_key(product, option, slot)])

    async def _save(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        before: DepartureOverride | None,
        after: DepartureOverride,
    ) -> None:
        await departures_repo.save(conn, after, existed=before is not None)
        was = (before.closed, before.capacity) if before is not None else (False, None)
        if was != (after.closed, after.capacity):  # a note alone changes nothing resellers see
            await self._observer.slots_changed(conn, [(product.id, option.id, slot.id)])

    def _blank(self, product: Product, option: Option, slot: Slot) -> DepartureOverride:
        return DepartureOverride(product.id, option.id, slot.id, slot.start.astimezone(UTC))

    async def change(
        self,
        catalog: Catalog,
        product_id: str,
        option_id: str,
        availability_id: str,
        change: DepartureChange,
        *,
        actor: Actor,
    ) -> Departure:
        """Close or reopen the departure, set or clear its capacity, or note something on it;
        each of these that changes something is in the audit trail."""
        product, option, slot = self._departure_of(catalog, product_id, option_id, availability_id)
        if change.note is not None:
            check_note(change.note)
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            await self._lock(conn, product, option, slot)
            before = await departures_repo.get(conn, product.id, option.id, slot.id)
            after = before or self._blank(product, option, slot)
            if change.closed is not None:
                after = replace(after, closed=change.closed)
            if change.note is not None:
                after = replace(after, note=change.note)
            if change.set_capacity:
                capacity = change.capacity
                if capacity is not None:
                    policy = self._availability.policies.of(option)
                    stretched = policy.stretch(slot, policy.duration(option, None, None))
                    (held,) = await policy.held(conn, product, option, [stretched], now)
                    check_capacity(slot.id, capacity, held)
                after = replace(after, capacity=capacity)
            after = replace(after, updated_at=now)
            await self._save(conn, product, option, slot, before, after)
            await self._audit(conn, actor, product, option, slot, before, after, now)
            return (await self._describe(conn, product, option, [slot]))[0]

    async def _audit(
        self,
        conn: DbConnection,
        actor: Actor,
        product: Product,
        option: Option,
        slot: Slot,
        before: DepartureOverride | None,
        after: DepartureOverride,
        at: datetime,
    ) -> None:
        was = before or self._blank(product, option, slot)
        target = departure_target(product.id, option.id, slot.id, _label(product, option, slot))
        changes: list[tuple[str, dict[str, object]]] = []
        if was.closed != after.closed:
            changes.append(("departure.close" if after.closed else "departure.reopen", {}))
        if was.capacity != after.capacity:
            changes.append(("departure.capacity", {"from": was.capacity, "to": after.capacity}))
        if was.note != after.note:
            changes.append(("departure.note", {"note": after.note}))
        for action, details in changes:
            await audit_repo.record(conn, actor, action, target, details, at=at)

    async def cancel(
        self,
        catalog: Catalog,
        product_id: str,
        option_id: str,
        availability_id: str,
        reason: str,
        *,
        actor: Actor,
        not_through_tickets: NotThrough | None = None,
    ) -> DepartureCancellation:
        """Cancel every live booking on the departure with `reason` (a package booking with its
        included bookings, whichever of them is on it; orders follow), then close it: all in one
        transaction, each reseller told through its webhooks after the commit. Once boarding
        began, a booking partly through the gate is used, not cancelled: its tickets not through
        are cancelled or kept as `not_through_tickets` says (which must be given then)."""
        product, option, slot = self._departure_of(catalog, product_id, option_id, availability_id)
        if not reason.strip():
            raise BadRequest("reason must not be empty: resellers pass it on to their guests")
        now = self._clock()
        cancelled: dict[str, str] = {}  # booking id -> connection id
        done: set[str] = set()
        boarding: list[Boarding] = []
        async with self._db.transaction(write=True) as conn:
            # Orders and bookings lock before the slot, as every writer locks them; a
            # reservation that got in before the slot's lock is found by the second pass.
            for second_pass in (False, True):
                if second_pass:
                    await self._lock(conn, product, option, slot)
                else:
                    boarding = await self._not_through(
                        conn, catalog, product, option, slot, reason, not_through_tickets
                    )
                for booking in await self._live_on(conn, product, option, slot):
                    if booking.id not in cancelled:
                        await self._cancel_booking(conn, catalog, booking, reason, done)
                        cancelled[booking.id] = booking.connection_id
            before = await departures_repo.get(conn, product.id, option.id, slot.id)
            after = replace(before or self._blank(product, option, slot), closed=True, updated_at=now)
            await self._save(conn, product, option, slot, before, after)
            details: dict[str, object] = {"reason": reason, "bookings": len(cancelled)}
            if boarding:
                assert not_through_tickets is not None
                details["notThrough"] = not_through_tickets.value
                details["ticketsNotThrough"] = {
                    b.booking.supplier_reference: [i.supplier_reference for i in b.waiting] for b in boarding
                }
            await audit_repo.record(
                conn, actor, "departure.cancel",
                departure_target(product.id, option.id, slot.id, _label(product, option, slot)),
                details, at=now,
            )  # fmt: skip
            departure = (await self._describe(conn, product, option, [slot]))[0]
        changed = {**cancelled}
        if not_through_tickets is NotThrough.CANCEL:
            changed |= {b.booking.id: b.booking.connection_id for b in boarding}
        return DepartureCancellation(
            departure,
            tuple(cancelled),
            tuple(sorted(set(changed.values()))),
            tuple(boarding),
            not_through_tickets if boarding else None,
        )

    async def _not_through(
        self,
        conn: DbConnection,
        catalog: Catalog,
        product: Product,
        option: Option,
        slot: Slot,
        reason: str,
        choice: NotThrough | None,
    ) -> list[Boarding]:
        """The bookings partly through the gate (locked), each with its tickets not through:
        cancelled (`NotThrough.CANCEL`: the guest told by email where the booking asked for
        emails, the reseller by its webhook) or kept; a cancellation after boarding began that
        does not say which is refused, changing nothing."""
        found: list[Boarding] = []
        for booking in await self._boarding_on(conn, product, option, slot):
            locked = as_of(await self._steps.lock_in(conn, booking), self._clock())
            if partly_through(locked):
                found.append(Boarding(locked, not_through(locked)))
        if found and choice is None:
            guests = sum(len(b.waiting) for b in found)
            raise UnprocessableEntity(
                f"Boarding began: {len(found)} booking(s) on the departure have {guests} ticket(s) not "
                "through the gate; say whether those tickets are cancelled (notThrough CANCEL) or kept "
                "(notThrough KEEP)"
            )
        if choice is NotThrough.CANCEL:
            for boarded in found:
                after = await self._steps.cancel_not_through_in(
                    conn, catalog, boarded.booking, reason, cause="departure"
                )
                await self._steps.follow_in(conn, catalog, [(boarded.booking, after)])
        return found

    async def _cancel_booking(
        self, conn: DbConnection, catalog: Catalog, booking: Booking, reason: str, done: set[str]
    ) -> None:
        """Cancel one booking as staff cancel it (whatever its cutoff), with its companions; an
        included booking is cancelled with its whole package."""
        target = booking
        if booking.package_booking_id is not None:
            parent = await bookings_reads.get_by_id(conn, booking.package_booking_id)
            target = parent if parent is not None else booking
        if target.id in done:
            return
        done.add(target.id)
        locked = as_of(await self._steps.lock_in(conn, target), self._clock())
        members = await packages_repo.package_members(conn, [target.id]) if target is not booking else []
        if target is not booking and not (
            unused(locked) and all(m.status in ENDED or unused(m) for m in members)
        ):  # a package already used (one of its bookings admitted at the gate): this part only
            locked = as_of(await self._steps.lock_in(conn, booking), self._clock())
        if not unused(locked):
            return

        def step(c: DbConnection, b: Booking) -> Awaitable[Booking]:
            return self._steps.cancel_in(c, catalog, b, reason, force=True, actor=SUPPLIER, cause="departure")

        await self._steps.with_companions(
            conn, catalog, locked, "cancel", step, lambda c, b, _: step(c, b), staff=True, skip=ENDED
        )


def departure_filter(product: Product, option: Option, slot: Slot) -> BookingFilter:
    """Every booking on one departure (the date narrows the index range)."""
    return BookingFilter(
        product_id=product.id, option_id=option.id, date_from=slot.local_date, date_to=slot.local_date,
        availability_id=slot.id,
    )  # fmt: skip


def day_range(local_date: date | None, start: date | None, end: date | None) -> tuple[date, date]:
    """The dates a departures query covers: `localDate`, or `localDateStart`..`localDateEnd`."""
    if local_date is not None:
        if start is not None or end is not None:
            raise BadRequest("Send localDate, or localDateStart with localDateEnd, not both")
        check_supported("localDate", local_date)
        return local_date, local_date
    if start is None or end is None:
        raise BadRequest("Send localDate, or localDateStart with localDateEnd")
    check_supported("localDateStart", start)
    check_supported("localDateEnd", end)
    return start, end


def _label(product: Product, option: Option, slot: Slot) -> str:
    """How the audit trail names a departure: product, option and local start."""
    return f"{product.id} / {option.id} / {slot.start.strftime('%Y-%m-%d %H:%M')}"
