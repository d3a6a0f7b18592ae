"""Prices: the one that applies on a date, the lowest one, and sums of several."""

from __future__ import annotations

from datetime import date

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
