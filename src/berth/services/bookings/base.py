"""What every step of a booking shares: the services it runs with, the extension points
registered on it (companions, confirmation checks, the order follower), and what a step does
once it has changed a booking: its history, tickets, announcements and companions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

from berth.domain.bookings import (
    Booking,
    BookingStatus,
    as_of,
)
from berth.domain.catalog import Catalog
from berth.domain.errors import (
    OctoError,
    UnprocessableEntity,
)
from berth.domain.tickets import ISSUED, ticket_keys
from berth.services.allotments import AllotmentService
from berth.services.bookings.capacity import CapacityPolicies
from berth.services.bookings.extensions import BookingExtensions
from berth.services.bookings.inputs import (
    Change,
)
from berth.services.bookings.loader import BookingLoader
from berth.services.bookings.locks import SlotKey, SlotLocks
from berth.services.clock import Clock
from berth.services.events import ChangeObserver, GuestNotices
from berth.settings import Settings
from berth.store import bookings_repo, orders_repo, tickets_repo
from berth.store.connection import DbConnection


def event_detail(booking: Booking, detail: dict[str, Any] | None) -> dict[str, Any]:
    """A history entry's detail: the booking's status after the step, and the step's own."""
    return {"status": booking.status.value, **(detail or {})}


class Companions(Protocol):
    """A capability whose bookings change together (octo/packages: a package booking and its
    included bookings)."""

    async def companions(
        self, conn: DbConnection, booking: Booking, verb: str, *, staff: bool
    ) -> list[Booking]:
        """The bookings (locked) that `verb` (confirm, extend, cancel, update) must change
        with `booking`; refuses a reseller's `verb` on a booking that can only change through
        another (`staff`: the supplier's, which may change any booking on its own)."""

    def named(self, companion: Booking) -> str:
        """How a refusal names one of the bookings `companions` gave ("The included booking
        'x'")."""


# A step applied to the booking: (conn, booking) -> the booking after it.
Step = Callable[[DbConnection, Booking], Awaitable[Booking]]
# The step applied to each companion, given the booking after its own step.
CompanionStep = Callable[[DbConnection, Booking, Booking], Awaitable[Booking]]
PARTICIPLES = {"confirm": "confirmed", "extend": "extended", "cancel": "cancelled"}


class ConfirmationCheck(Protocol):
    """A precondition of every confirmation, asked inside its transaction with the booking as
    it is about to be stored (the payments': a paying channel's booking is confirmed only for
    a captured payment of its amount, which the confirmation claims). Raises to refuse."""

    async def confirming(self, conn: DbConnection, booking: Booking) -> None: ...


class OrderFollower(Protocol):
    """Brings orders (octo/cart) in line with their bookings after booking-level changes."""

    async def follow_in(self, conn: DbConnection, catalog: Catalog, changes: Sequence[Change]) -> None: ...


def _held(booking: Booking | None, now: datetime) -> tuple[SlotKey, datetime | None, int] | None:
    """What a booking holds: its slot, when its interval ends, and how many places."""
    if booking is None or booking.availability_id is None or not booking.holds_places(now):
        return None
    return (booking.product_id, booking.option_id, booking.availability_id), booking.slot_end, booking.pax


