"""Bookings: the record, its state machine (OCTO.md §5.1) and the rules on its units."""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any

from berth.domain.catalog import ContactField, Option
from berth.domain.errors import InvalidUnitId, UnprocessableEntity
from berth.domain.price_lines import PriceLines
from berth.domain.resources import Allocation
from berth.domain.times import format_utc


class BookingStatus(StrEnum):
    ON_HOLD = "ON_HOLD"
    CONFIRMED = "CONFIRMED"
    EXPIRED = "EXPIRED"
    CANCELLED = "CANCELLED"
    REDEEMED = "REDEEMED"
    PENDING = "PENDING"
    REJECTED = "REJECTED"


# Statuses whose bookings hold places (ON_HOLD only until it expires).
HOLDING = (BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED)
CHANGEABLE = (BookingStatus.ON_HOLD, BookingStatus.CONFIRMED, BookingStatus.PENDING)
# Statuses a booking ends in without being used: its places are free again.
ENDED = (BookingStatus.CANCELLED, BookingStatus.EXPIRED, BookingStatus.REJECTED)


def holds_places(test_mode: bool, status: BookingStatus, expires_at: datetime | None, now: datetime) -> bool:
    """Whether a booking in this state holds places at `now`."""
    if test_mode:
        return False
    if status is BookingStatus.ON_HOLD:
        return expires_at is not None and expires_at > now
    return status in HOLDING


CONTACT_KEYS = (
    "fullName", "firstName", "lastName", "emailAddress", "phoneNumber", "postalCode", "country", "notes",
)  # fmt: skip


@dataclass(frozen=True)
class Contact:
    """A lead traveller or ticket holder, as sent (OCTO `BookingContact`)."""

    values: dict[str, str | None] = field(default_factory=dict)
    locales: tuple[str, ...] = ()
    allow_marketing: bool | None = None
    # The Accept-Language of the request that confirmed the booking (or order), as tags: what
    # the guest's tickets and emails are written in when `locales` is empty. Not shown in OCTO.
    request_locales: tuple[str, ...] = ()

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    @property
    def full_name(self) -> str | None:
        if self.get("fullName"):
            return self.get("fullName")
        parts = [p for p in (self.get("firstName"), self.get("lastName")) if p]
        return " ".join(parts) or None

    def has(self, contact_field: ContactField) -> bool:
        if contact_field is ContactField.locales:
            return bool(self.locales)
        if contact_field is ContactField.allowMarketing:
            return self.allow_marketing is not None
        if contact_field in (ContactField.firstName, ContactField.lastName) and self.get("fullName"):
            return True
        return bool(self.get(contact_field.value))

    @property
    def reading_locales(self) -> tuple[str, ...]:
        """The languages the guest reads, best first: the contact's `locales`, else the
        confirming request's Accept-Language."""
        return self.locales or self.request_locales

    def to_document(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "values": self.values,
            "locales": list(self.locales),
            "allowMarketing": self.allow_marketing,
        }
        if self.request_locales:  # absent otherwise: a reservation's fingerprint stays as it was
            document["requestLocales"] = list(self.request_locales)
        return document

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> Contact:
        return cls(
            values=dict(document.get("values", {})),
            locales=tuple(document.get("locales", ())),
            allow_marketing=document.get("allowMarketing"),
            request_locales=tuple(document.get("requestLocales", ())),
        )


@dataclass(frozen=True)
class UnitItem:
    uuid: str
    unit_id: str
    supplier_reference: str
    reseller_reference: str | None = None
    contact: Contact = Contact()
    # When the ticket's holder was admitted at the gate (OCTO's unit-level redemption).
    redeemed_at: datetime | None = None

    def to_document(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "uuid": self.uuid,
            "unitId": self.unit_id,
            "supplierReference": self.supplier_reference,
            "resellerReference": self.reseller_reference,
            "contact": self.contact.to_document(),
        }
        if self.redeemed_at is not None:
            document["redeemedAt"] = self.redeemed_at.astimezone(UTC).isoformat()
        return document

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> UnitItem:
        return cls(
            uuid=document["uuid"],
            unit_id=document["unitId"],
            supplier_reference=document["supplierReference"],
            reseller_reference=document.get("resellerReference"),
            contact=Contact.from_document(document.get("contact", {})),
            redeemed_at=datetime.fromisoformat(document["redeemedAt"])
            if document.get("redeemedAt")
            else None,
        )


