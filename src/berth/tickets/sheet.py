"""What each page of a booking's tickets says, in the booking's language: built from the
booking's details, with each capability adding its part (the pickup, the extras)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from berth.capabilities.registry import booking_lines
from berth.domain.bookings import BookingStatus, UnitItem
from berth.domain.catalog import (
    Content,
    DeliveryFormat,
    DeliveryMethod,
    Feature,
    FeatureType,
    LocationType,
    Option,
    Product,
    Supplier,
)
from berth.domain.catalog.model import Location
from berth.domain.languages import choose_language
from berth.domain.tickets import TicketLine, local_date_time, local_time
from berth.read_models.bookings import BookingDetails

# The formats drawn as barcodes; a product that names none of them still gets a QR code.
CODE_FORMATS = (DeliveryFormat.QRCODE, DeliveryFormat.AZTECCODE, DeliveryFormat.CODE128)
MEETING_TYPES = (LocationType.START, LocationType.REDEMPTION)


@dataclass(frozen=True)
class TicketPage:
    """One printed ticket: the booking's voucher, or one unit item's ticket."""

    heading: str  # "Voucher", "Ticket 2 of 3"
    supplier: str
    supplier_contact: str | None
    product: str
    option: str | None
    when: str | None
    lines: tuple[TicketLine, ...]
    instructions: tuple[str, ...]
    code: str
    formats: tuple[DeliveryFormat, ...]
    language: str
    start: datetime | None = None  # the departure, local (an Apple Wallet pass's relevant date)


def booking_language(details: BookingDetails) -> str:
    """The language of the booking's documents: the first of its contact's locales the product
    has content in, else the product's own."""
    product = details.product
    locales = details.booking.contact.locales
    chosen = choose_language(", ".join(locales), product.languages) if locales else None
    return chosen or product.locale


def _content(contents: dict[str, Content], language: str, fallback: str) -> Content | None:
    return contents.get(language) or contents.get(fallback)


def _titles(product: Product, option: Option, language: str) -> tuple[str, str | None]:
    product_content = _content(product.content, language, product.locale)
    option_content = _content(option.content, language, product.locale)
    title = (product_content and product_content.title) or product.internal_name
    option_title = (option_content and option_content.title) or (
        option.internal_name if len(product.options) > 1 else None
    )
    return title, option_title


def _place(location: Location) -> str:
    address = location.place.postal_address
    parts = (
        location.title,
        address.street_address,
        " ".join(p for p in (address.address_locality, address.postal_code) if p),
        address.address_country,
    )
    return ", ".join(p for p in parts if p)


def _meeting_point(product: Product, option: Option, language: str) -> str | None:
    for contents in (option.content, product.content):
        content = _content(contents, language, product.locale)
        for location in content.locations if content else ():
            if any(t in MEETING_TYPES for t in location.types):
                return _place(location)
    return None


def _instructions(product: Product, option: Option, item: UnitItem | None, language: str) -> list[str]:
    features: list[Feature] = []
    for contents in (product.content, option.content):
        content = _content(contents, language, product.locale)
        features.extend(content.features if content else ())
    unit = option.unit(item.unit_id) if item is not None else None
    if unit is not None:
        unit_content = unit.content.get(language) or unit.content.get(product.locale)
        features.extend(unit_content.features if unit_content else ())
    return [
        f.short_description
        for f in features
        if f.type is FeatureType.REDEMPTION_INSTRUCTION and f.short_description
    ]


def _unit_title(product: Product, option: Option, unit_id: str, language: str) -> str:
    unit = option.unit(unit_id)
    if unit is None:
        return unit_id
    content = unit.content.get(language) or unit.content.get(product.locale)
    return (content and content.title) or unit.internal_name


