"""The prices the shop shows before anything is booked, from the catalogue's retail prices:
a product's "from" price, a day's lowest price, a party's price on a departure, and the weeks
of a month calendar. What the guest pays is the booking's own priced lines, once held."""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from berth.domain.catalog import Option, PricingPer, Product, RentalDuration
from berth.domain.catalog.model import Price
from berth.domain.pricing import price_for


@dataclass(frozen=True)
class Amount:
    minor: int
    currency: str
    precision: int


def _lowest(prices: list[Price | None]) -> Amount | None:
    found = [p for p in prices if p is not None]
    if not found:
        return None
    cheapest = min(found, key=lambda p: p.retail)
    return Amount(cheapest.retail, cheapest.currency, cheapest.currency_precision)


def lowest_on(
    product: Product, option: Option, day: date, currency: str, rental: RentalDuration | None
) -> Amount | None:
    """The lowest price a guest pays for one place on `day` (a unit's; for products priced per
    booking, the booking's): what the calendar shows on the day. Free units (an infant on a lap)
    are left out when others cost something."""
    if product.pricing_per is PricingPer.BOOKING:
        return _lowest([price_for(option.booking_prices, currency, day, rental)])
    prices = [price_for(unit.prices, currency, day, rental) for unit in option.units]
    paid = [p for p in prices if p is not None and p.retail > 0]
    return _lowest(list(paid) or prices)


def from_price(product: Product, day: date, currency: str) -> Amount | None:
    """A product's "from" price on `day`: the lowest of its options' (at each one's default
    rental duration)."""
    found = [
        lowest_on(product, option, day, currency, option.default_rental_duration)
        for option in product.options
    ]
    return min((a for a in found if a is not None), key=lambda a: a.minor, default=None)


def party_price(
    product: Product,
    option: Option,
    units: Mapping[str, int],
    day: date,
    currency: str,
    rental: RentalDuration | None,
) -> Amount | None:
    """What the party pays on `day` before extras (None: a unit it takes has no price in
    `currency`)."""
    if product.pricing_per is PricingPer.BOOKING:
        return _lowest([price_for(option.booking_prices, currency, day, rental)])
    total, precision = 0, 2
    for unit in option.units:
        count = units.get(unit.id, 0)
        if count <= 0:
            continue
        price = price_for(unit.prices, currency, day, rental)
        if price is None:
            return None
        total += price.retail * count
        precision = price.currency_precision
    return Amount(total, currency, precision)


def month_weeks(year: int, month: int) -> list[list[date | None]]:
    """The month's weeks, Monday first; days of the months before and after are None."""
    weeks = calendar.Calendar(firstweekday=0).monthdatescalendar(year, month)
    return [[day if day.month == month else None for day in week] for week in weeks]
