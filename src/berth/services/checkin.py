"""Check-in at the gate (staff): a scan admits the tickets it names, once, whatever retries and
other phones do; an operator may take an admission back for a short while; a departure's
parties for the scanner to keep offline. Each change is one transaction under the booking's
lock, recorded in the booking's history, the audit trail and a booking_update webhook."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from berth.domain.bookings import Booking, BookingStatus
from berth.domain.catalog import Catalog
from berth.domain.catalog.lookup import find_option, find_product
from berth.domain.checkin import (
    UNDO_WINDOW,
    Admission,
    Departure,
    Scanned,
    ScanResult,
    admitted_earlier,
    another_day,
    on_departure,
    readings,
    refusal,
    wanted,
    with_admitted,
    without_admitted,
)
from berth.domain.errors import BadRequest, Conflict, InvalidAvailabilityId, NotFound, UnprocessableEntity
from berth.domain.slots import Slot, slot_for_id
from berth.domain.staff import Actor
from berth.read_models.bookings import BookingDetails
from berth.services.availability import today_in
from berth.services.bookings.inputs import SUPPLIER
from berth.services.bookings.steps import BookingSteps
from berth.services.bookings.supplier import booking_target
from berth.services.clock import Clock
from berth.store import audit_repo, bookings_reads, bookings_repo, checkin_repo
from berth.store.bookings_reads import BookingFilter
from berth.store.connection import DbConnection
from berth.store.database import Database


@dataclass(frozen=True)
class ScanRequest:
    code: str
    nonce: str
    departure: Departure | None = None
    unit_item_uuids: tuple[str, ...] | None = None
    device: str | None = None
    # Staff's "Admit anyway": admit tickets whose departure is on another day than today.
    admit_another_day: bool = False


@dataclass(frozen=True)
class ScanOutcome:
    """What the gate is told: the result, the party (None for an unknown code), the tickets
    this scan admitted, every ticket of the party through the gate, and the scanned ticket."""

    result: ScanResult
    code: str
    details: BookingDetails | None = None
    admitted: tuple[str, ...] = ()
    admissions: dict[str, Admission] | None = None
    scanned_unit: str | None = None
    replayed: bool = False
    # A code that names several bookings (one reseller reference used by two connections).
    ambiguous: int = 0


@dataclass(frozen=True)
class Party:
    details: BookingDetails
    admissions: dict[str, Admission]


def _asked(request: ScanRequest) -> dict[str, Any]:
    """What a scan asked for, kept with the scan to tell a retry from another scan under the
    same nonce (the device aside: it does not change what is admitted)."""
    gate = request.departure
    return {
        "code": request.code,
        "departure": [gate.product_id, gate.option_id, gate.availability_id] if gate else None,
        "unitItemUuids": sorted(request.unit_item_uuids) if request.unit_item_uuids else None,
    }


def _pick(found: Sequence[Scanned], gate: Departure | None) -> tuple[Scanned | None, int]:
    """The one booking or ticket a code names, preferring the gate's departure; (None, n) when
    it names n > 1 and the departure does not decide."""
    if len(found) > 1:
        here = [s for s in found if on_departure(s.booking, gate)] if gate else []
        if len(here) == 1:
            return here[0], 0
        return None, len(found)
    return (found[0] if found else None), 0


class CheckIn:
    def __init__(self, database: Database, clock: Clock, steps: BookingSteps) -> None:
        self._db = database
        self._clock = clock
        self._steps = steps
        self._loader = steps.loader

    async def _details(
        self, conn: DbConnection, catalog: Catalog, bookings: Sequence[Booking]
    ) -> list[BookingDetails]:
        """The bookings with what the gate is shown of them, from the catalogue: the slot's
        state and prices, which the gate does not show, are not read (the loader reads them
        for a booking whose product or option left the catalogue)."""
        found: list[BookingDetails] = []
        for booking in bookings:
            product = catalog.product(booking.product_id)
            option = product.option(booking.option_id) if product is not None else None
            if product is None or option is None:
                found.append(await self._loader.one(conn, catalog, booking))
                continue
            slot = slot_for_id(product, option, booking.availability_id) if booking.availability_id else None
            found.append(BookingDetails(booking, product, option, slot, None, cancellable=False))
        return found

    def slot(self, catalog: Catalog, departure: Departure) -> Slot:
        """The departure's slot (NOT_FOUND product or option, INVALID_AVAILABILITY_ID)."""
        product = find_product(catalog, departure.product_id)
        option = find_option(product, departure.option_id)
        slot = slot_for_id(product, option, departure.availability_id or "")
        if slot is None:
            raise InvalidAvailabilityId(departure.availability_id or "")
        return slot

    async def _find(self, conn: DbConnection, catalog: Catalog, request: ScanRequest) -> list[Scanned]:
        """What the code names, as given or else read leniently as one of Berth's references."""
        gate = request.departure
        start = self.slot(catalog, gate).start if gate is not None else None
        for reading in readings(request.code):
            found = await checkin_repo.find_code(conn, reading, gate, start)
            if found:
                return found
        return []

    def _today(self, catalog: Catalog, booking: Booking) -> date | None:
        """Today at the booking's departure's place (None: its product left the catalogue)."""
        product = catalog.product(booking.product_id)
        return today_in(product, self._clock()) if product is not None else None

    @staticmethod
    def _decide(
        scanned: Scanned, admissions: dict[str, Admission], request: ScanRequest, today: date | None
    ) -> tuple[ScanResult, list[str]]:
        """The scan's result and the tickets it admits, as the booking stands: tickets of
        another day's departure only when the scan says to admit them anyway."""
        result = refusal(scanned.booking, request.departure)
        if result is not None:
            return result, []
        earlier = admitted_earlier(scanned.booking, admissions)
        left = [item.uuid for item in wanted(scanned, request.unit_item_uuids) if item.uuid not in earlier]
        if not left:
            return ScanResult.ALREADY_ADMITTED, []
        if another_day(scanned.booking, today) and not request.admit_another_day:
            return ScanResult.ANOTHER_DAY, []
        return ScanResult.ADMITTED, left

    async def _read(
        self, conn: DbConnection, catalog: Catalog, request: ScanRequest
    ) -> tuple[Scanned | None, int, dict[str, Admission]]:
        scanned, ambiguous = _pick(await self._find(conn, catalog, request), request.departure)
        if scanned is None:
            return None, ambiguous, {}
        booking_id = scanned.booking.id
        return scanned, 0, (await checkin_repo.admissions_of(conn, [booking_id])).get(booking_id, {})

    async def lookup(self, catalog: Catalog, request: ScanRequest) -> ScanOutcome:
        """What the ticket is, admitting nothing (the viewer role's look-up): VALID where a
        scan would admit the tickets asked for, else the refusal a scan would answer."""
        async with self._db.transaction(write=False) as conn:
            scanned, ambiguous, admissions = await self._read(conn, catalog, request)
            if scanned is None:
                return ScanOutcome(ScanResult.UNKNOWN_CODE, request.code, ambiguous=ambiguous)
            result, _ = self._decide(scanned, admissions, request, self._today(catalog, scanned.booking))
            if result is ScanResult.ADMITTED:
                result = ScanResult.VALID
            [details] = await self._details(conn, catalog, [scanned.booking])
            unit = scanned.unit.uuid if scanned.unit else None
            return ScanOutcome(result, request.code, details, (), admissions, unit)

    async def scan(self, catalog: Catalog, request: ScanRequest, *, actor: Actor) -> ScanOutcome:
        """Admit the tickets the code names that are not through yet. A scan that admits is
        kept by its nonce with its outcome: sent again, it is answered the same and admits
        nothing more, or UNDONE when its admission was taken back since; the nonce sent with
        another code, departure or tickets is refused (Conflict). A scan that admits nothing
        is not kept: sent again, it is decided again.
        On SQLite, whose one writer at a time is the bottleneck, a scan is decided in a read
        first and takes the write lock only to admit; on PostgreSQL it is one transaction."""
        scanned: Scanned | None = None
        if self._db.is_sqlite:
            async with self._db.transaction(write=False) as conn:
                kept = await checkin_repo.scan(conn, request.nonce)
                if kept is not None:
                    return await self._replay(conn, catalog, request, kept)
                scanned, ambiguous, admissions = await self._read(conn, catalog, request)
                if scanned is None:
                    return ScanOutcome(ScanResult.UNKNOWN_CODE, request.code, ambiguous=ambiguous)
                today = self._today(catalog, scanned.booking)
                result, admitting = self._decide(scanned, admissions, request, today)
                if not admitting:
                    [details] = await self._details(conn, catalog, [scanned.booking])
                    unit = scanned.unit.uuid if scanned.unit else None
                    return ScanOutcome(result, request.code, details, (), admissions, unit)
        async with self._db.transaction(write=True) as conn:
            if scanned is None:
                scanned, ambiguous = _pick(await self._find(conn, catalog, request), request.departure)
                if scanned is None:
                    return ScanOutcome(ScanResult.UNKNOWN_CODE, request.code, ambiguous=ambiguous)
                booking = scanned.booking
            else:  # read in the transaction before: read again
                found = await bookings_reads.get_by_id(conn, scanned.booking.id)
                assert found is not None  # bookings are never deleted
                booking = found
            # Decided under the booking's lock: another phone may have been first.
            booking = await self._steps.lock_in(conn, booking)
            kept = await checkin_repo.scan(conn, request.nonce)
            if kept is not None:  # the same scan, sent again, was first
                return await self._replay(conn, catalog, request, kept)
            return await self._admit_locked(conn, catalog, Scanned(booking, scanned.unit), request, actor)

    async def _admit_locked(
        self, conn: DbConnection, catalog: Catalog, scanned: Scanned, request: ScanRequest, actor: Actor
    ) -> ScanOutcome:
        now = self._clock()
        booking = scanned.booking
        unit = scanned.unit.uuid if scanned.unit else None
        admissions = (await checkin_repo.admissions_of(conn, [booking.id])).get(booking.id, {})
        today = self._today(catalog, booking)
        result, admitting = self._decide(scanned, admissions, request, today)
        if admitting:
            on = booking.local_date if another_day(booking, today) else None
            booking = await self._admit(conn, catalog, booking, admitting, request, actor, now, on)
            admissions |= {u: Admission(u, now, actor.name, request.device, request.nonce) for u in admitting}
            outcome = {
                "result": result.value,
                "bookingId": booking.id,
                "admitted": admitting,
                "unit": unit,
                "asked": _asked(request),
            }
            await checkin_repo.keep_scan(conn, request.nonce, now, booking.id, outcome)
        [details] = await self._details(conn, catalog, [booking])
        return ScanOutcome(result, request.code, details, tuple(admitting), admissions, unit)

    async def _admit(
        self,
        conn: DbConnection,
        catalog: Catalog,
        booking: Booking,
        uuids: list[str],
        request: ScanRequest,
        actor: Actor,
        now: datetime,
        another: date | None,
    ) -> Booking:
        """`another`: the departure's day, when staff admitted another day's tickets anyway."""
        await checkin_repo.admit(
            conn, booking.id, [Admission(u, now, actor.name, request.device, request.nonce) for u in uuids]
        )
        changed = with_admitted(booking, set(uuids), now)
        detail = {"nonce": request.nonce}
        await self._record(conn, catalog, booking, changed, "admitted", uuids, actor, now, detail)
        await audit_repo.record(
            conn,
            actor,
            "checkin.admit",
            booking_target(booking),
            {
                "tickets": self._references(booking, uuids),
                "device": request.device,
                "nonce": request.nonce,
                "from": booking.status.value,
                "to": changed.status.value,
                **({"anotherDay": another.isoformat()} if another is not None else {}),
            },
            at=now,
        )
        return changed

    async def _record(
        self,
        conn: DbConnection,
        catalog: Catalog,
        before: Booking,
        after: Booking,
        kind: str,
        uuids: Sequence[str],
        actor: Actor,
        now: datetime,
        said: dict[str, Any],
    ) -> None:
        """Store the booking and announce it once: its history (the tickets, who, and `said`:
        the scan's nonce, or the reason), the booking_update webhook, its order."""
        await bookings_repo.save_booking(conn, after, before)
        detail = {"tickets": self._references(before, uuids), "by": actor.name, **said}
        await self._steps.changed(conn, catalog, before, after, kind, SUPPLIER, detail)
        await self._steps.follow_in(conn, catalog, [(before, after)])

    @staticmethod
    def _references(booking: Booking, uuids: Sequence[str]) -> list[str]:
        chosen = set(uuids)
        return [item.supplier_reference for item in booking.unit_items if item.uuid in chosen]

    async def _replay(
        self, conn: DbConnection, catalog: Catalog, request: ScanRequest, kept: dict[str, Any]
    ) -> ScanOutcome:
        """The answer to a scan sent again: its result and the tickets it admitted then (UNDONE
        if none of them is still admitted by it), with the party as it stands now. Scans kept
        before what they asked was kept too (issue 39) are taken for the same scan."""
        asked = kept.get("asked")
        if asked is not None and asked != _asked(request):
            raise Conflict(
                f"The nonce {request.nonce!r} was sent before with another scan (another code, "
                "departure or tickets): make a new nonce for each scan"
            )
        booking = await bookings_reads.get_by_id(conn, kept["bookingId"])
        assert booking is not None  # bookings are never deleted
        admissions = (await checkin_repo.admissions_of(conn, [booking.id])).get(booking.id, {})
        [details] = await self._details(conn, catalog, [booking])
        result = ScanResult(kept["result"])
        if not any(u in admissions and admissions[u].nonce == request.nonce for u in kept["admitted"]):
            result = ScanResult.UNDONE
        admitted = tuple(kept["admitted"])
        return ScanOutcome(result, request.code, details, admitted, admissions, kept["unit"], True)

    async def undo(self, catalog: Catalog, nonce: str, *, actor: Actor) -> ScanOutcome:
        """Take back what the scan `nonce` admitted, within UNDO_WINDOW of the admission (at
        the gate; later, `take_back` from the booking's page): the outcome's `admitted` are the
        tickets taken back."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            found = await checkin_repo.admitted_by_scan(conn, nonce)
            if found is None:
                raise NotFound(f"No admission was made by the scan {nonce!r}, or it was taken back")
            booking_id, admitted = found
            if min(a.at for a in admitted) + UNDO_WINDOW < now:
                raise UnprocessableEntity(
                    f"The admission can only be undone at the gate within "
                    f"{int(UNDO_WINDOW.total_seconds() // 60)} minutes; it is past that: an operator "
                    "or an admin undoes it from the booking's page in the back office"
                )
            booking = await bookings_reads.get_by_id(conn, booking_id)
            if booking is None:
                raise NotFound(f"No booking with id {booking_id!r}")
            booking = await self._steps.lock_in(conn, booking)
            uuids = [a.unit_uuid for a in admitted]
            return await self._take_back_locked(conn, catalog, booking, uuids, actor, now, {"nonce": nonce})

    async def take_back(
        self, catalog: Catalog, booking_id: str, unit_uuids: Sequence[str], reason: str, *, actor: Actor
    ) -> ScanOutcome:
        """Take back the admission of the booking's tickets `unit_uuids`, however long ago it
        was (a supervisor, from the booking's page; the role is the caller's to check), with
        `reason`, which the booking's history and the audit trail keep."""
        why = reason.strip()
        if not why:
            raise BadRequest("reason must not be empty: say why the admission is taken back")
        if not unit_uuids:
            raise BadRequest("unitItemUuids: name the tickets whose admission to take back")
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            found = await bookings_reads.get_by_id(conn, booking_id)
            if found is None:
                raise NotFound(f"No booking with id {booking_id!r}")
            booking = await self._steps.lock_in(conn, found)
            if booking.status not in (BookingStatus.CONFIRMED, BookingStatus.REDEEMED):
                raise UnprocessableEntity(
                    f"Booking {booking.supplier_reference} is {booking.status.value}: its admissions stay"
                )
            admissions = (await checkin_repo.admissions_of(conn, [booking.id])).get(booking.id, {})
            wanted = list(dict.fromkeys(unit_uuids))
            strangers = [u for u in wanted if u not in {item.uuid for item in booking.unit_items}]
            if strangers:
                raise BadRequest(f"unitItemUuids: {', '.join(strangers)} are not tickets of this booking")
            outside = [u for u in wanted if u not in admissions]
            if outside:
                raise UnprocessableEntity(
                    f"{', '.join(self._references(booking, outside))} of booking "
                    f"{booking.supplier_reference} were not admitted at the gate: nothing to take back"
                )
            nonces = sorted({admissions[u].nonce for u in wanted})
            said = {"reason": why, "nonces": nonces}
            return await self._take_back_locked(conn, catalog, booking, wanted, actor, now, said)

    async def _take_back_locked(
        self,
        conn: DbConnection,
        catalog: Catalog,
        booking: Booking,
        uuids: list[str],
        actor: Actor,
        now: datetime,
        said: dict[str, Any],
    ) -> ScanOutcome:
        """The tickets `uuids` of the (locked) booking no longer admitted: the booking
        CONFIRMED again, in its history, its webhook and the audit trail with `said`."""
        await checkin_repo.take_back(conn, booking.id, uuids)
        changed = without_admitted(booking, set(uuids), now)
        await self._record(conn, catalog, booking, changed, "admission undone", uuids, actor, now, said)
        await audit_repo.record(
            conn,
            actor,
            "checkin.undo",
            booking_target(booking),
            {
                "tickets": self._references(booking, uuids),
                **said,
                "from": booking.status.value,
                "to": changed.status.value,
            },
            at=now,
        )
        admissions = (await checkin_repo.admissions_of(conn, [booking.id])).get(booking.id, {})
        [details] = await self._details(conn, catalog, [changed])
        return ScanOutcome(ScanResult.ADMITTED, booking.supplier_reference, details, tuple(uuids), admissions)

    async def admissions(self, booking_id: str) -> dict[str, Admission]:
        """The booking's tickets admitted at the gate: {unit item uuid: admission}."""
        async with self._db.transaction(write=False) as conn:
            return (await checkin_repo.admissions_of(conn, [booking_id])).get(booking_id, {})

    async def parties(self, catalog: Catalog, departure: Departure) -> tuple[Slot, list[Party]]:
        """Every booking of the departure (test bookings aside) with its admitted tickets: what
        the scanner keeps to go on offline."""
        slot = self.slot(catalog, departure)
        where = BookingFilter(
            product_id=departure.product_id,
            option_id=departure.option_id,
            date_from=slot.local_date,
            date_to=slot.local_date,
        )
        async with self._db.transaction(write=False) as conn:
            found, _ = await bookings_reads.find_bookings(conn, where)
            on_slot = [b for b in found if b.availability_id == slot.id and not b.test_mode]
            admissions = await checkin_repo.admissions_of(conn, [b.id for b in on_slot])
            described = await self._details(conn, catalog, on_slot)
        return slot, [Party(d, admissions.get(d.booking.id, {})) for d in described]
