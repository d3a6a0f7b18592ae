"""octo/offers' fields: on a booking its offer (`offerCode`, `offerTitle`, `offer`), the offers
its channel may use (`offers`, each `usable` or not with its `unusableReason`) and, with
octo/pricing, what the offer took off each pricing object (`offerDiscount`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import OFFERS, PRICING
from berth.capabilities.offers.extension import CODE, terms_of
from berth.domain.bookings import UnitItem
from berth.domain.discounts import OfferTerms
from berth.domain.offers import ALL, Offer
from berth.domain.price_lines import LineDiscount, LineKind, line_of

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails


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
            entry = taxes.setdefault(name, {"name": name, "retail": 0, "net": 0})
            entry["retail"] += retail
            entry["net"] += net
    return {
        "retail": sum(d.retail for d in discounts),
        "net": sum(d.net for d in discounts),
        "includedTaxes": list(taxes.values()),
    }


class OffersCapability(Capability):
    id = OFFERS
    docs = "https://docs.ventrata.com/capabilities/offers"
    dependencies = (PRICING,)
    booking_request_fields = frozenset({CODE})

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

    def unit_item_fields(self, details: BookingDetails, item: UnitItem, out: JSON, view: View) -> None:
        pricing = out.get("pricing")
        if isinstance(pricing, dict):
            line = line_of(details.booking.price_lines, LineKind.UNIT, item.uuid)
            found = line.discount if line is not None else None
            pricing["offerDiscount"] = discount_json([found] if found is not None else [])
