"""Check-in at the gate: what a scan can answer, what a scanned code may be, and which of a
booking's tickets a scan admits. Pure rules; the service applies them under the booking's lock."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from enum import StrEnum

from berth.domain.bookings import REFERENCE_ALPHABET, Booking, BookingStatus, UnitItem
from berth.domain.errors import BadRequest

# How long after an admission an operator may still take it back.
UNDO_WINDOW = timedelta(minutes=10)
MAX_CODE_LENGTH = 500
# A scan's nonce: what the scanner makes up once per scan and sends again on every retry.
NONCE = re.compile(r"^[A-Za-z0-9_.:-]{8,64}$")
MAX_DEVICE_LENGTH = 100
# The step of a booking's history when its tickets not through the gate are cancelled.
TICKETS_CANCELLED = "tickets cancelled"


class ScanResult(StrEnum):
    ADMITTED = "ADMITTED"
    ALREADY_ADMITTED = "ALREADY_ADMITTED"
    NOT_THIS_DEPARTURE = "NOT_THIS_DEPARTURE"
    CANCELLED = "CANCELLED"
    NOT_CONFIRMED = "NOT_CONFIRMED"
    UNKNOWN_CODE = "UNKNOWN_CODE"
    # A look-up's answer where a scan would admit: it admits nothing itself.
    VALID = "VALID"
    UNDONE = "UNDONE"  # a scan sent again whose admission was taken back since: it no longer counts
    # Tickets to admit, of a departure on another day than today: admitted only when the scan
    # says so (`admit_another_day`, staff's "Admit anyway").
    ANOTHER_DAY = "ANOTHER_DAY"


@dataclass(frozen=True)
class Departure:
    product_id: str
    option_id: str
    availability_id: str | None


@dataclass(frozen=True)
class Admission:
    """One ticket (unit item) let through the gate, by whom, on which device, by which scan."""

    unit_uuid: str
    at: datetime
    by: str
    device: str | None
    nonce: str


@dataclass(frozen=True)
class Scanned:
    """What a code names: a booking's voucher (`unit` None) or one of its tickets."""

    booking: Booking
    unit: UnitItem | None


def clean_code(raw: str) -> str:
    """The code as scanned or typed, without the spaces around it (BAD_REQUEST when empty)."""
    code = raw.strip()
    if not code:
        raise BadRequest("code is empty: scan a ticket or type its reference")
    if len(code) > MAX_CODE_LENGTH:
        raise BadRequest(f"code is longer than {MAX_CODE_LENGTH} characters")
    return code


_TICKET_URL = re.compile(r"/tickets/([A-Za-z0-9_-]+)\.(?:pdf|pkpass)(?:[?#].*)?$")


def ticket_token(code: str) -> str | None:
    """The token of a ticket document's URL (`.../tickets/{token}.pdf`), or None: a code
    that is not such a URL."""
    found = _TICKET_URL.search(code)
    return found.group(1) if found else None


# Berth's references are Crockford base 32 (`bookings.new_reference`), which has no O, I or L:
# a guest reading one out or staff typing one mean the digits.
_MISREAD = str.maketrans("OIL", "011")
_REFERENCE_CHARACTERS = frozenset(REFERENCE_ALPHABET)


def readings(code: str) -> list[str]:
    """What a code may be, in the order to look for it: as scanned or typed, then read as one
    of Berth's references (spaces dropped, O as 0, I and L as 1) when that differs and is one
    of Berth's alphabet. A ticket document's URL is read as it is (its token is case-sensitive)."""
    if ticket_token(code) is not None:
        return [code]
    lenient = "".join(code.split()).upper().translate(_MISREAD)
    if lenient == code.upper() or not set(lenient) <= _REFERENCE_CHARACTERS:
        return [code]
    return [code, lenient]


def check_nonce(nonce: str) -> str:
    if not NONCE.match(nonce):
        raise BadRequest("nonce must be 8 to 64 letters, digits or the characters _ . : -")
    return nonce


def departure_of(booking: Booking) -> Departure:
    return Departure(booking.product_id, booking.option_id, booking.availability_id)


