"""Whether an offer can be used on a sale, and if not, why (in words a reseller or guest reads:
Ventrata's `unusableReason`), and which offer a sale gets.

A sale is tried in two shapes: a departure before any units are chosen (availability and
calendar answers: the unit limits and the minimum total are not known yet, so they are not
checked) and a booking (everything is checked). Uses are counted by the store under a lock
(store.offers_repo), and are handed in here as numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from berth.domain.catalog.model import WEEKDAYS
from berth.domain.offers import ALL, SHOP, Offer, OfferRefused, OffersDocument


@dataclass(frozen=True)
class Sale:
    """What an offer is tried on. `unit_ids` None: no units chosen yet; `total`: the retail of
    the booking before any discount (None: not known yet)."""

    channel: str  # the connection's id
    shop: bool  # the connection is the supplier's web shop
    product_id: str
    option_id: str
    travel_date: date | None
    now: datetime
    currency: str | None = None
    unit_ids: tuple[str, ...] | None = None
    total: int | None = None
    precision: int = 2  # the currency's minor units


@dataclass(frozen=True)
class OfferChoice:
    """An offer a sale is shown, and why it cannot be used there (None: it can)."""

    offer: Offer
    reason: str | None


@dataclass(frozen=True)
class Uses:
    """The offer's uses by live bookings (other than the one being written)."""

    total: int = 0
    by_email: int = 0


def _money(amount: int, currency: str, precision: int) -> str:
    return f"{currency} {Decimal(amount).scaleb(-precision):.{precision}f}"


def _day_names(days: Iterable[str]) -> str:
    names = {"MON": "Mon", "TUE": "Tue", "WED": "Wed", "THU": "Thu", "FRI": "Fri", "SAT": "Sat", "SUN": "Sun"}
    ordered = [names[d] for d in names if d in set(days)]
    return ", ".join(ordered[:-1]) + f" and {ordered[-1]}" if len(ordered) > 1 else ordered[0]


def _channel_reason(offer: Offer, sale: Sale) -> str | None:
    if offer.channels == ALL or sale.channel in offer.channels or (sale.shop and SHOP in offer.channels):
        return None
    return "it is not offered on this sales channel"


def sale_reason(offer: Offer, sale: Sale) -> str | None:
    if not offer.active:
        return "it is paused"
    if offer.sale_from is not None and sale.now < offer.sale_from:
        return f"it can be used from {offer.sale_from.isoformat()}"
    if offer.sale_until is not None and sale.now > offer.sale_until:
        return f"it expired on {offer.sale_until.isoformat()}"
    return _channel_reason(offer, sale)


def _travel_reason(offer: Offer, sale: Sale) -> str | None:
    if not offer.covers(sale.product_id, sale.option_id):
        return f"it does not apply to product {sale.product_id!r}, option {sale.option_id!r}"
    day = sale.travel_date
    if day is None:
        if offer.travel_from or offer.travel_until or offer.weekdays or offer.min_days_ahead:
            return "it is only for dated travel"
        return None
    if offer.travel_from is not None and day < offer.travel_from:
        return f"it is for travel from {offer.travel_from.isoformat()}"
    if offer.travel_until is not None and day > offer.travel_until:
        return f"it is for travel until {offer.travel_until.isoformat()}"
    if offer.weekdays is not None and WEEKDAYS[day.weekday()] not in offer.weekdays:
        return f"only available on {_day_names(offer.weekdays)}"
    if offer.min_days_ahead is not None and (day - sale.now.date()).days < offer.min_days_ahead:
        return f"it is for bookings made at least {offer.min_days_ahead} days before travel"
    return None


def _booking_reason(offer: Offer, sale: Sale) -> str | None:
    """The limits of a booking's units, currency and total (only once they are known)."""
    currency = sale.currency
    if currency is not None and offer.discount.amounts is not None and currency not in offer.discount.amounts:
        return f"it has no discount in {currency}"
    if sale.unit_ids is not None:
        allowed = offer.unit_ids(sale.product_id, sale.option_id)
        count = sum(1 for u in sale.unit_ids if allowed is None or u in allowed)
        if count == 0:
            return "it does not apply to any of the booking's units"
        if offer.min_units is not None and count < offer.min_units:
            return f"it needs at least {offer.min_units} units it applies to; the booking has {count}"
        if offer.max_units is not None and count > offer.max_units:
            return f"it allows at most {offer.max_units} units it applies to; the booking has {count}"
    if sale.total is not None and currency is not None and currency in offer.min_total:
        least = offer.min_total[currency]
        if sale.total < least:
            need, has = _money(least, currency, sale.precision), _money(sale.total, currency, sale.precision)
            return f"it needs a total of at least {need}; the booking's is {has}"
    return None


def uses_reason(offer: Offer, uses: Uses) -> str | None:
    if offer.max_uses is not None and uses.total >= offer.max_uses:
        return "it has been used as many times as it may be"
    if offer.max_uses_per_email is not None and uses.by_email >= offer.max_uses_per_email:
        return "this email address has used it as many times as it may"
    return None


def unusable_reason(offer: Offer, sale: Sale, uses: Uses | None = None) -> str | None:
    """Why `offer` cannot be used on `sale` (None: it can). `uses` None: not counted here."""
    return (
        sale_reason(offer, sale)
        or _travel_reason(offer, sale)
        or _booking_reason(offer, sale)
        or (uses_reason(offer, uses) if uses is not None else None)
    )


def visible(offer: Offer, sale: Sale) -> bool:
    """Whether a channel is shown `offer` at all (in `GET /offers` and answers' `offers`)."""
    return offer.active and _channel_reason(offer, sale) is None


def offer_for_code(document: OffersDocument, code: str, sale: Sale) -> Offer:
    """The offer of `code` for `sale`; `OfferRefused` naming why it cannot be used."""
    offer = document.by_code(code)
    if offer is None or (offer.active and not visible(offer, sale)):
        raise OfferRefused(code, "no offer has this code")
    reason = unusable_reason(offer, sale)
    if reason is not None:
        raise OfferRefused(code, reason)
    return offer


def automatic_offers(document: OffersDocument, sale: Sale) -> list[Offer]:
    """The automatic offers usable on `sale` (uses not counted), in the document's order."""
    return [o for o in document.automatic if unusable_reason(o, sale) is None]


def choices(document: OffersDocument, sale: Sale) -> tuple[OfferChoice, ...]:
    """The offers shown on `sale`: those its channel may use for its product and option, each
    with why it cannot be used on it (uses not counted)."""
    return tuple(
        OfferChoice(offer, unusable_reason(offer, sale))
        for offer in document.offers
        if visible(offer, sale) and offer.covers(sale.product_id, sale.option_id)
    )
