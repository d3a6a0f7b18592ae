"""What the shop's pages show of the catalogue and of a booking, in the guest's language: the
product's texts (the guest's language field by field, else the product's own), its pictures,
meeting point, duration, inclusions and cancellation terms, a departure's time, a booking's
priced lines with their discount and VAT."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from berth.domain.bookings import CHANGEABLE
from berth.domain.catalog import (
    Content,
    DurationUnit,
    FeatureType,
    LocationType,
    Option,
    Product,
    RentalDuration,
    Unit,
)
from berth.domain.catalog.model import Extra, Media, MediaRel, MediaType
from berth.domain.catalog.translated import in_language
from berth.domain.languages import choose_language
from berth.domain.price_lines import LineKind
from berth.domain.shop_prices import Amount
from berth.domain.slots import Slot, cancellation_cutoff
from berth.http.shop.offer_words import booking_offer, offer_label
from berth.read_models.bookings import BookingDetails
from berth.translations import Words

PICTURES = (MediaType.JPEG, MediaType.PNG)
MEETING = (LocationType.START, LocationType.REDEMPTION)


def content_language(product: Product, language: str) -> str:
    """The language of the product's own texts the guest reads: theirs when the product has
    it (`de` reads `de-DE`), else the product's."""
    return choose_language(language, product.languages) or product.locale


@dataclass(frozen=True)
class ProductText:
    title: str
    short: str | None
    description: str | None
    pictures: list[Media]
    features: dict[FeatureType, list[str]]
    meeting: list[str]
    faqs: list[tuple[str, str]]


def _content(product: Product, contents: dict[str, Content], language: str) -> Content | None:
    return in_language(contents, content_language(product, language), product.locale)


def product_text(product: Product, words: Words, option: Option | None = None) -> ProductText:
    content = _content(product, product.content, words.language) or Content()
    own = _content(product, option.content, words.language) if option is not None else None
    features: dict[FeatureType, list[str]] = {}
    for feature in (*content.features, *(own.features if own else ())):
        if feature.short_description:
            features.setdefault(feature.type, []).append(feature.short_description)
    pictures = sorted(
        (m for m in content.media if m.type in PICTURES and m.rel is not MediaRel.LOGO),
        key=lambda m: m.rel is not MediaRel.COVER,
    )
    meeting = []
    for location in (*(own.locations if own else ()), *content.locations):
        if any(t in MEETING for t in location.types):
            place = ", ".join(p for p in (location.title, words.address(location.place.postal_address)) if p)
            if place and place not in meeting:
                meeting.append(place)
    return ProductText(
        title=content.title or product.internal_name,
        short=content.short_description,
        description=content.description,
        pictures=pictures,
        features=features,
        meeting=meeting,
        faqs=[(f.question, f.answer) for f in content.faqs],
    )


def option_title(product: Product, option: Option, words: Words) -> str:
    content = _content(product, option.content, words.language)
    return (content.title if content else None) or option.internal_name


def unit_title(product: Product, unit: Unit, words: Words) -> str:
    content = in_language(unit.content, content_language(product, words.language), product.locale)
    return (content.title if content else None) or unit.internal_name


def unit_note(product: Product, unit: Unit, words: Words) -> str | None:
    """What the unit is, for the guest: its short description, else its ages."""
    content = in_language(unit.content, content_language(product, words.language), product.locale)
    if content is not None and content.short_description:
        return content.short_description
    r = unit.restrictions
    if r.min_age > 0 and r.max_age < 100:
        return words("Ages {low} to {high}", low=r.min_age, high=r.max_age)
    if r.min_age > 0:
        return words("Ages {low} and over", low=r.min_age)
    return None


def extra_title(extra: Extra) -> str:
    return extra.title or extra.internal_name


