"""Prices: the one that applies on a date, the lowest one, and a rental duration's multiple."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from berth.domain.catalog import Price


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
