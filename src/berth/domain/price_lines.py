"""A sale's priced lines: what each part of a booking was sold at, kept with the booking.

A line is one unit item (per-unit pricing), the booking itself (per-booking pricing) or one
piece of an extra, with its retail, original, net, currency, precision and included taxes in
integer minor units, as they were when the part was added. Reads never price a booking from
today's catalogue: a change of the catalogue or of the reseller's contract changes the price of
the next sale, not of one already made. A change to the booking prices only its new parts, at
the rates of that moment; a change of what every part is (another departure, option or rental
duration) prices every line again.

A line's net is above its retail only when the reseller's contract accepts it (a price list
entry's `allowAboveRetail`): such a line is stored marked `acceptedAboveRetail`. A line above
its retail without the mark was sold before Berth refused such nets (issue 47): it reads at its
retail, no commission, as the contract's rate now sells it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any

from berth.domain.catalog import Price, Tax


def _half_up(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_HALF_UP))


def scaled_shares(amounts: Sequence[int], to: int, of: int) -> list[int]:
    """Each of `amounts` (the taxes included in a price of `of`) in the proportion to / of,
    rounded half up, the rounding remainder on the largest, so that they add up to their total
    scaled the same way; all 0 when `of` is 0."""
    if not amounts:
        return []
    if of == 0:
        return [0 for _ in amounts]
    ratio = Decimal(to) / Decimal(of)
    shares = [_half_up(Decimal(amount) * ratio) for amount in amounts]
    target = _half_up(Decimal(sum(amounts)) * ratio)
    largest = max(range(len(amounts)), key=lambda i: amounts[i])
    shares[largest] += target - sum(shares)
    return shares


def _scaled_taxes(taxes: tuple[Tax, ...], net: int, retail: int) -> tuple[Tax, ...]:
    """Each tax's net in the proportion net / retail (`scaled_shares`)."""
    nets = scaled_shares([t.retail for t in taxes], net, retail)
    return tuple(t.model_copy(update={"net": n}) for t, n in zip(taxes, nets, strict=True))


def with_net(price: Price, net: int) -> Price:
    """`price` bought at `net`, its taxes' nets scaled to it."""
    return price.model_copy(
        update={"net": net, "included_taxes": _scaled_taxes(price.included_taxes, net, price.retail)}
    )


class LineKind(StrEnum):
    UNIT = "UNIT"  # ref: the unit item's uuid; item: its unit id
    BOOKING = "BOOKING"  # per-booking pricing; ref: None; item: the option id
    EXTRA = "EXTRA"  # ref: the piece's id; item: the extra id


@dataclass(frozen=True)
class Priceable:
    """A part of a booking to be priced, with its catalogue price (a rental's already scaled
    by its duration's multiplier)."""

    kind: LineKind
    ref: str | None
    item: str
    price: Price


@dataclass(frozen=True)
class LineDiscount:
    """What an offer took off a line (domain.discounts): of its retail, of its net, and of each
    included tax's retail and net, by the tax's name."""

    retail: int
    net: int
    taxes: tuple[tuple[str, int, int], ...] = ()

    def tax_retail(self, name: str) -> int:
        return sum(retail for tax, retail, _ in self.taxes if tax == name)

    def tax_net(self, name: str) -> int:
        return sum(net for tax, _, net in self.taxes if tax == name)

    def to_document(self) -> dict[str, Any]:
        return {
            "retail": self.retail,
            "net": self.net,
            "taxes": [{"name": name, "retail": retail, "net": net} for name, retail, net in self.taxes],
        }

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> LineDiscount:
        taxes = tuple((t["name"], t["retail"], t["net"]) for t in document.get("taxes", ()))
        return cls(document["retail"], document["net"], taxes)


@dataclass(frozen=True)
class PriceLine:
    """A part of a booking as it was sold (`discount`: what its offer took off, if any)."""

    kind: LineKind
    ref: str | None
    item: str
    price: Price
    discount: LineDiscount | None = None

    @property
    def key(self) -> tuple[LineKind, str | None]:
        return self.kind, self.ref

    @property
    def above_retail(self) -> bool:
        return self.price.net is not None and self.price.net > self.price.retail

    def to_document(self) -> dict[str, Any]:
        price = self.price
        document: dict[str, Any] = {
            "kind": self.kind.value,
            "ref": self.ref,
            "item": self.item,
            "currency": price.currency,
            "precision": price.currency_precision,
            "retail": price.retail,
            "original": price.original,
            "net": price.net,
            "taxes": [
                {"name": t.name, "retail": t.retail, "original": t.original, "net": t.net}
                for t in price.included_taxes
            ],
        }
        if self.above_retail:  # only a contract that accepts it prices a line so (module docstring)
            document["acceptedAboveRetail"] = True
        if self.discount is not None:
            document["discount"] = self.discount.to_document()
        return document

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> PriceLine:
        price = Price.model_validate(
            {
                "currency": document["currency"],
                "currencyPrecision": document["precision"],
                "retail": document["retail"],
                "original": document["original"],
                "net": document["net"],
                "includedTaxes": document["taxes"],
            }
        )
        found = document.get("discount")
        discount = LineDiscount.from_document(found) if found is not None else None
        line = cls(LineKind(document["kind"]), document["ref"], document["item"], price, discount)
        if line.above_retail and not document.get("acceptedAboveRetail"):
            return cls(line.kind, line.ref, line.item, with_net(price, price.retail), discount)
        return line


PriceLines = tuple[PriceLine, ...]


def as_sold(price: Price) -> Price:
    """A catalogue price as a line keeps it: without its travel-date limits."""
    if price.valid_from is None and price.valid_until is None:
        return price
    return price.model_copy(update={"valid_from": None, "valid_until": None})


def price_lines(
    wanted: Iterable[Priceable], kept: Sequence[PriceLine], *, reprice: bool = False
) -> PriceLines:
    """The booking's lines for the parts it has now (`wanted`, priced from the catalogue as the
    booking's connection buys it: its contract's net): a part it already had keeps its line from
    `kept` (unless `reprice`); a new part, or one that is another item now (a unit item given
    another unit), is sold at its price of now. A kept line keeps its discount; the booking's
    offer prices the discounts again after (domain.discounts)."""
    previous = {} if reprice else {line.key: line for line in kept}
    lines = []
    for part in wanted:
        line = previous.get((part.kind, part.ref))
        if line is None or line.item != part.item:
            line = PriceLine(part.kind, part.ref, part.item, as_sold(part.price))
        lines.append(line)
    return tuple(lines)


def line_of(lines: PriceLines, kind: LineKind, ref: str | None) -> PriceLine | None:
    return next((line for line in lines if line.kind is kind and line.ref == ref), None)


def lines_to_document(lines: PriceLines) -> list[dict[str, Any]] | None:
    return [line.to_document() for line in lines] if lines else None


def lines_from_document(document: Sequence[dict[str, Any]] | None) -> PriceLines:
    return tuple(PriceLine.from_document(line) for line in document or ())