def on_departure(booking: Booking, gate: Departure | None) -> bool:
    """Whether the booking travels on the gate's departure (any when the gate names none; an
    open-dated booking on any departure of its option)."""
    if gate is None:
        return True
    if (booking.product_id, booking.option_id) != (gate.product_id, gate.option_id):
        return False
    return booking.availability_id is None or booking.availability_id == gate.availability_id


def refusal(booking: Booking, gate: Departure | None) -> ScanResult | None:
    """Why the booking's guests may not pass this gate, or None."""
    if booking.status is BookingStatus.CANCELLED:
        return ScanResult.CANCELLED
    if booking.status not in (BookingStatus.CONFIRMED, BookingStatus.REDEEMED):
        return ScanResult.NOT_CONFIRMED  # on hold, pending, or never confirmed (expired, rejected)
    if not on_departure(booking, gate):
        return ScanResult.NOT_THIS_DEPARTURE
    return None


def another_day(booking: Booking, today: date | None) -> bool:
    """Whether the booking's departure is on another day than `today` (both at the departure's
    place); an open-dated booking, or a day not known, is not."""
    return today is not None and booking.local_date is not None and booking.local_date != today


def wanted(scanned: Scanned, chosen: Sequence[str] | None) -> list[UnitItem]:
    """The tickets a scan asks to admit: the scanned ticket; for a voucher, those `chosen`
    (BAD_REQUEST for a uuid not of the booking) or else all."""
    items = scanned.booking.unit_items
    if scanned.unit is not None:
        if chosen and list(chosen) != [scanned.unit.uuid]:
            raise BadRequest("unitItemUuids: a ticket's code admits that ticket only")
        return [scanned.unit]
    if not chosen:
        return list(items)
    known = {item.uuid: item for item in items}
    strangers = [uuid for uuid in chosen if uuid not in known]
    if strangers:
        raise BadRequest(f"unitItemUuids: {', '.join(strangers)} are not tickets of this booking")
    return [known[uuid] for uuid in dict.fromkeys(chosen)]


def admitted_earlier(booking: Booking, admissions: Mapping[str, Admission]) -> set[str]:
    """The booking's tickets already through the gate (a booking redeemed as a whole counts all)."""
    if booking.redeemed_at is not None:
        return {item.uuid for item in booking.unit_items}
    return {item.uuid for item in booking.unit_items if item.uuid in admissions or item.redeemed_at}


def with_admitted(booking: Booking, uuids: set[str], at: datetime) -> Booking:
    """The booking with tickets `uuids` admitted at `at`: REDEEMED once every ticket is."""
    items = tuple(replace(i, redeemed_at=at) if i.uuid in uuids else i for i in booking.unit_items)
    done = all(i.redeemed_at is not None for i in items)
    return replace(
        booking,
        unit_items=items,
        status=BookingStatus.REDEEMED if done else booking.status,
        redeemed_at=at if done else booking.redeemed_at,
        updated_at=at,
    )


def without_admitted(booking: Booking, uuids: set[str], at: datetime) -> Booking:
    """The booking with the admissions of tickets `uuids` taken back: CONFIRMED again."""
    items = tuple(replace(i, redeemed_at=None) if i.uuid in uuids else i for i in booking.unit_items)
    return replace(booking, unit_items=items, status=BookingStatus.CONFIRMED, redeemed_at=None, updated_at=at)


def partly_through(booking: Booking) -> bool:
    """Whether boarding began for the booking and is not over: a CONFIRMED booking some of
    whose tickets were admitted at the gate and some not."""
    return (
        booking.status is BookingStatus.CONFIRMED
        and bool(booking.admitted)
        and len(booking.admitted) < len(booking.unit_items)
    )


def not_through(booking: Booking) -> tuple[UnitItem, ...]:
    """The booking's tickets not admitted at the gate."""
    return tuple(item for item in booking.unit_items if item.redeemed_at is None)


def boarded_only(booking: Booking, at: datetime) -> Booking:
    """A booking partly through the gate with its other tickets cancelled (its departure was
    cancelled after boarding began): its admitted tickets only, REDEEMED as of the last of
    their admissions. Its places, prices and seats follow its tickets (the service's part)."""
    kept = booking.admitted
    last = max(item.redeemed_at for item in kept if item.redeemed_at is not None)
    return replace(booking, unit_items=kept, status=BookingStatus.REDEEMED, redeemed_at=last, updated_at=at)
