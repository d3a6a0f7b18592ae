"""CSV for staff: bookings as rows (the bookings search and a departure's manifest), with the
columns staff work with and times in the departure's local time; and the one writer every CSV
export goes through, which guards every text cell against spreadsheet formula injection (never
a number: `-5.00` written as text would be skipped by a spreadsheet's SUM) and starts each file
with a UTF-8 byte order mark."""

from __future__ import annotations

import asyncio
import csv
import io
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping, Sequence
from decimal import Decimal
from zoneinfo import ZoneInfo

from berth.domain.bookings import Booking, people_of
from berth.domain.catalog import Product
from berth.domain.statements import amount_text

HEADER = (
    "Supplier reference", "Reseller reference", "Status", "Product", "Option", "Availability id",
    "Departure (local time)", "Time zone", "Lead guest", "Email", "Phone", "Units", "Guests", "Places",
    "Reseller", "Booked at (local time)", "Test booking", "Cancellation reason", "Currency", "Retail",
    "Net", "Tax included",
)  # fmt: skip
# A spreadsheet reads a cell starting with one of these as a formula (OWASP: CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Excel reads a CSV file as UTF-8 only when it starts with the byte order mark (else in the
# machine's legacy code page: "Zoë" becomes "ZoÃ«"); Python's csv and LibreOffice skip it.
BOM = "\ufeff"

# Text (guarded), or a number: an int, or an amount as a Decimal (written as `-5.00`).
Row = Sequence[str | int | Decimal]


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


def _amounts(booking: Booking) -> list[str]:
    """The booking's currency and what it was sold at (the sums of its stored price lines, as
    decimals): retail, net (a line without one counts its retail) and the tax in retail."""
    lines = [line.price for line in booking.price_lines]
    if not lines:
        return [booking.currency or "", "", "", ""]
    precision = lines[0].currency_precision
    retail = sum(price.retail for price in lines)
    net = sum(price.retail if price.net is None else price.net for price in lines)
    tax = sum(tax.retail for price in lines for tax in price.included_taxes)
    return [lines[0].currency, *(amount_text(amount, precision) for amount in (retail, net, tax))]


def booking_row(booking: Booking, product: Product, resellers: Mapping[str, str]) -> Row:
    zone = ZoneInfo(product.time_zone)
    option = product.option(booking.option_id)
    contact = booking.contact
    return [
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
        *_amounts(booking),
    ]


def csv_text(rows: Iterable[Row]) -> str:
    """CSV lines of `rows`, every text cell guarded (`safe_cell`), numbers as they are."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(
        [safe_cell(cell) if isinstance(cell, str) else cell for cell in row] for row in rows
    )
    return out.getvalue()


async def csv_file(header: Row, batches: AsyncIterable[Iterable[Row]]) -> AsyncIterator[bytes]:
    """A whole CSV file in UTF-8, chunk by chunk: the byte order mark and the header, then one
    chunk per batch of rows, the event loop free between batches (sending a chunk need not
    give it up). Every CSV export is written by this."""
    yield (BOM + csv_text([header])).encode()
    async for rows in batches:
        await asyncio.sleep(0)
        yield csv_text(rows).encode()
