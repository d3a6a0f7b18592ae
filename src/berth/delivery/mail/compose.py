"""What a guest's email says: the facts of its bookings in the guest's language, rendered as
text and HTML (Jinja2, the HTML autoescaped), frozen when the message is queued."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.headerregistry import Address
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from berth.capabilities.base import View
from berth.capabilities.ids import PRICING
from berth.capabilities.registry import BY_ID, booking_lines
from berth.domain.bookings import Booking, BookingStatus, Contact
from berth.domain.catalog import Catalog, DeliveryFormat, Location, LocationType
from berth.domain.catalog.translated import in_language
from berth.domain.languages import reading_language
from berth.domain.slots import cancellation_cutoff
from berth.domain.tickets import ticket_keys
from berth.read_models.bookings import BookingDetails
from berth.tickets.sheet import booking_language, document_names
from berth.translations import LANGUAGES, N_, Words, best_language

SUBJECTS = {
    "receipt": N_("Your booking {reference}: {title}"),
    "cancelled": N_("Cancelled: booking {reference}, {title}"),
    "changed": N_("New time for booking {reference}: {title}"),
    "partly cancelled": N_("Tickets cancelled: booking {reference}, {title}"),
    "refunded": N_("Refunded: booking {reference}, {title}"),
}
# The letters that say something was cancelled: no ticket links, no attachments. A booking's
# tickets not through the gate cancelled (`TICKETS_CANCELLED` in its history) is a letter of its
# own (the kind fits the outbox's 16 characters).
PARTLY_CANCELLED = "partly cancelled"
# A card payment that arrived when its booking could no longer be confirmed, refunded in full
# (the payments service queues it: docs/payments.md).
REFUNDED = "refunded"
CANCELLING = ("cancelled", PARTLY_CANCELLED, REFUNDED)
# Why a card payment was refunded in full at once, by its cause (berth.domain.payments).
REFUND_CAUSES = {
    "places_taken": N_(
        "Your payment arrived after the hold on your places had run out, and by then the places were "
        "no longer available, so your booking could not be confirmed."
    ),
    "cancelled": N_(
        "Your payment arrived after your booking had been cancelled, so it could not be confirmed."
    ),
    "price_changed": N_(
        "Your payment arrived when your booking no longer cost the amount paid, so it could not be confirmed."
    ),
    "not_confirmed": N_("Your payment arrived when your booking could no longer be confirmed."),
}
REFUNDED_TO_CARD = N_(
    "{amount} has been refunded to your card; it can take a few days to appear on your statement."
)
NAME_LIMIT = 200  # a name longer than this is cut in greetings and headers
FIELD_LIMIT = 500
_ASCII_ADDRESS = re.compile(r"[!-;=?-~]+")  # printable ASCII but white space and < >
_SPACES = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")  # white space and control characters
_PRICING = BY_ID[PRICING]
_HTML = Environment(
    loader=PackageLoader("berth.delivery.mail", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_TEXT = Environment(
    loader=PackageLoader("berth.delivery.mail", "templates"),
    autoescape=False,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def one_line(value: str | None, limit: int = FIELD_LIMIT) -> str:
    """A guest's or catalogue's text for one line: white space (line breaks and separators too)
    and control characters made single spaces, cut at `limit` characters."""
    text = _SPACES.sub(" ", value or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mail_address(value: str | None) -> tuple[str | None, str | None]:
    """The contact's emailAddress as an address to send to, or None and why not. Berth sends
    without SMTPUTF8: a domain outside ASCII is sent as IDNA, a mailbox name outside ASCII (or
    with white space, or an encoded word) is refused."""
    if not value or not value.strip():
        return None, "the contact has no emailAddress"
    value = value.strip()
    why = f"the contact's emailAddress {one_line(value, 80)!r} is not an email address"
    try:
        address = Address(addr_spec=value)
    except Exception:  # the email package raises several kinds for a malformed address
        return None, why
    try:
        address = Address(username=address.username, domain=address.domain.encode("idna").decode("ascii"))
    except (UnicodeError, ValueError):
        return None, why + " Berth can send to (its domain is no IDNA name)"
    if len(value) > 254 or "." not in address.domain or "[" in address.domain:
        return None, why
    if _ASCII_ADDRESS.fullmatch(address.addr_spec) is None or "=?" in address.addr_spec:
        return None, why + " Berth can send to (printable ASCII without spaces)"
    return address.addr_spec, None


# What guests' emails come from when neither BERTH_MAIL_FROM nor the catalogue's supplier email
# is set (`berth serve` and `berth worker` warn): real relays refuse it.
FALLBACK_FROM = "Berth <bookings@berth.invalid>"


def mail_sender(configured: str | None, catalog: Catalog) -> str | None:
    """The From of guests' emails: BERTH_MAIL_FROM, else the supplier's name and contact email
    from the catalogue; None when neither is set."""
    if configured:
        return configured
    address, _ = mail_address(catalog.supplier.contact.email)
    if address is None:
        return None
    return str(Address(display_name=one_line(catalog.supplier.name, NAME_LIMIT), addr_spec=address))


def mail_language(contact: Contact, catalog: Catalog, fallback: str) -> str:
    """The email's language: the guest's languages (the contact's locales, else the confirming
    request's Accept-Language) against the catalogue's languages, else against the languages
    Berth's own texts are written in, else the product's own."""
    return reading_language(contact.reading_locales, catalog.languages, LANGUAGES, fallback)


def words_for(language: str) -> Words:
    """Berth's own words in the letter's language (English when Berth has no texts in it)."""
    return Words(best_language(language))


@dataclass(frozen=True)
class Line:
    """One booking, as the email shows it."""

    title: str
    option: str | None
    reference: str
    when: str
    previously: str | None
    where: list[str]
    guests: list[str]
    price: str | None
    cancellation: str
    tickets: list[tuple[str, str]] = field(default_factory=list)  # (label, URL)
    # What its tickets say of each capability's part (label, text): the pickup point and its
    # time, the directions, the extras.
    details: list[tuple[str, str]] = field(default_factory=list)
    # Where the guest sees, changes or cancels it: the web shop's "manage my booking" link of a
    # booking the shop sold (None: any other).
    manage: str | None = None


@dataclass(frozen=True)
class Letter:
    kind: str  # receipt, cancelled, changed, partly cancelled, refunded
    language: str
    name: str | None
    lines: list[Line]
    supplier: dict[str, str | None]
    why: list[str] = field(default_factory=list)
    pending: bool = False
    order_reference: str | None = None
    cancelled_tickets: list[str] = field(default_factory=list)  # tickets cancelled: their references

    @property
    def with_tickets(self) -> bool:
        """Whether the letter links the tickets (and attaches them): not when it cancels."""
        return self.kind not in CANCELLING


def _local(moment: datetime, zone: Any, words: Words, all_day: bool = False) -> str:
    local = moment.astimezone(zone)
    if all_day:
        return words("{date} (all day)", date=words.date(local.date()))
    return f"{words.date_time(local)} ({zone})"


def _money(total: dict[str, Any], words: Words) -> str:
    return words.money(int(total["retail"]), str(total["currency"]), int(total["currencyPrecision"]))


def _where(locations: Sequence[Location], words: Words) -> list[str]:
    wanted = (LocationType.START, LocationType.REDEMPTION)
    found = [loc for loc in locations if any(t in wanted for t in loc.types)] or list(locations[:1])
    return [
        one_line(", ".join(p for p in (location.title, words.address(location.place.postal_address)) if p))
        for location in found
    ]


def booking_line(
    details: BookingDetails,
    language: str,
    previously: datetime | None = None,
    *,
    box_office: bool = False,
    manage: str | None = None,
) -> Line:
    """The booking as the email shows it. `box_office`: sold by the supplier itself (its price is
    what the guest paid, and the guest cancels with the supplier); else sold by a reseller, whose
    price and terms the supplier does not know: no price, and the guest cancels through them."""
    booking, product, option, slot = details.booking, details.product, details.option, details.slot
    view = View(language=language)
    # Field by field: what the guest's language leaves out is read in the product's own.
    chosen = booking_language(details)
    product_content = in_language(product.content, chosen, product.locale)
    option_content = in_language(option.content, chosen, product.locale)
    words = words_for(language)
    zone = slot.start.tzinfo if slot is not None else None
    when = "" if slot is None else _local(slot.start, zone, words, slot.all_day)
    before = None
    if previously is not None and zone is not None:
        before = _local(previously, zone, words, slot is not None and slot.all_day)
    units: Counter[str] = Counter()
    for item in booking.unit_items:
        unit = option.unit(item.unit_id)
        content = in_language(unit.content, chosen, product.locale) if unit else None
        units[
            one_line((content.title if content else None) or (unit.internal_name if unit else item.unit_id))
        ] += 1
    guests = [f"{count} × {title}" for title, count in units.items()]  # noqa: RUF001
    priced: dict[str, Any] = {}
    if not box_office:
        cancellation = words("To cancel or change this booking, contact the agent you booked with.")
    else:
        _PRICING.booking_fields(details, priced, view, lambda d, v: {})
        if slot is not None and option.cancellation_cutoff_amount >= 0 and details.cancellable:
            cutoff = _local(cancellation_cutoff(option, slot), zone, words)
            cancellation = words("Free cancellation until {when}.", when=cutoff)
        else:
            cancellation = words("This booking cannot be cancelled free of charge.")
    tickets = []
    names = document_names(details)
    for key in ticket_keys(product, booking):  # none once cancelled
        url = details.tickets.url(key, DeliveryFormat.PDF_URL)
        if url is not None:
            tickets.append((one_line(names[key].label), url))
    title = (product_content.title if product_content else None) or product.internal_name
    option_title = (option_content.title if option_content else None) or None
    return Line(
        title=one_line(title),
        option=one_line(option_title) if option_title and not option.default else None,
        reference=booking.supplier_reference,
        when=when,
        previously=before,
        where=_where((option_content.locations if option_content else ()) or
                     (product_content.locations if product_content else ()), words),
        guests=guests,
        price=_money(priced["pricing"], words) if "pricing" in priced else None,
        cancellation=cancellation,
        tickets=tickets,
        manage=manage if booking.status in (BookingStatus.CONFIRMED, BookingStatus.PENDING) else None,
        details=[(label, one_line(text)) for label, text in
                 (line.in_words(words) for line in booking_lines(details, None) if not line.staff_only)],
    )  # fmt: skip


def supplier_of(catalog: Catalog) -> dict[str, str | None]:
    contact = catalog.supplier.contact
    return {
        "name": one_line(catalog.supplier.name),
        "email": one_line(contact.email) or None,
        "telephone": one_line(contact.telephone) or None,
        "website": one_line(contact.website) or None,
        "address": one_line(contact.address) or None,
    }


def why_cancelled(
    language: str, actor: str, cause: object, reason: object, supplier: str, *, box_office: bool = False,
    by_guest: bool = False,
) -> list[str]:  # fmt: skip
    """Who cancelled, and why when the supplier said so: a reseller's reason is its own note
    (free text the guest was never meant to read) and is not quoted. `by_guest`: a booking of
    the web shop, which its channel (the "reseller") cancels only at its guest's request, from
    the guest's own page, refunding the card in full."""
    words = words_for(language)
    if by_guest and actor == "reseller" and cause != "departure":
        return [
            words("You cancelled this booking."),
            words("The price you paid is refunded in full to your card."),
        ]
    if cause == "departure":
        why = [words("{supplier} cancelled the departure.", supplier=supplier)]
    elif actor == "reseller" and not box_office:
        why = [words("It was cancelled at the request of the agent you booked with.")]
    else:
        why = [words("It was cancelled by {supplier}.", supplier=supplier)]
    if actor != "reseller" and isinstance(reason, str) and reason.strip():
        why.append(words("Reason: {reason}", reason=one_line(reason)))
    if box_office:
        why.append(words("For any refund, contact {supplier}.", supplier=supplier))
    else:
        # The supplier does not know what the agent charged or refunds: it promises nothing.
        why.append(words("Any refund is handled by the agent you booked with."))
    return why


def why_refunded(language: str, cause: object, reason: object, refunded: str) -> list[str]:
    """Why a payment was refunded (`RefundCause` of berth.domain.payments; staff's reason in
    their own words) and how much. A letter queued before causes were kept says no more than
    that the booking could not be confirmed."""
    words = words_for(language)
    why = [] if cause == "staff" else [words(REFUND_CAUSES.get(str(cause), REFUND_CAUSES["not_confirmed"]))]
    if cause == "staff" and isinstance(reason, str) and reason.strip():
        why.append(words("Reason: {reason}", reason=one_line(reason)))
    return [*why, words(REFUNDED_TO_CARD, amount=refunded)]


def refunded_amount(refund: object, booking: Booking, language: str) -> str | None:
    """A refund's amount (`{"amount": minor units, "currency": ...}`) in the guest's words, in
    the precision of the booking's prices."""
    if not isinstance(refund, dict) or not isinstance(refund.get("amount"), int):
        return None
    currency = str(refund.get("currency") or booking.currency or "")
    precision = next(
        (p.price.currency_precision for p in booking.price_lines if p.price.currency == currency), 2
    )
    return words_for(language).money(refund["amount"], currency, precision)


def is_pending(bookings: Sequence[Booking]) -> bool:
    return any(b.status is BookingStatus.PENDING for b in bookings)


def render(letter: Letter) -> tuple[str, str, str]:
    """The subject, the text and the HTML of a letter."""
    words = words_for(letter.language)
    first = letter.lines[0]
    reference = letter.order_reference or first.reference
    subject = one_line(words(SUBJECTS[letter.kind], reference=reference, title=first.title), 250)
    name = one_line(letter.name, NAME_LIMIT) if letter.name else None
    context = {"letter": letter, "t": words, "name": name, "subject": subject}
    text = _TEXT.get_template("message.txt").render(context)
    html = _HTML.get_template("message.html").render(context)
    return subject, text, html