class StepsBase:
    def __init__(
        self,
        settings: Settings,
        clock: Clock,
        observer: ChangeObserver,
        policies: CapacityPolicies,
        locks: SlotLocks,
        loader: BookingLoader,
        allotments: AllotmentService,
        extensions: BookingExtensions | None = None,
    ) -> None:
        self._settings = settings
        self.allotments = allotments
        self._clock = clock
        self._observer = observer
        self.policies = policies
        self.locks = locks
        self.loader = loader
        self.extensions = extensions or BookingExtensions()
        # The order service, once built (it is built on these steps).
        self.orders: OrderFollower | None = None
        # The guests' emails, once built (receipts and notices, queued in each step's transaction).
        self.notices: GuestNotices | None = None
        self._companions: tuple[Companions, ...] = ()
        self._confirmation_checks: tuple[ConfirmationCheck, ...] = ()

    def add_confirmation_check(self, check: ConfirmationCheck) -> None:
        self._confirmation_checks = (*self._confirmation_checks, check)

    def add_companions(self, companions: Companions) -> None:
        self._companions = (*self._companions, companions)

    # --- history and events ----------------------------------------------------------------

    async def lock_in(self, conn: DbConnection, booking: Booking) -> Booking:
        """Lock a booking read in this transaction and answer it as it stands once locked.
        The booking's order is locked first, as every writer of an order's bookings does."""
        if booking.order_id is not None:
            await orders_repo.lock_order(conn, booking.order_id)
        return await bookings_repo.lock_booking(conn, booking)

    async def follow_in(self, conn: DbConnection, catalog: Catalog, changes: Sequence[Change]) -> None:
        """After booking-level changes (not an order's own steps): their orders follow them."""
        ordered = [(before, after) for before, after in changes if after.order_id and before != after]
        if ordered and self.orders is not None:
            await self.orders.follow_in(conn, catalog, ordered)

    async def changed(
        self,
        conn: DbConnection,
        catalog: Catalog,
        before: Booking | None,
        after: Booking,
        kind: str,
        actor: str,
        detail: dict[str, Any] | None = None,
        slots: Sequence[SlotKey] | None = None,
        *,
        recorded: bool = False,
    ) -> None:
        """Record a step in the booking's history (unless `recorded` with the booking's row)
        and announce it: a booking_update for every change of an existing booking, an
        availability_update for each slot whose held places changed."""
        now = self._clock()
        await self.policies.booking_changed(conn, before, after, now)
        await self._issue_tickets(conn, catalog, before, after)
        if not recorded:
            await bookings_repo.add_event(conn, after.id, now, kind, actor, event_detail(after, detail))
        if before is not None:
            await self._observer.booking_changed(
                conn, lambda b: self.loader.exactly(conn, catalog, b), before, after
            )
        if self.notices is not None:
            await self.notices.booking_step(
                conn,
                lambda b: self.loader.exactly(conn, catalog, b),
                before,
                after,
                kind,
                actor,
                detail or {},
            )
        moved = self._moved_slots(catalog, before, after, now) if slots is None else slots
        if moved:
            await self._observer.slots_changed(conn, moved)

    async def _issue_tickets(
        self, conn: DbConnection, catalog: Catalog, before: Booking | None, after: Booking
    ) -> None:
        """Tokens for the ticket documents of a booking just issued, or of unit items it was
        given since (before the change is announced, so that its payload has the URLs)."""
        if after.status not in ISSUED:
            return
        if before is not None and before.status in ISSUED:
            kept = {item.uuid for item in before.unit_items}
            if all(item.uuid in kept for item in after.unit_items):
                return
        product = await self.loader.product(conn, catalog, after.product_id)
        await tickets_repo.issue(conn, after.id, ticket_keys(product, after))

    def _moved_slots(
        self, catalog: Catalog, before: Booking | None, after: Booking, now: datetime
    ) -> list[SlotKey]:
        """The slots whose held places differ between the two versions of a booking."""
        old, new = _held(before, now), _held(after, now)
        if old == new:
            return []
        keys: list[SlotKey] = []
        for booking, held in ((before, old), (after, new)):
            if booking is not None and held is not None:
                keys.extend(self.policies.counted_in(catalog, booking))
        return list(dict.fromkeys(keys))

    # --- groups of bookings ------------------------------------------------------------------

    async def companions(
        self, conn: DbConnection, booking: Booking, verb: str, *, staff: bool = False
    ) -> list[Booking]:
        """The bookings that change with `booking` (locked, as they stand now)."""
        return [member for _, member in await self._companions_of(conn, booking, verb, staff=staff)]

    async def _companions_of(
        self, conn: DbConnection, booking: Booking, verb: str, *, staff: bool
    ) -> list[tuple[Companions, Booking]]:
        """`companions`, each with the extension point that gave it."""
        now = self._clock()
        return [
            (companions, as_of(member, now))
            for companions in self._companions
            for member in await companions.companions(conn, booking, verb, staff=staff)
        ]

    async def with_companions(
        self,
        conn: DbConnection,
        catalog: Catalog,
        booking: Booking,
        verb: str,
        first: Step,
        companion: CompanionStep,
        *,
        staff: bool = False,
        skip: Sequence[BookingStatus] = (),
    ) -> Booking:
        """Apply `first` to the (locked, as-of-now) booking and `companion` to each of its
        companions not in a `skip` status: all of them change, or none; its order follows."""
        companions = await self._companions_of(conn, booking, verb, staff=staff)
        after = await first(conn, booking)
        for given_by, member in companions:
            if member.status in skip:
                continue
            try:
                await companion(conn, member, after)
            except OctoError as exc:
                done = PARTICIPLES[verb]
                raise UnprocessableEntity(
                    f"{given_by.named(member)} cannot be {done}: {exc.message}. Nothing was {done}",
                    uuid=booking.uuid,
                ) from None
        await self.follow_in(conn, catalog, [(booking, after)])
        return after
