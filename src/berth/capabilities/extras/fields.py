"""octo/extras: `extras` on options (booked per booking) and units (booked per unit item), with
their prices when octo/pricing is requested; `extraItems` on bookings and unit items, and with
octo/pricing the booking's `extraPricing` per extra."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.extras.extension import (
    ITEMS,
    Piece,
    booking_extras,
    of_booking,
    unit_extras,
)
from berth.capabilities.extras.manifest import DepartureExtras, extras_on
from berth.capabilities.ids import EXTRAS, PRICING
from berth.domain.bookings import UnitItem
from berth.domain.catalog import Option, Price, Product, Unit
from berth.domain.catalog.model import Extra
from berth.domain.price_lines import LineKind, line_of
from berth.domain.pricing import lowest_prices, pricing_json, total_json
from berth.domain.tickets import TicketLine

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails


def extra_view(product: Product, extra: Extra, view: View) -> JSON:
    """OCTO `Extra`; with octo/pricing its lowest price per currency as `pricingFrom`."""
    out: JSON = {
        "id": extra.id,
        "internalName": extra.internal_name,
        "title": extra.title,
        "shortDescription": extra.short_description,
        "description": extra.description,
        "reference": extra.reference,
        "restrictions": {
            "default": extra.default,
            "required": extra.min_quantity > 0,
            "minQuantity": extra.min_quantity,
            "maxQuantity": extra.max_quantity,
        },
    }
    if view.has(PRICING):
        out["pricingFrom"] = [pricing_json(p) for p in lowest_prices(extra.prices, product.currencies)]
    return out


def _items_view(details: BookingDetails, pieces: Sequence[Piece], view: View) -> list[JSON]:
    """OCTO `ExtraItem` for each piece whose extra the option still offers; `pricing` is what
    the piece was sold at (null without a currency or a price)."""
    found = []
    for piece in pieces:
        extra = details.option.extra(piece.extra_id)
        if extra is None:
            continue
        line = line_of(details.booking.price_lines, LineKind.EXTRA, piece.id)
        price = line.price if line is not None else None
        found.append(
            {
                "id": piece.id,
                "extraId": extra.id,
                "extra": extra_view(details.product, extra, view),
                "pricing": pricing_json(price) if price is not None else None,
            }
        )
    return found


class ExtrasCapability(Capability):
    id = EXTRAS
    docs = "https://docs.ventrata.com/capabilities/extras"
    booking_request_fields = frozenset({ITEMS})
    unit_item_request_fields = frozenset({ITEMS})

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        out["extras"] = [extra_view(product, e, view) for e in booking_extras(option)]

    def unit_fields(self, product: Product, option: Option, unit: Unit, out: JSON, view: View) -> None:
        out["extras"] = [extra_view(product, e, view) for e in unit_extras(option)]

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        booked = of_booking(details.booking)
        out[ITEMS] = _items_view(details, booked.booking, view)
        currency = details.booking.currency
        if view.has(PRICING) and currency is not None:
            by_extra: dict[str, list[Price]] = {}
            for line in details.booking.price_lines:
                if line.kind is LineKind.EXTRA:
                    by_extra.setdefault(line.item, []).append(line.price)
            out["extraPricing"] = [
                {"extraId": extra_id, **total_json(prices, currency)} for extra_id, prices in by_extra.items()
            ]

    def unit_item_fields(self, details: BookingDetails, item: UnitItem, out: JSON, view: View) -> None:
        out[ITEMS] = _items_view(details, of_booking(details.booking).of_item(item.uuid), view)

    def booking_lines(self, details: BookingDetails, item: UnitItem | None) -> list[TicketLine]:
        """The voucher lists every piece of the booking; a ticket its own and the booking's."""
        booked = of_booking(details.booking)
        pieces = booked.all if item is None else [*booked.of_item(item.uuid), *booked.booking]
        counts = Counter(p.extra_id for p in pieces)
        taken = []
        for extra_id, count in counts.items():
            extra = details.option.extra(extra_id)
            if extra is not None:
                taken.append(f"{count} \N{MULTIPLICATION SIGN} {extra.title or extra.internal_name}")
        return [TicketLine("Extras", ", ".join(taken))] if taken else []

    def departure_part(self, option: Option, travelling: Sequence[BookingDetails]) -> DepartureExtras | None:
        return extras_on(option, travelling)
