"""What the gate is shown of a scan and of a departure's parties: the lead name, the tickets
with their state, what every capability shows of them (`lines`: the extras, the pickup, the
answers, whatever a capability added to the registry shows) and the notes. No more personal data than
that: the scanner keeps a departure's parties in the browser to go on offline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from berth.capabilities.registry import booking_lines
from berth.domain.bookings import people_of
from berth.domain.checkin import Admission, ScanResult, admitted_earlier
from berth.domain.slots import Slot
from berth.domain.staff import shown_name
from berth.domain.tickets import TicketLine
from berth.domain.times import format_local, format_utc, format_utc_or_none
from berth.read_models.bookings import BookingDetails
from berth.services.checkin import Party, ScanOutcome

JSON = dict[str, Any]

MESSAGES = {
    ScanResult.ADMITTED: "Admitted",
    ScanResult.ALREADY_ADMITTED: "Already admitted",
    ScanResult.NOT_THIS_DEPARTURE: "Booked on another departure",
    ScanResult.CANCELLED: "Cancelled booking",
    ScanResult.NOT_CONFIRMED: "Not confirmed",
    ScanResult.UNKNOWN_CODE: "Unknown code",
    ScanResult.VALID: "Valid: the tickets may go through",
    ScanResult.UNDONE: "Admitted, then undone: the admission no longer counts",
    ScanResult.ANOTHER_DAY: (
        "Booked for another day than today: nothing admitted; send the scan again with "
        "admitAnotherDay true to admit it anyway"
    ),
}


def _admission_json(admission: Admission) -> JSON:
    """`by` as recorded (the audit trail's actor), `byName` as staff read it."""
    return {
        "at": format_utc(admission.at),
        "by": admission.by,
        "byName": shown_name(admission.by),
        "device": admission.device,
    }


def departure_json(details: BookingDetails) -> JSON:
    booking = details.booking
    return {
        "productId": booking.product_id,
        "optionId": booking.option_id,
        "availabilityId": booking.availability_id,
        "product": details.product.internal_name,
        "option": details.option.internal_name,
        "localDateTimeStart": format_local(details.slot.start) if details.slot is not None else None,
    }


def _lines_json(lines: Sequence[TicketLine]) -> list[JSON]:
    return [{"label": line.label, "text": line.text} for line in lines]


def party_json(details: BookingDetails, admissions: Mapping[str, Admission]) -> JSON:
    """One booking as the gate sees it: with what every capability shows of it (`lines`) and
    of each ticket (its `lines` beyond the booking's), which the scanner's page shows as given."""
    booking, option = details.booking, details.option
    earlier = admitted_earlier(booking, admissions)
    shown = booking_lines(details, None)
    units: dict[str, JSON] = {}
    for item in booking.unit_items:
        unit = option.unit(item.unit_id)
        admission = admissions.get(item.uuid)
        units[item.uuid] = {
            "uuid": item.uuid,
            "code": item.supplier_reference,
            "unitId": item.unit_id,
            "unit": unit.internal_name if unit is not None else item.unit_id,
            "admitted": item.uuid in earlier,
            "admission": _admission_json(admission) if admission is not None else None,
            "utcRedeemedAt": format_utc_or_none(item.redeemed_at or booking.redeemed_at),
            "lines": _lines_json([line for line in booking_lines(details, item) if line not in shown]),
        }
    return {
        "bookingId": booking.id,
        "code": booking.supplier_reference,
        "resellerReference": booking.reseller_reference,
        "status": booking.status.value,
        "leadName": booking.contact.full_name,
        "guests": people_of(option, [i.unit_id for i in booking.unit_items]),
        "units": list(units.values()),
        "lines": _lines_json(shown),
        "notes": booking.notes,
        "departure": departure_json(details),
    }


def scan_json(outcome: ScanOutcome) -> JSON:
    out: JSON = {
        "result": outcome.result.value,
        "message": MESSAGES[outcome.result],
        "code": outcome.code,
        "admitted": list(outcome.admitted),
        "scannedUnit": outcome.scanned_unit,
        "replayed": outcome.replayed,
        "booking": None,
    }
    if outcome.result is ScanResult.UNKNOWN_CODE:
        out["message"] = f"Unknown code: {outcome.code}"
    if outcome.ambiguous:
        out["message"] = f"The code names {outcome.ambiguous} bookings: scan a ticket or the voucher"
    if outcome.details is None:
        return out
    party = party_json(outcome.details, outcome.admissions or {})
    out["booking"] = party
    if outcome.result is ScanResult.ALREADY_ADMITTED:
        asked = [u for u in party["units"] if outcome.scanned_unit in (None, u["uuid"])]
        seen = [u["admission"] for u in asked if u["admission"] is not None]
        out["alreadyAdmitted"] = seen[0] if seen else {"at": party["units"][0]["utcRedeemedAt"]}
    return out


def undo_json(outcome: ScanOutcome) -> JSON:
    """An undone admission: the party as it stands now and the tickets taken back."""
    assert outcome.details is not None
    return {
        "booking": party_json(outcome.details, outcome.admissions or {}),
        "undone": list(outcome.admitted),
    }


def departure_parties_json(slot: Slot, parties: Sequence[Party], departure: JSON, today: date) -> JSON:
    """A departure's parties for the scanner: the running count and every booking, and
    `today` at the departure's place (which the scanner, offline, takes over its own clock's)."""
    expected = [p for p in parties if p.details.booking.status.value in ("CONFIRMED", "REDEEMED")]
    guests = sum(len(p.details.booking.unit_items) for p in expected)
    admitted = sum(len(admitted_earlier(p.details.booking, p.admissions)) for p in expected)
    return {
        "departure": {**departure, "localDateTimeStart": format_local(slot.start)},
        "today": today.isoformat(),
        "expected": guests,
        "admitted": admitted,
        "parties": [party_json(p.details, p.admissions) for p in parties],
    }
