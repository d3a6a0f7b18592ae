"""A sale's priced lines: what each part of a booking was sold at, kept with the booking.

A line is one unit item (per-unit pricing), the booking itself (per-booking pricing) or one
piece of an extra, with its retail, original, net, currency, precision and included taxes in
integer minor units, as they were when the part was added. Reads never price a booking from
today's catalogue: a change of the catalogue or of the reseller's contract changes the price of
the next sale, not of one already made. A change to the booking prices only its new parts, at
the rates of that moment; a change of what every part is (another departure, option or rental
duration) prices every line again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from berth.domain.catalog import Price


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
class PriceLine:
    """A part of a booking as it was sold."""

    kind: LineKind
    ref: str | None
    item: str
    price: Price

    @property
    def key(self) -> tuple[LineKind, str | None]:
        return self.kind, self.ref

    def to_document(self) -> dict[str, Any]:
        price = self.price
        return {
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
        return cls(LineKind(document["kind"]), document["ref"], document["item"], price)


PriceLines = tuple[PriceLine, ...]

# What a connection's contract makes of a catalogue price: the price the reseller buys at (its
# net, and its included taxes' net). The catalogue's own net is `as_sold`.
Rate = Callable[[Priceable], Price]


def as_sold(priceable: Priceable) -> Price:
    """The catalogue's price as a line keeps it: without its travel-date limits."""
    price = priceable.price
    if price.valid_from is None and price.valid_until is None:
        return price
    return price.model_copy(update={"valid_from": None, "valid_until": None})


def price_lines(
    wanted: Iterable[Priceable], kept: Sequence[PriceLine], rate: Rate, *, reprice: bool = False
) -> PriceLines:
    """The booking's lines for the parts it has now (`wanted`): a part it already had keeps
    its line from `kept` (unless `reprice`); a new part is priced at `rate`."""
    previous = {} if reprice else {line.key: line for line in kept}
    lines = []
    for part in wanted:
        line = previous.get((part.kind, part.ref))
        lines.append(line if line is not None else PriceLine(part.kind, part.ref, part.item, rate(part)))
    return tuple(lines)


def line_of(lines: PriceLines, kind: LineKind, ref: str | None) -> PriceLine | None:
    return next((line for line in lines if line.kind is kind and line.ref == ref), None)


def lines_to_document(lines: PriceLines) -> list[dict[str, Any]] | None:
    return [line.to_document() for line in lines] if lines else None


def lines_from_document(document: Sequence[dict[str, Any]] | None) -> PriceLines:
    return tuple(PriceLine.from_document(line) for line in document or ())
