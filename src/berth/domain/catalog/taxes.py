"""Included taxes given as a rate: `{name: VAT, rate: 20}` on a price of 2500 is the tax 417
(2500 x 20 / 120, half up), worked out for the price's retail, original and net when the
catalogue is loaded, in integer arithmetic."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic_core import PydanticCustomError

AMOUNT_KEYS = ("retail", "original", "net")


def included_tax(amount: int, rate: Decimal) -> int:
    """The tax a price of `amount` minor units includes at `rate` percent, rounded half up to
    the minor unit: amount x rate / (100 + rate)."""
    numerator, denominator = rate.as_integer_ratio()
    share, whole = amount * numerator, 100 * denominator + numerator
    return (2 * share + whole) // (2 * whole)


def rate_of(value: object) -> Decimal | None:
    """A rate as written (20, 5.5, "7.7"), exactly; None when it is not a number above 0 and
    at most 100."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    try:
        rate = Decimal(str(value))
    except InvalidOperation:
        return None
    return rate if rate.is_finite() and 0 < rate <= 100 else None


def _amount(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def with_tax_amounts(price: dict[str, Any]) -> dict[str, Any]:
    """The price as the file gives it, its taxes given by rate with their amounts worked out.
    A rate or price that is not valid is left for the model's checks to refuse; a tax that
    gives both a rate and amounts is refused here."""
    key = "includedTaxes" if "includedTaxes" in price else "included_taxes"
    taxes = price.get(key)
    if not isinstance(taxes, list | tuple) or not any(isinstance(t, dict) and "rate" in t for t in taxes):
        return price
    retail = _amount(price.get("retail"))
    original = _amount(price.get("original"))
    net = _amount(price.get("net"))
    bases = {"retail": retail, "original": retail if original is None else original, "net": net}
    worked: list[Any] = []
    for tax in taxes:
        rate = rate_of(tax.get("rate")) if isinstance(tax, dict) else None
        if not isinstance(tax, dict) or "rate" not in tax:
            worked.append(tax)
        elif given := [k for k in AMOUNT_KEYS if k in tax]:
            raise PydanticCustomError(
                "tax_rate_and_amounts",
                "included tax '{name}' gives a rate and {given}: give the rate or the amounts, not both",
                {"name": tax.get("name"), "given": ", ".join(given)},
            )
        elif rate is None or retail is None:
            # Only the rate (or the price) is wrong: no "retail is required" beside its problem.
            worked.append({**tax, "retail": 0, "original": 0})
        else:
            amounts = {k: None if base is None else included_tax(base, rate) for k, base in bases.items()}
            worked.append({**tax, **amounts})
    return {**price, key: worked}
