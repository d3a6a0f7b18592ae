"""octo/offers' fields: on a booking its offer (`offerCode`, `offerTitle`, `offer`), the offers
its channel may use (`offers`, each `usable` or not with its `unusableReason`) and, with
octo/pricing, what the offer took off each pricing object (`offerDiscount`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import OFFERS, PRICING
from berth.capabilities.offers.extension import CODE, terms_of
from berth.domain.bookings import UnitItem
from berth.domain.catalog import Price, PricingPer
from berth.domain.discounts import OfferTerms, discounted
from berth.domain.offers import ALL, Offer
from berth.domain.price_lines import LineDiscount, LineKind, PriceLine, PriceLines, line_of
from berth.domain.pricing import pricing_json, total_json
from berth.services.offers import departure_lines

if TYPE_CHECKING:
    from berth.read_models.availability import CalendarDay, SlotAvailability
    from berth.read_models.bookings import BookingDetails
    from berth.read_models.orders import OrderDetails

PRICE_KEYS = ("currency", "currencyPrecision", "retail", "original", "net", "includedTaxes")


def _label(offer: Offer, language: str | None) -> str:
    written = offer.text(language).label
    if written:
        return written
    if offer.discount.percent is not None:
        return f"{offer.discount.percent.normalize():f}% off"
    return ""


def _unit_ids(offer: Offer) -> list[str]:
    """The units an offer is limited to (empty: every unit)."""
    if offer.applies_to == ALL:
        return []
    return sorted({u for target in offer.applies_to for u in target.units or ()})


def offer_json(offer: Offer, view: View, currency: str | None, reason: str | None) -> JSON:
    """OCTO `Offer` (Ventrata): `code` is empty for an automatic offer."""
    text = offer.text(view.language)
    return {
        "id": offer.octo_id,
        "title": text.title,
        "label": _label(offer, view.language),
        "code": offer.code or "",
        "description": text.description or None,
        "netDiscount": offer.net_discount.value,
        "restrictions": {
            "minUnits": offer.min_units,
            "maxUnits": offer.max_units,
            "minTotal": offer.min_total.get(currency) if currency is not None else None,
            "maxTotal": None,
            "unitIds": _unit_ids(offer),
        },
        "usable": reason is None,
        "unusableReason": reason,
    }


def _terms_json(terms: OfferTerms, view: View) -> JSON:
    """The booking's offer as it kept it, when the offer is no longer in the document."""
    return {
        "id": terms.octo_id,
        "title": terms.title(view.language),
        "label": f"{terms.percent.normalize():f}% off" if terms.percent is not None else "",
        "code": terms.code or "",
        "description": None,
        "netDiscount": terms.net_discount.value,
        "restrictions": {
            "minUnits": terms.min_units,
            "maxUnits": terms.max_units,
            "minTotal": None,
            "maxTotal": None,
            "unitIds": sorted(terms.unit_ids or ()),
        },
        "usable": True,
        "unusableReason": None,
    }


def discount_json(discounts: list[LineDiscount]) -> JSON | None:
    """OCTO `OfferDiscount`: what the offer took off (retail, net and each tax), summed."""
    if not discounts:
        return None
    taxes: dict[str, JSON] = {}
    for discount in discounts:
        for name, retail, net in discount.taxes:
            entry = taxes.setdefault(name, {"name": name, "retail": 0, "net": 0, "shortDescription": None})
            entry["retail"] += retail
            entry["net"] += net
    return {
        "retail": sum(d.retail for d in discounts),
        "net": sum(d.net for d in discounts),
        "includedTaxes": list(taxes.values()),
    }


def _priced(entry: JSON) -> Price:
    """A pricing object of an answer as a price."""
    return Price.model_validate({key: entry[key] for key in PRICE_KEYS})


