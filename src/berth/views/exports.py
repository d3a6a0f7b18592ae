"""Bookings as CSV rows for staff (the bookings search and a departure's manifest): the columns
staff work with, times in the departure's local time, and every text cell guarded against
spreadsheet formula injection."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from zoneinfo import ZoneInfo

from berth.domain.bookings import Booking, people_of
from berth.domain.catalog import Product

HEADER = (
    "Supplier reference", "Reseller reference", "Status", "Product", "Option", "Availability id",
    "Departure (local time)", "Time zone", "Lead guest", "Email", "Phone", "Units", "Guests", "Places",
    "Reseller", "Booked at (local time)", "Test booking", "Cancellation reason",
)  # fmt: skip
# A spreadsheet reads a cell starting with one of these as a formula (OWASP: CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: str) -> str:
    """`value`, with a leading apostrophe if a spreadsheet would take it for a formula."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def _units(product: Product, booking: Booking) -> str:
    option = product.option(booking.option_id)
    counts = Counter(item.unit_id for item in booking.unit_items)
    parts = []
    for unit_id, count in counts.items():
        unit = option.unit(unit_id) if option is not None else None
        parts.append(f"{count} x {unit.internal_name if unit is not None else unit_id}")
    return ", ".join(parts)


def booking_row(booking: Booking, product: Product, resellers: Mapping[str, str]) -> list[str | int]:
    zone = ZoneInfo(product.time_zone)
    option = product.option(booking.option_id)
    contact = booking.contact
    cells: list[str | int] = [
        booking.supplier_reference,
        booking.reseller_reference or "",
        booking.status.value,
        product.internal_name,
        option.internal_name if option is not None else booking.option_id,
        booking.availability_id or "",
        f"{booking.slot_start.astimezone(zone):%Y-%m-%d %H:%M}" if booking.slot_start is not None else "",
        product.time_zone,
        contact.full_name or "",
        contact.get("emailAddress") or "",
        contact.get("phoneNumber") or "",
        _units(product, booking),
        people_of(option, [i.unit_id for i in booking.unit_items])
        if option is not None
        else len(booking.unit_items),
        booking.pax,
        resellers.get(booking.connection_id, booking.connection_id),
        f"{booking.created_at.astimezone(zone):%Y-%m-%d %H:%M}",
        "yes" if booking.test_mode else "",
        booking.cancellation.reason or "" if booking.cancellation is not None else "",
    ]
    return [safe_cell(c) if isinstance(c, str) else c for c in cells]


def csv_text(rows: Iterable[Sequence[str | int]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue()
