"""Prices: the one that applies on a date, the lowest one, a rental duration's multiple, and
prices and their sums as OCTO `Pricing` objects."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any

from berth.domain.bookings import Booking
from berth.domain.catalog import Option, Price, PricingPer, Product, RentalDuration
from berth.domain.price_lines import LineKind, Priceable


def pricing_json(price: Price) -> dict[str, Any]:
    return {
        "original": price.original_or_retail,
        "retail": price.retail,
        "net": price.net,
        "currency": price.currency,
        "currencyPrecision": price.currency_precision,
        "includedTaxes": [
            {"name": tax.name, "retail": tax.retail, "original": tax.original, "net": tax.net}
            for tax in price.included_taxes
        ],
    }


def total_json(prices: Sequence[Price], currency: str, precision: int = 2) -> dict[str, Any]:
    """The sum of several prices, taxes added up by name; `net` is null if any part lacks one."""
    taxes: dict[str, dict[str, Any]] = {}
    for price in prices:
        for tax in price.included_taxes:
            entry = taxes.setdefault(tax.name, {"name": tax.name, "retail": 0, "original": 0, "net": 0})
            entry["retail"] += tax.retail
            entry["original"] += tax.original
            entry["net"] = None if tax.net is None or entry["net"] is None else entry["net"] + tax.net
    nets = [p.net for p in prices]
    return {
        "original": sum(p.original_or_retail for p in prices),
        "retail": sum(p.retail for p in prices),
        "net": None if any(n is None for n in nets) else sum(n for n in nets if n is not None),
        "currency": currency,
        "currencyPrecision": prices[0].currency_precision if prices else precision,
        "includedTaxes": list(taxes.values()),
    }


def price_on(prices: tuple[Price, ...], currency: str, day: date) -> Price | None:
    """The price in `currency` for travel on `day`: a dated price wins over an undated one."""
    dated = [p for p in prices if p.currency == currency and (p.valid_from or p.valid_until)]
    for price in dated:
        if price.applies_on(day):
            return price
    return next((p for p in prices if p.currency == currency and not (p.valid_from or p.valid_until)), None)


def lowest_prices(prices: tuple[Price, ...], currencies: list[str]) -> list[Price]:
    """The lowest retail price in each currency, in the order of `currencies`."""
    lowest: list[Price] = []
    for currency in currencies:
        candidates = [p for p in prices if p.currency == currency]
        if candidates:
            lowest.append(min(candidates, key=lambda p: p.retail))
    return lowest


def _scaled(amount: int, factor: Decimal) -> int:
    return int((amount * factor).to_integral_value(rounding=ROUND_HALF_UP))


def scale_price(price: Price, multiplier: int | float) -> Price:
    """`price` times a rental duration's `pricingMultiplier`: every amount (retail, original,
    net and each included tax) multiplied exactly and rounded half up to whole minor units."""
    if multiplier == 1:
        return price
    return _scale_price(price, multiplier)


@lru_cache(maxsize=4096)  # prices are frozen catalogue values: calendars ask for the same ones daily
def _scale_price(price: Price, multiplier: int | float) -> Price:
    factor = Decimal(str(multiplier))
    taxes = tuple(
        tax.model_copy(
            update={
                "retail": _scaled(tax.retail, factor),
                "original": _scaled(tax.original, factor),
                "net": None if tax.net is None else _scaled(tax.net, factor),
            }
        )
        for tax in price.included_taxes
    )
    return price.model_copy(
        update={
            "retail": _scaled(price.retail, factor),
            "original": None if price.original is None else _scaled(price.original, factor),
            "net": None if price.net is None else _scaled(price.net, factor),
            "included_taxes": taxes,
        }
    )


def price_for(
    prices: tuple[Price, ...], currency: str, day: date, rental: RentalDuration | None
) -> Price | None:
    """The price on `day` in `currency`, for the rental duration if there is one."""
    price = price_on(prices, currency, day)
    if price is None or rental is None:
        return price
    return scale_price(price, rental.pricing_multiplier)


def booking_day(booking: Booking) -> date:
    """The day a booking's prices are looked up for: its travel date (open-dated: the day it
    was made)."""
    return booking.local_date or booking.created_at.date()


def booking_priceables(
    product: Product, option: Option, booking: Booking, rental: RentalDuration | None
) -> list[Priceable]:
    """The booking's own parts at today's catalogue prices: each unit item, or the booking as
    a whole for per-booking pricing. A part with no price in the booking's currency has none."""
    currency = booking.currency
    if currency is None:
        return []
    day = booking_day(booking)
    if product.pricing_per is PricingPer.BOOKING:
        price = price_for(option.booking_prices, currency, day, rental)
        return [Priceable(LineKind.BOOKING, None, option.id, price)] if price is not None else []
    parts = []
    for item in booking.unit_items:
        unit = option.unit(item.unit_id)
        price = price_for(unit.prices, currency, day, rental) if unit is not None else None
        if price is not None:
            parts.append(Priceable(LineKind.UNIT, item.uuid, item.unit_id, price))
    return parts


def booking_parts(product: Product, option: Option, booking: Booking) -> list[Priceable]:
    """`booking_priceables` at the booking's own rental duration (octo/rentals), if it has one."""
    rental = option.rental_duration(booking.rental_duration_id) if booking.rental_duration_id else None
    return booking_priceables(product, option, booking, rental)