def _when(details: BookingDetails) -> str | None:
    slot = details.slot
    if slot is None:
        local_date = details.booking.local_date
        return f"{local_date:%A} {local_date.day} {local_date:%B %Y}" if local_date else None
    if slot.all_day or slot.opening_hours:
        day = f"{slot.start:%A} {slot.start.day} {slot.start:%B %Y}"
        hours = ", ".join(f"{opens} to {closes}" for opens, closes in slot.opening_hours)
        zone = slot.start.strftime("%Z")
        return f"{day}, open {hours} {zone}" if hours else day
    text = local_date_time(slot.start)
    return f"{text} to {local_time(slot.end)}" if slot.end.date() == slot.start.date() else text


def _lines(details: BookingDetails, item: UnitItem | None, language: str) -> list[TicketLine]:
    booking, product, option = details.booking, details.product, details.option
    lines = []
    meeting = _meeting_point(product, option, language)
    if meeting:
        lines.append(TicketLine("Meeting point", meeting))
    if item is None:
        counts = Counter(i.unit_id for i in booking.unit_items)
        units = ", ".join(
            f"{n} \N{MULTIPLICATION SIGN} {_unit_title(product, option, unit_id, language)}"
            for unit_id, n in counts.items()
        )
        lines.append(TicketLine("Units", units))
        names = [booking.contact.full_name, *(i.contact.full_name for i in booking.unit_items)]
        guests = list(dict.fromkeys(n for n in names if n))
        if guests:
            lines.append(TicketLine("Guests", ", ".join(guests)))
    else:
        lines.append(TicketLine("Unit", _unit_title(product, option, item.unit_id, language)))
        guest = item.contact.full_name or booking.contact.full_name
        if guest:
            lines.append(TicketLine("Guest", guest))
    lines.extend(line for line in booking_lines(details, item) if not line.staff_only)
    reference = booking.supplier_reference
    if item is not None:
        reference = f"{item.supplier_reference} (booking {booking.supplier_reference})"
    lines.append(TicketLine("Supplier reference", reference))
    if booking.reseller_reference:
        lines.append(TicketLine("Reseller reference", booking.reseller_reference))
    if booking.status is BookingStatus.REDEEMED and booking.redeemed_at is not None:
        lines.append(TicketLine("Redeemed", booking.redeemed_at.strftime("%Y-%m-%d %H:%M UTC")))
    return lines


def ticket_pages(details: BookingDetails, supplier: Supplier, only: str | None = None) -> list[TicketPage]:
    """The booking's pages: its voucher (when the product delivers one), then one ticket per
    unit item (when it delivers tickets). `only`: the page of that unit item alone."""
    booking, product, option = details.booking, details.product, details.option
    language = booking_language(details)
    title, option_title = _titles(product, option, language)
    formats = tuple(f for f in CODE_FORMATS if f in product.delivery_formats) or (DeliveryFormat.QRCODE,)
    contact = supplier.contact
    supplier_contact = " | ".join(p for p in (contact.telephone, contact.email, contact.website) if p) or None
    when = _when(details)
    targets: list[tuple[str, UnitItem | None]] = []
    if only is None and DeliveryMethod.VOUCHER in product.delivery_methods:
        targets.append(("Voucher", None))
    if DeliveryMethod.TICKET in product.delivery_methods:
        count = len(booking.unit_items)
        for index, item in enumerate(booking.unit_items):
            if only is None or item.uuid == only:
                targets.append((f"Ticket {index + 1} of {count}", item))
    return [
        TicketPage(
            heading=heading,
            supplier=supplier.name,
            supplier_contact=supplier_contact,
            product=title,
            option=option_title,
            when=when,
            lines=tuple(_lines(details, item, language)),
            instructions=tuple(_instructions(product, option, item, language)),
            code=item.supplier_reference if item is not None else booking.supplier_reference,
            formats=formats,
            language=language,
            start=details.slot.start if details.slot is not None else None,
        )
        for heading, item in targets
    ]


def pages_of(all_details: Sequence[BookingDetails], supplier: Supplier) -> list[TicketPage]:
    return [page for details in all_details for page in ticket_pages(details, supplier)]
