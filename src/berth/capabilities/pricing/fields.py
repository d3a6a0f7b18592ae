"""octo/pricing: currencies on products, `pricingFrom` on options (per booking) or units,
prices on availability, calendar days and bookings, in the requested currency.

A rental's prices are the option's prices times its rental duration's `pricingMultiplier`
(`scale_price`: each amount rounded half up to whole minor units), whether or not octo/rentals
is requested: the price is what the booking costs. `pricingFrom` of a rental option starts at
its smallest multiplier with octo/rentals, and is its default duration's price without (the
only duration sold then)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import PRICING, RENTALS
from berth.domain.bookings import ENDED, UnitItem
from berth.domain.catalog import Option, Price, PricingPer, Product, RentalDuration, Unit
from berth.domain.price_lines import LineKind, line_of
from berth.domain.pricing import lowest_prices, price_for, pricing_json, scale_price, total_json

if TYPE_CHECKING:
    from berth.read_models.availability import CalendarDay, SlotAvailability
    from berth.read_models.bookings import BookingDetails
    from berth.read_models.orders import OrderDetails


def _lowest(option: Option, prices: tuple[Price, ...], currencies: list[str], view: View) -> list[Price]:
    """The lowest prices; for a rental option, at its cheapest multiplier (with octo/rentals)
    or its default duration's (without: the one it is sold at)."""
    lowest = lowest_prices(prices, currencies)
    default = option.default_rental_duration
    if default is None:
        return lowest
    if view.has(RENTALS):
        factor = min(d.pricing_multiplier for d in option.rental_durations)
    else:
        factor = default.pricing_multiplier
    return [scale_price(price, factor) for price in lowest]


def _unit_prices(
    option: Option, currency: str, day: date, rental: RentalDuration | None
) -> list[tuple[Unit, Price]]:
    found = []
    for unit in option.units:
        price = price_for(unit.prices, currency, day, rental)
        if price is not None:
            found.append((unit, price))
    return found


def _requested_prices(
    option: Option, units: Sequence[tuple[str, int]], currency: str, day: date, rental: RentalDuration | None
) -> list[Price]:
    prices = []
    for unit_id, quantity in units:
        unit = option.unit(unit_id)
        price = price_for(unit.prices, currency, day, rental) if unit else None
        if price is not None:
            prices.extend([price] * quantity)
    return prices


def _booking_total(details: BookingDetails) -> JSON | None:
    """What the booking was sold at: the sum of its stored lines (domain.price_lines)."""
    currency = details.booking.currency
    if currency is None:
        return None
    return total_json([line.price for line in details.booking.price_lines], currency)


class PricingCapability(Capability):
    id = PRICING
    docs = "https://docs.octo.travel/octo-api-core/pricing"

    def product_fields(self, product: Product, out: JSON, view: View) -> None:
        out["defaultCurrency"] = product.currency
        out["availableCurrencies"] = product.currencies
        out["pricingPer"] = str(product.pricing_per)

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        if product.pricing_per is PricingPer.BOOKING:
            out["pricingFrom"] = [
                pricing_json(p) for p in _lowest(option, option.booking_prices, product.currencies, view)
            ]

    def unit_fields(self, product: Product, option: Option, unit: Unit, out: JSON, view: View) -> None:
        if product.pricing_per is PricingPer.UNIT:
            out["pricingFrom"] = [
                pricing_json(p) for p in _lowest(option, unit.prices, product.currencies, view)
            ]

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        if item.currency is None:
            return
        day = item.slot.local_date
        if item.product.pricing_per is PricingPer.BOOKING:
            price = price_for(item.option.booking_prices, item.currency, day, item.rental)
            if price is not None:
                out["pricing"] = pricing_json(price)
            return
        out["unitPricing"] = [
            {"unitId": unit.id, **pricing_json(price)}
            for unit, price in _unit_prices(item.option, item.currency, day, item.rental)
        ]
        out["pricing"] = total_json(
            _requested_prices(item.option, item.units, item.currency, day, item.rental), item.currency
        )

    def calendar_fields(self, day: CalendarDay, out: JSON, view: View) -> None:
        if day.currency is None:
            return
        if day.product.pricing_per is PricingPer.BOOKING:
            out["unitPricingFrom"] = []
            price = price_for(day.option.booking_prices, day.currency, day.local_date, day.rental)
            if price is not None:
                out["pricingFrom"] = pricing_json(price)
            return
        unit_prices = _unit_prices(day.option, day.currency, day.local_date, day.rental)
        out["unitPricingFrom"] = [{"unitId": unit.id, **pricing_json(price)} for unit, price in unit_prices]
        if day.units:
            out["pricingFrom"] = total_json(
                _requested_prices(day.option, day.units, day.currency, day.local_date, day.rental),
                day.currency,
            )
        elif unit_prices:
            out["pricingFrom"] = pricing_json(min((p for _, p in unit_prices), key=lambda p: p.retail))

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        total = _booking_total(details)
        if total is not None:
            out["pricing"] = total

    def unit_item_fields(self, details: BookingDetails, item: UnitItem, out: JSON, view: View) -> None:
        if details.booking.currency is None or details.product.pricing_per is not PricingPer.UNIT:
            return
        line = line_of(details.booking.price_lines, LineKind.UNIT, item.uuid)
        if line is not None:
            out["pricing"] = pricing_json(line.price)

    def order_fields(self, details: OrderDetails, out: JSON, view: View) -> None:
        """The order's total: the sum of its live bookings' totals, in the order's currency."""
        currency = details.order.currency
        if currency is None:
            return
        totals = []
        for booking in details.bookings:
            if booking.booking.status in ENDED:
                continue
            total = _booking_total(booking)
            if total is not None:
                totals.append(total)
        taxes: dict[str, JSON] = {}
        for total in totals:
            for tax in total["includedTaxes"]:
                entry = taxes.setdefault(
                    tax["name"], {"name": tax["name"], "retail": 0, "original": 0, "net": 0}
                )
                entry["retail"] += tax["retail"]
                entry["original"] += tax["original"]
                entry["net"] = (
                    None if tax["net"] is None or entry["net"] is None else entry["net"] + tax["net"]
                )
        nets = [t["net"] for t in totals]
        out["pricing"] = {
            "original": sum(t["original"] for t in totals),
            "retail": sum(t["retail"] for t in totals),
            "net": None if any(n is None for n in nets) else sum(nets),
            "currency": currency,
            "currencyPrecision": totals[0]["currencyPrecision"] if totals else 2,
            "includedTaxes": list(taxes.values()),
        }
