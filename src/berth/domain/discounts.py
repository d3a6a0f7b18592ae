"""A booking's offer as it was when applied (`OfferTerms`, kept with the booking) and the
discount of its priced lines.

Each line the offer applies to (a unit item of a unit it covers, or the booking of per-booking
pricing; never an extra) is discounted from its price without discount:
- a percent: the retail times the percent, rounded half up to the minor unit;
- an amount per unit: the amount, at most the line's retail;
- an amount per booking: at most the lines' retail together, shared over the lines in
  proportion to their retail (`scaled_shares`), no line's share above its retail.
The discounted retail's included taxes are scaled to it (`scaled_shares`, so they add up). The
net follows the offer's `netDiscount` (NONE: kept, FULL: less the whole discount, SPLIT: less
half of it rounded half up, PRORATED: scaled in proportion to the retail), never below 0 nor
above the discounted retail unless the line was accepted above retail; its taxes' nets are
scaled to it (`with_net`). `original` keeps the price before the discount. The line keeps what
was taken off (`LineDiscount`), so original - discount = retail holds for every line and sums.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from berth.domain.catalog import Price
from berth.domain.offers import DiscountPer, NetDiscount, Offer
from berth.domain.price_lines import LineDiscount, LineKind, PriceLine, PriceLines, scaled_shares, with_net


@dataclass(frozen=True)
class OfferTerms:
    """What a booking keeps of its offer: enough to price any later change the same way."""

    offer_id: str
    octo_id: str
    code: str | None
    titles: Mapping[str, str]
    net_discount: NetDiscount
    percent: Decimal | None
    amount: int | None  # in the booking's currency
    per: DiscountPer
    unit_ids: frozenset[str] | None  # None: every unit of the option
    min_units: int | None = None
    max_units: int | None = None

    @classmethod
    def of(cls, offer: Offer, product_id: str, option_id: str, currency: str | None) -> OfferTerms:
        amounts = offer.discount.amounts
        return cls(
            offer_id=offer.id,
            octo_id=offer.octo_id,
            code=offer.code,
            titles={language: text.title for language, text in offer.texts.items()},
            net_discount=offer.net_discount,
            percent=offer.discount.percent,
            amount=amounts.get(currency) if amounts is not None and currency is not None else None,
            per=offer.discount.per,
            unit_ids=offer.unit_ids(product_id, option_id),
            min_units=offer.min_units,
            max_units=offer.max_units,
        )

    def title(self, language: str | None) -> str:
        if language:
            for tag in (language, language.split("-")[0]):
                for written, title in self.titles.items():
                    if written == tag or written.split("-")[0] == tag:
                        return title
        return next(iter(self.titles.values()), "")

    def to_document(self) -> dict[str, Any]:
        return {
            "offerId": self.offer_id,
            "octoId": self.octo_id,
            "code": self.code,
            "titles": dict(self.titles),
            "netDiscount": self.net_discount.value,
            "percent": str(self.percent) if self.percent is not None else None,
            "amount": self.amount,
            "per": self.per.value,
            "unitIds": sorted(self.unit_ids) if self.unit_ids is not None else None,
            "minUnits": self.min_units,
            "maxUnits": self.max_units,
        }

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> OfferTerms:
        units = document.get("unitIds")
        percent = document.get("percent")
        return cls(
            offer_id=document["offerId"],
            octo_id=document["octoId"],
            code=document.get("code"),
            titles=dict(document.get("titles") or {}),
            net_discount=NetDiscount(document["netDiscount"]),
            percent=Decimal(percent) if percent is not None else None,
            amount=document.get("amount"),
            per=DiscountPer(document.get("per", DiscountPer.UNIT.value)),
            unit_ids=frozenset(units) if units is not None else None,
            min_units=document.get("minUnits"),
            max_units=document.get("maxUnits"),
        )

    def applies_to(self, line: PriceLine) -> bool:
        if line.kind is LineKind.BOOKING:
            return True
        return line.kind is LineKind.UNIT and (self.unit_ids is None or line.item in self.unit_ids)

    def units_reason(self, unit_ids: Sequence[str]) -> str | None:
        """Why the booking's units no longer fit the offer's limits (None: they do)."""
        count = sum(1 for u in unit_ids if self.unit_ids is None or u in self.unit_ids)
        if count == 0:
            return "it does not apply to any of the booking's units"
        if self.min_units is not None and count < self.min_units:
            return f"it needs at least {self.min_units} units it applies to; the booking would have {count}"
        if self.max_units is not None and count > self.max_units:
            return f"it allows at most {self.max_units} units it applies to; the booking would have {count}"
        return None


def _half_up(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_HALF_UP))


def without_discount(line: PriceLine) -> PriceLine:
    """The line as it was priced before any discount."""
    discount = line.discount
    if discount is None:
        return line
    price = line.price
    taxes = tuple(
        tax.model_copy(
            update={
                "retail": tax.retail + discount.tax_retail(tax.name),
                "net": None if tax.net is None else tax.net + discount.tax_net(tax.name),
            }
        )
        for tax in price.included_taxes
    )
    original = price.original if price.original != price.retail + discount.retail else None
    undiscounted = price.model_copy(
        update={
            "retail": price.retail + discount.retail,
            "net": None if price.net is None else price.net + discount.net,
            "original": original,
            "included_taxes": taxes,
        }
    )
    return replace(line, price=undiscounted, discount=None)


def _amounts_off(lines: Sequence[PriceLine], terms: OfferTerms) -> list[int]:
    """What comes off each of `lines` (all of which the offer applies to)."""
    retails = [line.price.retail for line in lines]
    if terms.percent is not None:
        return [_half_up(Decimal(r) * terms.percent / 100) for r in retails]
    amount = terms.amount or 0
    if terms.per is DiscountPer.UNIT:
        return [min(amount, r) for r in retails]
    whole = min(amount, sum(retails))
    shares = [min(s, r) for s, r in zip(scaled_shares(retails, whole, sum(retails)), retails, strict=True)]
    short = whole - sum(shares)
    for index, retail in enumerate(retails):  # a share capped at its line's retail goes to the others
        room = retail - shares[index]
        taken = min(room, short)
        shares[index] += taken
        short -= taken
    return shares


def _net(price: Price, off: int, terms: OfferTerms, accepted_above_retail: bool) -> int | None:
    net = price.net
    if net is None:
        return None
    retail = price.retail - off
    if terms.net_discount is NetDiscount.FULL:
        net -= off
    elif terms.net_discount is NetDiscount.SPLIT:
        net -= _half_up(Decimal(off) / 2)
    elif terms.net_discount is NetDiscount.PRORATED and price.retail:
        net = _half_up(Decimal(net) * retail / price.retail)
    net = max(net, 0)
    return net if accepted_above_retail else min(net, retail)


def _discounted(line: PriceLine, off: int, terms: OfferTerms) -> PriceLine:
    price = line.price
    if off == 0:
        return line
    retail = price.retail - off
    tax_retails = scaled_shares([t.retail for t in price.included_taxes], retail, price.retail)
    taxed = price.model_copy(
        update={
            "retail": retail,
            "original": price.original_or_retail,
            "included_taxes": tuple(
                t.model_copy(update={"retail": r})
                for t, r in zip(price.included_taxes, tax_retails, strict=True)
            ),
        }
    )
    net = _net(price, off, terms, line.above_retail)
    after = with_net(taxed, net) if net is not None else taxed
    discount = LineDiscount(
        retail=off,
        net=0 if price.net is None or after.net is None else price.net - after.net,
        taxes=tuple(
            (before.name, before.retail - now.retail, (before.net or 0) - (now.net or 0))
            for before, now in zip(price.included_taxes, after.included_taxes, strict=True)
        ),
    )
    return replace(line, price=after, discount=discount)


def discounted(lines: PriceLines, terms: OfferTerms | None) -> PriceLines:
    """`lines` with the offer's discount (none: as priced, without any discount)."""
    plain = tuple(without_discount(line) for line in lines)
    if terms is None:
        return plain
    covered = [index for index, line in enumerate(plain) if terms.applies_to(line)]
    offs = _amounts_off([plain[i] for i in covered], terms)
    result = list(plain)
    for index, off in zip(covered, offs, strict=True):
        result[index] = _discounted(plain[index], off, terms)
    return tuple(result)


def taken_off(lines: PriceLines, terms: OfferTerms) -> int:
    """What the offer's terms take off the retail of `lines`."""
    return sum(line.discount.retail for line in discounted(lines, terms) if line.discount is not None)


def best_offer(
    offers: Sequence[Offer], product_id: str, option_id: str, currency: str | None, lines: PriceLines
) -> Offer | None:
    """Of `offers`, the one that takes most off `lines` (the first of equals; None: none takes
    anything off)."""
    best, most = None, 0
    for offer in offers:
        off = taken_off(lines, OfferTerms.of(offer, product_id, option_id, currency))
        if off > most:
            best, most = offer, off
    return best