@dataclass(frozen=True)
class Cancellation:
    refund: str
    reason: str | None
    at: datetime


@dataclass(frozen=True)
class Booking:
    id: str
    uuid: str
    connection_id: str
    test_mode: bool
    status: BookingStatus
    product_id: str
    option_id: str
    availability_id: str | None
    slot_start: datetime | None
    local_date: date | None
    pax: int
    reseller_reference: str | None
    supplier_reference: str
    notes: str | None
    contact: Contact
    unit_items: tuple[UnitItem, ...]
    currency: str | None
    freesale: bool
    request_fingerprint: str
    created_at: datetime
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    confirmed_at: datetime | None = None
    redeemed_at: datetime | None = None
    cancellation: Cancellation | None = None
    rejection_reason: str | None = None
    rejected_at: datetime | None = None
    order_id: str | None = None
    primary: bool = False
    order_position: int | None = None
    # octo/rentals: the rental duration chosen, and when the item is due back (UTC). A rental
    # holds its places over [slot_start, slot_end), not only at its start.
    rental_duration_id: str | None = None
    slot_end: datetime | None = None
    # octo/packages: an included booking names its package booking and the include it books.
    package_booking_id: str | None = None
    package_include_id: str | None = None
    # octo/resources: what the booking was given. Only a booking that holds places holds its
    # allocations (like its places); the record stays on a cancelled or expired booking.
    resource_allocations: tuple[Allocation, ...] = ()
    # What booking extensions (services.bookings.extensions) keep of the booking, as JSON-ready
    # documents under their capability id (octo/pickups: the pickup chosen).
    extensions: dict[str, Any] = field(default_factory=dict)
    # What each part of the booking was sold at (domain.price_lines): set when a part is added,
    # never from a later catalogue.
    price_lines: PriceLines = ()

    def holds_places(self, now: datetime) -> bool:
        return holds_places(self.test_mode, self.status, self.expires_at, now)

    @property
    def admitted(self) -> tuple[UnitItem, ...]:
        """The tickets (unit items) already let through the gate: part of what happened, so
        the booking can no longer be cancelled nor have them removed."""
        return tuple(item for item in self.unit_items if item.redeemed_at is not None)


@dataclass(frozen=True)
class Placed:
    """What a booking's capacity policy stores of where it is, beside its slot: the booking core
    carries it without reading it. octo/rentals: the duration chosen and when the item is due
    back; octo/resources: what the booking was given (the policy's `allocate`)."""

    rental_duration_id: str | None = None
    slot_end: datetime | None = None
    resource_allocations: tuple[Allocation, ...] = ()


def placed(booking: Booking) -> Placed:
    return Placed(booking.rental_duration_id, booking.slot_end, booking.resource_allocations)


def with_placed(booking: Booking, where: Placed) -> Booking:
    """`booking` storing `where` (itself when it stores it already)."""
    if placed(booking) == where:
        return booking
    return replace(
        booking,
        rental_duration_id=where.rental_duration_id,
        slot_end=where.slot_end,
        resource_allocations=where.resource_allocations,
    )


def price_basis(booking: Booking) -> tuple[object, ...]:
    """What a booking's parts are priced by besides themselves: its product, option, day and
    rental duration. A booking moved to another of them is sold again."""
    return (booking.product_id, booking.option_id, booking.local_date, booking.rental_duration_id)


# The `until` of places held for good (CONFIRMED, PENDING, REDEEMED): no hold ends later.
HELD_FOR_GOOD = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True)
class PlaceHold:
    """What a booking counts in its slot's held places: `pax` places until `until` (an ON_HOLD
    booking's expiry, rounded up to the second so holds made in the same second share a count;
    HELD_FOR_GOOD otherwise). At any `now`, the booking holds places iff `until > now`."""

    product_id: str
    option_id: str
    availability_id: str
    slot_start: datetime
    until: datetime
    pax: int