def duration_text(words: Words, minutes: int) -> str:
    if minutes % (24 * 60) == 0:
        days = minutes // (24 * 60)
        return words("1 day") if days == 1 else words("{count} days", count=days)
    if minutes % 60 == 0:
        hours = minutes // 60
        return words("1 hour") if hours == 1 else words("{count} hours", count=hours)
    if minutes < 60:
        return words("{count} minutes", count=minutes)
    return words("{hours} h {minutes} min", hours=minutes // 60, minutes=minutes % 60)


CUTOFF_MINUTES = {DurationUnit.minute: 1, DurationUnit.hour: 60, DurationUnit.day: 24 * 60}


def cancellation_text(words: Words, option: Option) -> str:
    """The option's cancellation terms: free until its cutoff before the start."""
    minutes = option.cancellation_cutoff_amount * CUTOFF_MINUTES[option.cancellation_cutoff_unit]
    if minutes == 0:
        return words("Free cancellation until it starts, with a full refund.")
    return words(
        "Free cancellation until {time} before it starts, with a full refund.",
        time=duration_text(words, minutes),
    )


def free_cancellation_until(words: Words, details: BookingDetails, now: datetime) -> str | None:
    """Until when the guest may cancel the booking with a full refund, if they still may `now`
    (a hold is always released freely, but once paid follows the cutoff)."""
    if details.slot is None or not details.cancellable:
        return None
    # A package is cancellable until the first cutoff of it and its included bookings.
    cutoff = min(
        cancellation_cutoff(each.option, each.slot)
        for each in (details, *details.package_bookings)
        if each.slot is not None
    )
    return words.date_time(cutoff.astimezone(details.slot.start.tzinfo)) if now < cutoff else None


def booking_cancellation_text(words: Words, details: BookingDetails, now: datetime) -> str | None:
    """A booking's own terms, as its receipt states them: free until its departure's cutoff, or
    not (the cutoff passed, or the booking is open-dated); none once it is over (cancelled,
    expired, used)."""
    if details.booking.status not in CHANGEABLE:
        return None
    until = free_cancellation_until(words, details, now)
    if until is None:
        return words("This booking cannot be cancelled free of charge.")
    return words("Free cancellation until {when}, with a full refund.", when=until)


def slot_time(words: Words, slot: Slot, rental: RentalDuration | None = None) -> str:
    """A departure as the guest picks it: `10:00`, `Open 09:30 to 17:30`, or a rental's pick-up
    and return."""
    if slot.all_day or slot.opening_hours:
        hours = ", ".join(words("{opens} to {closes}", opens=o, closes=c) for o, c in slot.opening_hours)
        return words("Open {hours}", hours=hours) if hours else words("All day")
    start = words.time(slot.start)
    if rental is not None:
        back = words.time(slot.end) if slot.end.date() == slot.start.date() else words.date_time(slot.end)
        return words("{start}, back by {end}", start=start, end=back)
    return start


def when_text(words: Words, details: BookingDetails) -> str:
    slot = details.slot
    if slot is None:
        return words.date(details.booking.local_date) if details.booking.local_date else ""
    return f"{words.date(slot.local_date)}, {slot_time(words, slot, details.rental)}"


@dataclass(frozen=True)
class SummaryDiscount:
    """What the booking's offer takes off a line: its label (`Early bird -15%`), the amount, and
    the line's price after it."""

    label: str
    amount: Amount
    paid: Amount


@dataclass(frozen=True)
class SummaryLine:
    """A priced line: `amount` is its price before any discount, `taxes` those its price paid
    includes."""

    label: str
    amount: Amount
    taxes: list[tuple[str, Amount]] = field(default_factory=list)
    discount: SummaryDiscount | None = None


@dataclass(frozen=True)
class Summary:
    lines: list[SummaryLine]
    total: Amount | None
    taxes: list[tuple[str, Amount]]


def summary(details: BookingDetails, words: Words) -> Summary:
    """Every priced line of the booking as it was sold (a sale keeps its price), each at its
    price before the discount with what its offer took off, and the taxes it includes; the
    totals: what the guest pays."""
    booking, product, option = details.booking, details.product, details.option
    units = {item.uuid: item.unit_id for item in booking.unit_items}
    terms = booking_offer(booking)
    offer = offer_label(words, terms) if terms is not None else ""
    counts: Counter[str] = Counter()
    lines = []
    taxes: dict[str, int] = {}
    total, currency, precision = 0, None, 2
    for line in booking.price_lines:
        price = line.price
        currency, precision = price.currency, price.currency_precision
        if line.kind is LineKind.UNIT:
            unit = option.unit(units.get(line.ref or "", line.item))
            title = unit_title(product, unit, words) if unit is not None else line.item
            counts[title] += 1
            label = words("{unit} ticket {n}", unit=title, n=counts[title])
        elif line.kind is LineKind.EXTRA:
            extra = option.extra(line.item)
            label = extra_title(extra) if extra is not None else line.item
        else:
            label = option_title(product, option, words)
        line_taxes = [(t.name, Amount(t.retail, price.currency, precision)) for t in price.included_taxes]
        for name, amount in line_taxes:
            taxes[name] = taxes.get(name, 0) + amount.minor
        paid = Amount(price.retail, price.currency, precision)
        off = line.discount.retail if line.discount is not None else 0
        discount = SummaryDiscount(offer, Amount(off, price.currency, precision), paid) if off else None
        lines.append(
            SummaryLine(label, Amount(price.retail + off, price.currency, precision), line_taxes, discount)
        )
        total += price.retail
    if currency is None:
        return Summary(lines, None, [])
    return Summary(
        lines,
        Amount(total, currency, precision),
        [(n, Amount(a, currency, precision)) for n, a in taxes.items()],
    )
