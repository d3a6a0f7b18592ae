"""What the shop says of a booking's offer (octo/offers), in the guest's language: its label in
the price summary ("Early bird -15%", with a minus sign), whether the checkout asks for a promo code, and why a
code was refused (the booking core's reason read back by `berth.domain.shop_offers`)."""

from __future__ import annotations

from berth.capabilities.ids import OFFERS
from berth.domain.bookings import Booking
from berth.domain.discounts import OfferTerms
from berth.domain.shop_offers import Why, offer_problem
from berth.read_models.bookings import BookingDetails
from berth.translations import N_, Words

REASONS = {
    Why.UNKNOWN: N_("We do not know this code. Please check it and try again."),
    Why.PAUSED: N_("This code cannot be used at the moment."),
    Why.NOT_YET: N_("This code cannot be used yet."),
    Why.EXPIRED: N_("This code has expired."),
    Why.CHANNEL: N_("This code cannot be used in our online shop."),
    Why.PRODUCT: N_("This code cannot be used for {product}."),
    Why.TRAVEL_FROM: N_("This code is for trips from {date}."),
    Why.TRAVEL_UNTIL: N_("This code is for trips until {date}."),
    Why.WEEKDAYS: N_("This code is only for trips on {days}."),
    Why.DAYS_AHEAD: N_("This code is for bookings made at least {count} days before the trip."),
    Why.CURRENCY: N_("This code cannot be used when paying in {currency}."),
    Why.NO_UNITS: N_("This code does not apply to any of the tickets in your booking."),
    Why.MIN_UNITS: N_("This code needs at least {count} tickets it applies to in your booking."),
    Why.MAX_UNITS: N_("This code applies to at most {count} tickets in one booking."),
    Why.MIN_TOTAL: N_("This code is for bookings of at least {amount}."),
    Why.USED_UP: N_("This code has been used up."),
    Why.USED_UP_BY_EMAIL: N_(
        "This code has already been used as often as it may be with your email address."
    ),
    Why.OTHER: N_("This code cannot be used for this booking."),
}
NO_CODE = N_("Please type your promo code.")


def booking_offer(booking: Booking) -> OfferTerms | None:
    """The offer the booking has (a code's or an automatic one), as it kept it."""
    document = booking.extensions.get(OFFERS)
    return OfferTerms.from_document(document) if document else None


def offer_label(words: Words, terms: OfferTerms) -> str:
    """The offer's title and, for a percentage, what it takes off: `Early bird -15%` (with a
    minus sign)."""
    title = terms.title(words.language)
    if terms.percent is None:
        return title
    return f"{title} \N{MINUS SIGN}{words.percent(terms.percent)}"


def asks_for_code(details: BookingDetails) -> bool:
    """Whether the checkout shows the promo-code field: the shop may use a code on the booking's
    product, or the booking has one (a field that no code could fill would mislead). A package
    booking is not changed once held (docs/shop.md), so it takes no code."""
    if details.product.is_package:
        return False
    terms = booking_offer(details.booking)
    return (terms is not None and terms.code is not None) or any(c.offer.code for c in details.offer_choices)


def refusal_text(words: Words, reason: str, product: str) -> str:
    """Why a code cannot be used on the booking (`reason`: `OfferRefused.reason`), in the guest's
    words; `product` is the booking's product's title."""
    problem = offer_problem(reason)
    values: dict[str, object] = {"product": product, "count": problem.count, "currency": problem.currency}
    if problem.day is not None:
        values["date"] = words.date(problem.day)
    if problem.weekdays:
        names = [words.day_name(day) for day in problem.weekdays]
        values["days"] = ", ".join(names[:-1]) + words(" or ") + names[-1] if len(names) > 1 else names[0]
    if problem.amount is not None and problem.currency is not None:
        values["amount"] = words.money(problem.amount, problem.currency, problem.precision)
    return words(REASONS[problem.why], **values)