def place_hold(booking: Booking) -> PlaceHold | None:
    """The booking's count in its slot, independent of the time: None when it can never hold
    places in its current state (test mode, freesale, EXPIRED, CANCELLED, REJECTED)."""
    if booking.test_mode or booking.availability_id is None or booking.slot_start is None:
        return None
    if booking.status is BookingStatus.ON_HOLD:
        if booking.expires_at is None:
            return None
        expiry = booking.expires_at
        until = expiry.replace(microsecond=0) + (timedelta(seconds=1) if expiry.microsecond else timedelta())
    elif booking.status in HOLDING:
        until = HELD_FOR_GOOD
    else:
        return None
    return PlaceHold(
        booking.product_id, booking.option_id, booking.availability_id, booking.slot_start, until, booking.pax
    )


def as_of(booking: Booking, now: datetime) -> Booking:
    """The booking as it stands at `now`: a hold whose time has passed is EXPIRED, with the
    cancellation object OCTO's validator expects (refund FULL at the expiry time)."""
    if (
        booking.status is BookingStatus.ON_HOLD
        and booking.expires_at is not None
        and booking.expires_at <= now
    ):
        return replace(
            booking,
            status=BookingStatus.EXPIRED,
            updated_at=booking.expires_at,
            cancellation=Cancellation(refund="FULL", reason=None, at=booking.expires_at),
        )
    return booking


def is_cancellable(booking: Booking, cutoff: datetime | None, now: datetime) -> bool:
    """Cancel and update are allowed while the booking is live and none of its tickets has
    been admitted at the gate: a hold always (it sells nothing, so releasing it takes nothing
    back), a confirmed or pending booking before the cutoff (open-dated bookings, with no
    cutoff, until they are redeemed)."""
    if booking.status not in CHANGEABLE or booking.redeemed_at is not None or booking.admitted:
        return False
    return booking.status is BookingStatus.ON_HOLD or cutoff is None or now < cutoff


def not_changeable(booking: Booking, cutoff: datetime | None, verb: str) -> str:
    """Why `booking` cannot be `verb` (updated, cancelled): its status, a ticket admitted at
    the gate, or the cutoff passed."""
    if booking.status not in CHANGEABLE:
        return f"Booking {booking.uuid!r} is {booking.status.value} and cannot be {verb}"
    if booking.admitted:
        tickets = ", ".join(
            f"{item.supplier_reference} at {format_utc(item.redeemed_at)}"
            for item in booking.admitted
            if item.redeemed_at is not None
        )
        return (
            f"Booking {booking.uuid!r} can no longer be {verb}: "
            f"{'its ticket was' if len(booking.admitted) == 1 else 'its tickets were'} "
            f"admitted at the gate ({tickets})"
        )
    assert cutoff is not None
    return f"Booking {booking.uuid!r} can no longer be {verb}: the cutoff was {format_utc(cutoff)}"


def sold_anew(before: Booking, after: Booking) -> str | None:
    """What a change gives a booking that only a sale gives (None: nothing): another option or
    departure, another rental duration, more places, a unit item it did not have (or one given
    another unit) or another part priced now (an extra's piece). Fewer places, notes, contact,
    references and answers sell nothing."""
    if (after.product_id, after.option_id) != (before.product_id, before.option_id):
        return "another option"
    if after.availability_id != before.availability_id:
        return "another departure"
    if (after.rental_duration_id, after.slot_end) != (before.rental_duration_id, before.slot_end):
        return "another rental duration"
    if after.pax > before.pax:
        return "more places"
    had = {(item.uuid, item.unit_id) for item in before.unit_items}
    if any((item.uuid, item.unit_id) not in had for item in after.unit_items):
        return "a unit item it did not have"
    priced = {(line.key, line.item) for line in before.price_lines}
    if any((line.key, line.item) not in priced for line in after.price_lines):
        return "a part priced now"
    return None


def extendable(booking: Booking) -> datetime:
    """The end of the hold an extension moves: only an ON_HOLD booking's hold can be extended."""
    if booking.status is not BookingStatus.ON_HOLD or booking.expires_at is None:
        raise UnprocessableEntity(
            f"Only ON_HOLD bookings can be extended; booking {booking.uuid!r} is {booking.status.value}"
        )
    return booking.expires_at