def _discounted_entry(entry: JSON, terms: OfferTerms, kind: LineKind) -> JSON:
    """A pricing object (of one unit, or of a per-booking price) at the offer's terms."""
    line = discounted((PriceLine(kind, None, entry.get("unitId") or "", _priced(entry)),), terms)[0]
    found = line.discount
    return {**entry, **pricing_json(line.price), "offerDiscount": discount_json([found] if found else [])}


def _discounted_total(lines: PriceLines, terms: OfferTerms, currency: str) -> JSON:
    priced = discounted(lines, terms)
    total = total_json([line.price for line in priced], currency)
    total["offerDiscount"] = discount_json([line.discount for line in priced if line.discount is not None])
    return total


def _departure_fields(
    item: SlotAvailability | CalendarDay, out: JSON, view: View, total_key: str, units_key: str
) -> None:
    """The offer fields of an availability or a calendar day, and with octo/pricing its
    prices at the offer (`offerDiscount` on each pricing object: null without an offer)."""
    offer, currency = item.offer, item.currency
    out[CODE] = offer.code if offer is not None else None
    out["offerTitle"] = offer.text(view.language).title if offer is not None else None
    out["offer"] = offer_json(offer, view, currency, None) if offer is not None else None
    out["offers"] = [offer_json(c.offer, view, currency, c.reason) for c in item.offer_choices]
    if not view.has(PRICING) or currency is None:
        return
    terms = OfferTerms.of(offer, item.product.id, item.option.id, currency) if offer is not None else None
    per_booking = item.product.pricing_per is PricingPer.BOOKING
    entries = out.get(units_key)
    if isinstance(entries, list):
        out[units_key] = [
            _discounted_entry(e, terms, LineKind.UNIT) if terms else {**e, "offerDiscount": None}
            for e in entries
        ]
    total = out.get(total_key)
    if isinstance(total, dict):
        if terms is None:
            total["offerDiscount"] = None
        elif per_booking:
            out[total_key] = _discounted_entry(total, terms, LineKind.BOOKING)
        elif item.units:
            out[total_key] = _discounted_total(departure_lines(item), terms, currency)
        else:  # the lowest unit price: at the offer as one unit
            out[total_key] = _discounted_entry(total, terms, LineKind.UNIT)


class OffersCapability(Capability):
    id = OFFERS
    docs = "https://docs.ventrata.com/capabilities/offers"
    dependencies = (PRICING,)
    booking_request_fields = frozenset({CODE})

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        _departure_fields(item, out, view, "pricing", "unitPricing")

    def calendar_fields(self, day: CalendarDay, out: JSON, view: View) -> None:
        _departure_fields(day, out, view, "pricingFrom", "unitPricingFrom")

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        terms = terms_of(details.booking)
        currency = details.booking.currency
        current = None
        if terms is not None:
            current = next((c for c in details.offer_choices if c.offer.id == terms.offer_id), None)
        out[CODE] = terms.code if terms is not None else None
        out["offerTitle"] = terms.title(view.language) if terms is not None else None
        out["offerIsCombination"] = False
        out["offerComparisons"] = []
        if terms is None:
            out["offer"] = None
        elif current is not None:
            out["offer"] = offer_json(current.offer, view, currency, None)
        else:
            out["offer"] = _terms_json(terms, view)
        out["offers"] = [offer_json(c.offer, view, currency, c.reason) for c in details.offer_choices]
        pricing = out.get("pricing")
        if isinstance(pricing, dict):
            lines = [line.discount for line in details.booking.price_lines if line.discount is not None]
            pricing["offerDiscount"] = discount_json(lines)

    def order_fields(self, details: OrderDetails, out: JSON, view: View) -> None:
        out["offerCombinations"] = []  # Berth sells no combinations of offers

    def unit_item_fields(self, details: BookingDetails, item: UnitItem, out: JSON, view: View) -> None:
        pricing = out.get("pricing")
        if isinstance(pricing, dict):
            line = line_of(details.booking.price_lines, LineKind.UNIT, item.uuid)
            found = line.discount if line is not None else None
            pricing["offerDiscount"] = discount_json([found] if found is not None else [])
