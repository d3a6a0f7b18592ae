"""What each page of a booking's tickets says, in the booking's language: built from the
booking's details, with each capability adding its part (the pickup, the extras)."""

from __future__ import annotations

import re
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
from berth.domain.catalog.translated import in_language
from berth.domain.languages import choose_language, reading_language
from berth.domain.tickets import VOUCHER, TicketLine
from berth.read_models.bookings import BookingDetails
from berth.translations import LANGUAGES, Words, best_language

# The formats drawn as barcodes; a product that names none of them still gets a QR code.
CODE_FORMATS = (DeliveryFormat.QRCODE, DeliveryFormat.AZTECCODE, DeliveryFormat.CODE128)
MEETING_TYPES = (LocationType.START, LocationType.REDEMPTION)


@dataclass(frozen=True)
class TicketPage:
    """One printed ticket: the booking's voucher, or one unit item's ticket."""

    heading: str  # "Voucher", "Ticket 2 of 3" (in the page's language)
    supplier: str
    supplier_contact: str | None
    product: str
    option: str | None
    when: str | None
    lines: tuple[TicketLine, ...]
    instructions: tuple[str, ...]
    code: str
    formats: tuple[DeliveryFormat, ...]
    language: str  # the content's language tag; Berth's own words are in `words`
    words: Words
    start: datetime | None = None  # the departure, local (an Apple Wallet pass's relevant date)


def booking_language(details: BookingDetails) -> str:
    """The language of the booking's content: the first of the guest's languages (its contact's
    locales, else the confirming request's Accept-Language) the product has content in, else the
    product's own."""
    product = details.product
    return (
        choose_language(", ".join(details.booking.contact.reading_locales), product.languages)
        or product.locale
    )


def booking_words(details: BookingDetails) -> Words:
    """Berth's own words on the booking's documents (labels, dates, money): in the guest's
    language whenever Berth has texts in it, whatever languages the product's content is in."""
    product = details.product
    language = reading_language(
        details.booking.contact.reading_locales, product.languages, LANGUAGES, product.locale
    )
    return Words(best_language(language))


def _content(contents: dict[str, Content], language: str, fallback: str) -> Content | None:
    return in_language(contents, language, fallback)


def _titles(product: Product, option: Option, language: str) -> tuple[str, str | None]:
    product_content = _content(product.content, language, product.locale)
    option_content = _content(option.content, language, product.locale)
    title = (product_content and product_content.title) or product.internal_name
    option_title = (option_content and option_content.title) or (
        option.internal_name if len(product.options) > 1 else None
    )
    return title, option_title


def _place(location: Location, words: Words) -> str:
    return ", ".join(p for p in (location.title, words.address(location.place.postal_address)) if p)


def _meeting_point(product: Product, option: Option, language: str, words: Words) -> str | None:
    for contents in (option.content, product.content):
        content = _content(contents, language, product.locale)
        for location in content.locations if content else ():
            if any(t in MEETING_TYPES for t in location.types):
                return _place(location, words)
    return None


def _instructions(product: Product, option: Option, item: UnitItem | None, language: str) -> list[str]:
    features: list[Feature] = []
    for contents in (product.content, option.content):
        content = _content(contents, language, product.locale)
        features.extend(content.features if content else ())
    unit = option.unit(item.unit_id) if item is not None else None
    if unit is not None:
        unit_content = in_language(unit.content, language, product.locale)
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
    content = in_language(unit.content, language, product.locale)
    return (content and content.title) or unit.internal_name


def _when(details: BookingDetails, words: Words) -> str | None:
    slot = details.slot
    if slot is None:
        local_date = details.booking.local_date
        return words.date(local_date) if local_date else None
    if slot.all_day or slot.opening_hours:
        day = words.date(slot.start.date())
        hours = ", ".join(words("{opens} to {closes}", opens=o, closes=c) for o, c in slot.opening_hours)
        zone = slot.start.strftime("%Z")
        return words("{day}, open {hours} {zone}", day=day, hours=hours, zone=zone) if hours else day
    text = words.date_time(slot.start)
    if slot.end.date() == slot.start.date():
        return words("{start} to {end}", start=text, end=words.time(slot.end))
    return text