def merge_contact(base: Contact, override: Contact) -> Contact:
    """The one merge rule of contacts (a PATCH over a booking's, an order's lead over its
    bookings'): `override`'s fields win where they have a value; a field it leaves out or
    sends as `null` keeps `base`'s, so `null` never erases what is known."""
    return Contact(
        values={**base.values, **{k: v for k, v in override.values.items() if v is not None}},
        locales=override.locales or base.locales,
        allow_marketing=base.allow_marketing
        if override.allow_marketing is None
        else override.allow_marketing,
        request_locales=override.request_locales or base.request_locales,
    )


def pax_of(option: Option, unit_ids: Sequence[str]) -> int:
    total = 0
    for unit_id in unit_ids:
        unit = option.unit(unit_id)
        assert unit is not None
        total += unit.restrictions.pax_count
    return total


def people_of(option: Option, unit_ids: Sequence[str]) -> int:
    """The guests (people) the units bring, where `pax_of` counts the places they take: each
    ticket is at least one person, so an infant on a lap (no place) is a guest, and a family
    ticket is as many guests as the places it takes. A unit since removed from the catalogue
    counts one."""
    total = 0
    for unit_id in unit_ids:
        unit = option.unit(unit_id)
        total += max(unit.restrictions.pax_count, 1) if unit is not None else 1
    return total


def check_units(option: Option, unit_ids: Sequence[str]) -> None:
    """OCTO unit rules: known units (INVALID_UNIT_ID), then the option's min/max units and each
    unit's min/max quantity and `accompaniedBy` (UNPROCESSABLE_ENTITY)."""
    if not unit_ids:
        raise UnprocessableEntity("unitItems must list at least one unit")
    for unit_id in unit_ids:
        if option.unit(unit_id) is None:
            raise InvalidUnitId(unit_id, option.id)
    counts = Counter(unit_ids)
    total = len(unit_ids)
    limits = option.restrictions
    if limits.min_units is not None and total < limits.min_units:
        raise UnprocessableEntity(
            f"Option {option.id!r} needs at least {limits.min_units} units; {total} given"
        )
    if limits.max_units is not None and total > limits.max_units:
        raise UnprocessableEntity(
            f"Option {option.id!r} allows at most {limits.max_units} units; {total} given"
        )
    for unit_id, count in counts.items():
        unit = option.unit(unit_id)
        assert unit is not None
        r = unit.restrictions
        if r.min_quantity is not None and count < r.min_quantity:
            raise UnprocessableEntity(
                f"Unit {unit_id!r} needs a quantity of at least {r.min_quantity}; {count} given"
            )
        if r.max_quantity is not None and count > r.max_quantity:
            raise UnprocessableEntity(
                f"Unit {unit_id!r} allows a quantity of at most {r.max_quantity}; {count} given"
            )
        if r.accompanied_by and not any(counts.get(other) for other in r.accompanied_by):
            raise UnprocessableEntity(
                f"Unit {unit_id!r} must be booked together with one of: {', '.join(r.accompanied_by)}"
            )


def missing_contact_fields(option: Option, contact: Contact, items: Sequence[UnitItem]) -> list[str]:
    """Contact fields the option or a ticket's unit requires that were not given. A ticket's
    own contact may be filled from the lead traveller's."""
    missing = [f"contact.{f.value}" for f in option.required_contact_fields if not contact.has(f)]
    for index, item in enumerate(items):
        unit = option.unit(item.unit_id)
        if unit is None:
            continue
        for required in unit.required_contact_fields:
            if not item.contact.has(required) and not contact.has(required):
                missing.append(f"unitItems[{index}].contact.{required.value}")
    return missing


REFERENCE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_reference(length: int = 8) -> str:
    """A short human reference (Crockford base 32: no I, L, O, U to misread). One read of the
    system's randomness for all its characters (a byte's low 5 bits: 256 is a multiple of 32,
    so each character is uniform)."""
    return "".join(REFERENCE_ALPHABET[byte & 31] for byte in secrets.token_bytes(length))