def _lines(details: BookingDetails, item: UnitItem | None, language: str, words: Words) -> list[TicketLine]:
    booking, product, option = details.booking, details.product, details.option
    lines = []
    meeting = _meeting_point(product, option, language, words)
    if meeting:
        lines.append(TicketLine(words("Meeting point"), meeting))
    if item is None:
        counts = Counter(i.unit_id for i in booking.unit_items)
        units = ", ".join(
            f"{n} \N{MULTIPLICATION SIGN} {_unit_title(product, option, unit_id, language)}"
            for unit_id, n in counts.items()
        )
        lines.append(TicketLine(words("Units"), units))
        names = [booking.contact.full_name, *(i.contact.full_name for i in booking.unit_items)]
        guests = list(dict.fromkeys(n for n in names if n))
        if guests:
            lines.append(TicketLine(words("Guests"), ", ".join(guests)))
    else:
        lines.append(TicketLine(words("Unit"), _unit_title(product, option, item.unit_id, language)))
        guest = item.contact.full_name or booking.contact.full_name
        if guest:
            lines.append(TicketLine(words("Guest"), guest))
    # A capability's labels (and words of its texts) are English, marked for the catalogues.
    lines.extend(
        TicketLine(*line.in_words(words)) for line in booking_lines(details, item) if not line.staff_only
    )
    reference = booking.supplier_reference
    if item is not None:
        reference = words(
            "{ticket} (booking {booking})", ticket=item.supplier_reference, booking=booking.supplier_reference
        )
    lines.append(TicketLine(words("Supplier reference"), reference))
    if booking.reseller_reference:
        lines.append(TicketLine(words("Reseller reference"), booking.reseller_reference))
    if booking.status is BookingStatus.REDEEMED and booking.redeemed_at is not None:
        lines.append(TicketLine(words("Redeemed"), words.date_time(booking.redeemed_at)))
    return lines


def ticket_pages(details: BookingDetails, supplier: Supplier, only: str | None = None) -> list[TicketPage]:
    """The booking's pages: its voucher (when the product delivers one), then one ticket per
    unit item (when it delivers tickets). `only`: the page of that unit item alone."""
    booking, product, option = details.booking, details.product, details.option
    language = booking_language(details)
    words = booking_words(details)
    title, option_title = _titles(product, option, language)
    formats = tuple(f for f in CODE_FORMATS if f in product.delivery_formats) or (DeliveryFormat.QRCODE,)
    contact = supplier.contact
    supplier_contact = " | ".join(p for p in (contact.telephone, contact.email, contact.website) if p) or None
    when = _when(details, words)
    targets: list[tuple[str, UnitItem | None]] = []
    if only is None and DeliveryMethod.VOUCHER in product.delivery_methods:
        targets.append((words("Voucher"), None))
    if DeliveryMethod.TICKET in product.delivery_methods:
        count = len(booking.unit_items)
        for index, item in enumerate(booking.unit_items):
            if only is None or item.uuid == only:
                targets.append((words("Ticket {n} of {count}", n=index + 1, count=count), item))
    return [
        TicketPage(
            heading=heading,
            supplier=supplier.name,
            supplier_contact=supplier_contact,
            product=title,
            option=option_title,
            when=when,
            lines=tuple(_lines(details, item, language, words)),
            instructions=tuple(_instructions(product, option, item, language)),
            code=item.supplier_reference if item is not None else booking.supplier_reference,
            formats=formats,
            language=language,
            words=words,
            start=details.slot.start if details.slot is not None else None,
        )
        for heading, item in targets
    ]


@dataclass(frozen=True)
class DocumentName:
    """What a ticket document is called: its link's text and its file's name (no suffix)."""

    label: str  # "Voucher (every guest)", "Adult ticket", "Adult ticket 2"
    filename: str  # "HARB-7KD3", "HARB-7KD3-adult", "HARB-7KD3-adult-2"


_FILENAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def document_names(details: BookingDetails) -> dict[str, DocumentName]:
    """The name of the voucher (key VOUCHER) and of each unit item's ticket (key: its uuid),
    in the guest's language, as its pages: a ticket is named by its unit, numbered when the
    booking has several of it."""
    booking, product, option = details.booking, details.product, details.option
    language, words = booking_language(details), booking_words(details)
    reference = _FILENAME_UNSAFE.sub("-", booking.supplier_reference)
    names = {VOUCHER: DocumentName(words("Voucher (every guest)"), reference)}
    counts = Counter(item.unit_id for item in booking.unit_items)
    seen: Counter[str] = Counter()
    for item in booking.unit_items:
        seen[item.unit_id] += 1
        unit = _unit_title(product, option, item.unit_id, language)
        number = seen[item.unit_id] if counts[item.unit_id] > 1 else None
        label = (
            words("{unit} ticket {n}", unit=unit, n=number) if number else words("{unit} ticket", unit=unit)
        )
        stem = "-".join(
            p for p in (reference, _FILENAME_UNSAFE.sub("-", item.unit_id), str(number or "")) if p
        )
        names[item.uuid] = DocumentName(label, stem)
    return names


def pages_of(all_details: Sequence[BookingDetails], supplier: Supplier) -> list[TicketPage]:
    return [page for details in all_details for page in ticket_pages(details, supplier)]
