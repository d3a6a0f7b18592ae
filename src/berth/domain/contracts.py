"""A connection's contract: what it may sell, the net rate it buys at, when, and on which terms.

A contract is a document (YAML or JSON) kept per connection and versioned like the catalogue.
What a reseller sees is the catalogue as its contract makes it (`contract_catalog`): only the
products (and options) it may sell, each price carrying the reseller's own net. Retail is the
supplier's, the same for everyone. Every part of Berth that serves a reseller reads that
catalogue, so a product outside the contract does not exist for it, and a sale is priced at the
contract's net when it is made (domain.price_lines keeps it). A booking made earlier stays on its
own product and option when the contract no longer sells them (`booked_product`, found through
`Catalog.booked`).

The rate, per price of the catalogue:
- a net price list entry for the product, option, unit (none for per-booking prices) and
  currency whose travel dates (`from`/`until`, a rate season) apply: its net, but never above
  the price's retail unless the entry accepts it (`allowAboveRetail`): a net above retail is
  sold at the retail, no commission (docs/contracts.md, "A net above retail");
- else a commission: net = retail - commission, commission = retail x percent / 100 rounded
  half up to the minor unit;
- else the catalogue's own net.
Included taxes' nets are scaled in the proportion net / retail, each rounded half up, and the
rounding remainder is put on the largest tax, so the taxes' nets add up exactly to the total
tax scaled the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from functools import cached_property, lru_cache
from hashlib import sha256
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from berth.domain.allotments import Allotment, StopSell
from berth.domain.catalog import Catalog, Option, Price, Product, Unit, amount_problem
from berth.domain.catalog.model import Amount, CurrencyCode, Extra, Identifier
from berth.domain.errors import BadRequest, OctoError
from berth.domain.price_lines import with_net
from berth.domain.pricing import scale_price

ALL: Literal["ALL"] = "ALL"


class PaymentTerms(StrEnum):
    MONTHLY_INVOICE = "MONTHLY_INVOICE"
    PREPAID = "PREPAID"


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class Grant(_Model):
    """A product the connection may sell: all of its options, or those listed."""

    product: Identifier
    options: tuple[Identifier, ...] | None = None


class NetPrice(_Model):
    """The net the connection buys one price at: for a product, option (all options when not
    given), unit (per-booking prices: none) and currency, on travel dates from/until. A net
    above the retail is sold at the retail unless `allowAboveRetail` says the supplier accepts
    selling at a loss to this reseller."""

    product: Identifier
    option: Identifier | None = None
    unit: Identifier | None = None
    currency: CurrencyCode
    net: Amount
    valid_from: date | None = Field(default=None, alias="from")
    valid_until: date | None = Field(default=None, alias="until")
    allow_above_retail: bool = False

    def net_for(self, price: Price) -> int:
        """The net `price` is sold at under this entry."""
        return self.net if self.allow_above_retail else min(self.net, price.retail)

    def applies_to(self, price: Price) -> bool:
        """Whether this entry sets the net of `price` (of a unit or booking it matches) on some
        travel date: in its currency, and, for a season, on dates the price has too."""
        if price.currency != self.currency:
            return False
        if self.valid_from is None and self.valid_until is None:
            return True
        return _overlap(price.valid_from, price.valid_until, self.valid_from, self.valid_until) is not None

    @model_validator(mode="after")
    def _season(self) -> NetPrice:
        if self.valid_from and self.valid_until and self.valid_until < self.valid_from:
            raise ValueError("'until' is before 'from'")
        return self

    def matches(self, product: str, option: str, unit: str | None, currency: str) -> bool:
        return (
            self.product == product
            and self.option in (None, option)
            and self.unit == unit
            and self.currency == currency
        )


Percent = Annotated[Decimal, Field(ge=0, le=100, max_digits=5, decimal_places=2)]


class Rate(_Model):
    """The connection's net: its price list first, then its commission, then the catalogue's."""

    commission: Percent | None = None
    net_prices: tuple[NetPrice, ...] = ()

    @property
    def kind(self) -> str:
        if self.net_prices:
            return "NET_PRICE_LIST"
        return "COMMISSION" if self.commission is not None else "CATALOG_NET"


class Contract(_Model):
    """What a connection may sell (every product, or the ones listed), its rate, when the
    contract is in force (travel-independent: the day of the sale), its payment terms, the
    places held for it (allotments) and what it may not sell for a while (stop-sells)."""

    products: Literal["ALL"] | tuple[Grant, ...] = ALL
    rate: Rate = Rate()
    allotments: Annotated[tuple[Allotment, ...], Field(max_length=500)] = ()
    stop_sells: Annotated[tuple[StopSell, ...], Field(max_length=500)] = ()
    valid_from: date | None = None
    valid_until: date | None = None
    payment_terms: PaymentTerms = PaymentTerms.MONTHLY_INVOICE
    # The reseller's postal address, as its statements print it (lines as written).
    reseller_address: Annotated[str, Field(max_length=1000)] = ""
    # The supplier's own sales (its box office, its website): guests paid the supplier the
    # retail price and cancel with it, and their emails say so. False: a reseller's, whose
    # price and terms to its guests the supplier does not know.
    box_office: bool = False
    # A paying channel (the web shop): its bookings are confirmed only for a captured card
    # payment of their price (docs/payments.md), never by a confirm call alone.
    takes_payment: bool = False
    # May sell gift vouchers (octo/gifts), at the face value less the rate's commission.
    sells_gifts: bool = False
    notes: Annotated[str, Field(max_length=5000)] = ""

    @field_validator("products", mode="before")
    @classmethod
    def _all(cls, value: Any) -> Any:
        return ALL if isinstance(value, str) and value.upper() == ALL else value

    @field_validator("valid_until")
    @classmethod
    def _after_valid_from(cls, value: date | None, info: ValidationInfo) -> date | None:
        valid_from = info.data.get("valid_from")
        if value is not None and valid_from is not None and value < valid_from:
            raise PydanticCustomError(
                "date_order",
                "{until} is before validFrom {since}: a contract ends on or after the day it starts",
                {"until": value.isoformat(), "since": valid_from.isoformat()},
            )
        return value

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Contract:
        copied = super().model_copy(update=update, deep=deep)
        copied.__dict__.pop("digest", None)  # a copy with other fields has another digest
        return copied

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)

    @cached_property
    def digest(self) -> str:
        """The same for equal contracts: what answers kept per contract are kept under. Worked
        out once, as every reseller request asks for it, and kept in the instance's dict: a
        pydantic private attribute is read through `__getattr__`, about 6 µs a read."""
        return sha256(orjson.dumps(self.to_document(), option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]

    def in_force(self, today: date) -> bool:
        return self.not_in_force(today) is None

    def not_in_force(self, today: date) -> str | None:
        """Why the contract sells nothing on `today` (None: it is in force)."""
        if self.valid_from is not None and today < self.valid_from:
            return f"this connection's contract starts on {self.valid_from.isoformat()}"
        if self.valid_until is not None and today > self.valid_until:
            return f"this connection's contract ended on {self.valid_until.isoformat()}"
        return None

    def grant(self, product_id: str) -> Grant | None:
        if isinstance(self.products, str):
            return Grant(product=product_id)
        return next((g for g in self.products if g.product == product_id), None)


DEFAULT_CONTRACT = Contract()


def _half_up(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_HALF_UP))


def commission_price(price: Price, percent: Decimal) -> Price:
    """`price` less a commission of `percent` of its retail, rounded half up."""
    return with_net(price, price.retail - _half_up(Decimal(price.retail) * percent / 100))


def gift_net(amount: int, contract: Contract) -> int:
    """What a connection owes for a gift voucher of `amount` it sold: the amount less the
    contract's commission (rounded half up, as a price's). A net price list names products'
    prices, and a gift is none: under one, and without a commission, the net is the amount."""
    percent = contract.rate.commission
    return amount if percent is None else amount - _half_up(Decimal(amount) * percent / 100)


def _overlap(
    a_from: date | None, a_until: date | None, b_from: date | None, b_until: date | None
) -> tuple[date | None, date | None] | None:
    start = max((d for d in (a_from, b_from) if d is not None), default=None)
    end = min((d for d in (a_until, b_until) if d is not None), default=None)
    if start is not None and end is not None and end < start:
        return None
    return start, end


def rated_prices(
    prices: Iterable[Price], rate: Rate, product: str, option: str, unit: str | None
) -> tuple[Price, ...]:
    """The catalogue's `prices` of one unit (or booking, `unit` None) as `rate` sells them. A
    price list entry with travel dates becomes a dated price of its own (dated prices win over
    undated ones in `domain.pricing.price_on`), ahead of the fallback for the other dates."""
    rated: list[Price] = []
    fallbacks: list[Price] = []
    for price in prices:
        fallback = price if rate.commission is None else commission_price(price, rate.commission)
        for entry in rate.net_prices:
            if not entry.matches(product, option, unit, price.currency):
                continue
            seasonal = entry.valid_from is not None or entry.valid_until is not None
            if not seasonal:
                fallback = with_net(price, entry.net_for(price))
                continue
            days = _overlap(price.valid_from, price.valid_until, entry.valid_from, entry.valid_until)
            if days is not None:
                dated = with_net(price, entry.net_for(price))
                rated.append(dated.model_copy(update={"valid_from": days[0], "valid_until": days[1]}))
        fallbacks.append(fallback)
    return (*rated, *fallbacks)


def _option(product: Product, option: Option, rate: Rate) -> Option:
    units = tuple(_unit(product, option, u, rate) for u in option.units)
    extras = tuple(_extra(e, rate) for e in option.extras)
    booking_prices = rated_prices(option.booking_prices, rate, product.id, option.id, None)
    return option.model_copy(update={"units": units, "extras": extras, "booking_prices": booking_prices})


def _unit(product: Product, option: Option, unit: Unit, rate: Rate) -> Unit:
    return unit.model_copy(update={"prices": rated_prices(unit.prices, rate, product.id, option.id, unit.id)})


def _extra(extra: Extra, rate: Rate) -> Extra:
    if rate.commission is None:
        return extra
    return extra.model_copy(
        update={"prices": tuple(commission_price(p, rate.commission) for p in extra.prices)}
    )


def _rated(product: Product, options: tuple[Option, ...], rate: Rate) -> Product:
    """`product` with only `options`, at `rate`."""
    if rate.commission is None and not rate.net_prices and len(options) == len(product.options):
        return product
    return product.model_copy(update={"options": tuple(_option(product, o, rate) for o in options)})


def contract_product(product: Product, contract: Contract) -> Product | None:
    """`product` as `contract` sells it: its options it may sell, at its rate (None: none)."""
    grant = contract.grant(product.id)
    if grant is None:
        return None
    options = tuple(o for o in product.options if grant.options is None or o.id in grant.options)
    if not options:
        return None
    return _rated(product, options, contract.rate)


def booked_product(product: Product, contract: Contract, option_id: str) -> Product | None:
    """`product` as a booking on its option `option_id` made under `contract` sees it, whether
    or not the contract still sells them (or is in force): the options the contract sells and
    the booking's own, at the contract's rate. None: the product has no such option."""
    if product.option(option_id) is None:
        return None
    grant = contract.grant(product.id)
    options = tuple(
        o
        for o in product.options
        if o.id == option_id or (grant is not None and (grant.options is None or o.id in grant.options))
    )
    return _rated(product, options, contract.rate)


def is_default(contract: Contract) -> bool:
    """Every product at the catalogue's net, always: the catalogue as it is."""
    return contract.digest == DEFAULT_CONTRACT.digest


def contract_catalog(catalog: Catalog, contract: Contract, today: date) -> Catalog:
    """The catalogue as a connection under `contract` sees it on `today`: nothing when the
    contract is not in force; else the products and options it may sell, at its net. Either
    way it finds the product of each of the connection's bookings (`Catalog.booked`)."""
    if is_default(contract):
        return catalog
    unsold = contract.not_in_force(today)
    if unsold is not None:
        sold = catalog.unsold_because(unsold)
    else:
        products = tuple(
            p for p in (contract_product(p, contract) for p in catalog.products) if p is not None
        )
        sold = catalog.model_copy(update={"products": products})

    @lru_cache(maxsize=256)
    def booked(product_id: str, option_id: str) -> Product | None:
        product = catalog.product(product_id)
        return None if product is None else booked_product(product, contract, option_id)

    return sold.with_bookings_on(booked)


class ContractConflict(OctoError):
    """A save based on a contract version that is no longer the connection's current one."""

    code = "CONFLICT"

    def __init__(self, base_version: int, current_version: int) -> None:
        super().__init__(
            f"The contract changed since version {base_version}, which this save was based on: it is at "
            f"version {current_version}. Nothing was saved; start again from version {current_version}",
            baseVersion=base_version,
            currentVersion=current_version,
        )


def _is_branch(part: int | str, literal: bool | None = None) -> bool:
    """A union's branch in a pydantic error location (`literal['ALL']`, `tuple[Grant, ...]`);
    `literal`: only a literal's branch (True) or only another (False)."""
    if not isinstance(part, str) or "[" not in part:
        return False
    return literal is None or part.startswith("literal") == literal


def _path(loc: Iterable[int | str]) -> str:
    parts = (f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc if not _is_branch(part))
    return "".join(parts).lstrip(".")


def parse_contract(data: Any) -> Contract:
    """The contract a document describes; BAD_REQUEST naming every field in error."""
    if not isinstance(data, dict):
        raise BadRequest(
            "A contract is a mapping (products, rate, validFrom, validUntil, paymentTerms, resellerAddress, notes, "
            "allotments, stopSells, sellsGifts)"
        )
    try:
        return Contract.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # `products: ALL` or a list: a list in error also fails the ALL branch; say the list's.
        # A check of the whole contract has no location (`loc` is empty): it is the contract's.
        listed = {e["loc"][:1] for e in errors if any(_is_branch(p, literal=False) for p in e["loc"])}
        problems = [
            f"{_path(e['loc']) or 'contract'}: {e['msg']}"
            for e in errors
            if not (e["loc"][:1] in listed and any(_is_branch(p, literal=True) for p in e["loc"]))
        ]
        raise BadRequest(
            f"The contract has {len(problems)} problem(s); nothing was saved: " + "; ".join(problems),
            problems=problems,
        ) from None


def _money(amount: int, currency: str, precision: int) -> str:
    return f"{currency} {Decimal(amount).scaleb(-precision):.{precision}f}"


@dataclass(frozen=True)
class NetAboveRetail:
    """A net price list entry (`index` in `rate.netPrices`) whose net stands above the retail
    of a price it applies to on `option` (the lowest such retail), a loss the entry does not
    accept (`allowAboveRetail`)."""

    index: int
    entry: NetPrice
    option: str
    retail: int
    precision: int

    @property
    def key(self) -> tuple[NetPrice, str]:
        """The same entry on the same option, whatever its place in the list."""
        return self.entry, self.option

    @property
    def where(self) -> str:
        unit = self.entry.unit or "per booking"
        return f"{self.entry.product} / {self.option} / {unit}"

    def __str__(self) -> str:
        net = _money(self.entry.net, self.entry.currency, self.precision)
        retail = _money(self.retail, self.entry.currency, self.precision)
        return f"rate.netPrices[{self.index}].net: {net} is above the retail {retail} of {self.where}"


def _entry_prices(product: Product, entry: NetPrice) -> Iterable[tuple[Option, Price]]:
    """The catalogue prices `entry` sets the net of."""
    for option in product.options:
        if entry.option not in (None, option.id):
            continue
        unit = option.unit(entry.unit) if entry.unit is not None else None
        prices = option.booking_prices if entry.unit is None else unit.prices if unit is not None else ()
        yield from ((option, price) for price in prices if entry.applies_to(price))


def nets_above_retail(contract: Contract, catalog: Catalog) -> list[NetAboveRetail]:
    """Every price list entry of `contract` whose net stands above a retail it applies to in
    `catalog`, unless the entry accepts it; one per entry and option."""
    found: list[NetAboveRetail] = []
    for index, entry in enumerate(contract.rate.net_prices):
        product = catalog.product(entry.product)
        if entry.allow_above_retail or product is None:
            continue
        lowest: dict[str, Price] = {}
        for option, price in _entry_prices(product, entry):
            if entry.net > price.retail and (
                option.id not in lowest or price.retail < lowest[option.id].retail
            ):
                lowest[option.id] = price
        found.extend(
            NetAboveRetail(index, entry, option_id, price.retail, price.currency_precision)
            for option_id, price in lowest.items()
        )
    return found


def _net_amount_problems(contract: Contract, catalog: Catalog) -> list[str]:
    """Nets above the maximum amount, as listed or times a rental duration's multiplier."""
    problems = []
    for index, entry in enumerate(contract.rate.net_prices):
        too_large = amount_problem(entry.net)
        product = catalog.product(entry.product)
        if too_large is None and product is not None:
            scaled = (
                scale_price(with_net(price, entry.net_for(price)), duration.pricing_multiplier).net
                for option, price in _entry_prices(product, entry)
                for duration in option.rental_durations
            )
            too_large = next((amount_problem(n) for n in scaled if amount_problem(n) is not None), None)
            if too_large is not None:
                too_large = f"times a rental duration's pricingMultiplier, {too_large}"
        if too_large is not None:
            problems.append(f"rate.netPrices[{index}].net: {too_large}")
    return problems


def catalog_problems(contract: Contract, catalog: Catalog) -> list[str]:
    """What the contract names that the catalogue does not have, packages it would sell
    without what they include, nets above the maximum amount, and nets above the retail they
    apply to that the entry does not accept (`allowAboveRetail`)."""
    problems = []
    grants = () if isinstance(contract.products, str) else contract.products
    for index, grant in enumerate(grants):
        product = catalog.product(grant.product)
        if product is None:
            problems.append(f"products[{index}].product: no product {grant.product!r} in the catalogue")
            continue
        for option_id in grant.options or ():
            if product.option(option_id) is None:
                problems.append(f"products[{index}].options: {grant.product!r} has no option {option_id!r}")
    # A package books its includes under the same contract: it may only be sold with them.
    for product in catalog.products:
        granted = contract.grant(product.id)
        if granted is None or isinstance(contract.products, str):
            continue
        for option in product.options:
            if granted.options is not None and option.id not in granted.options:
                continue
            for include in option.includes:
                inner = contract.grant(include.product_id)
                if inner is None or (inner.options is not None and include.option_id not in inner.options):
                    problems.append(
                        f"products: {product.id!r} includes {include.product_id!r} / {include.option_id!r}, "
                        "which the contract does not sell; sell both or neither"
                    )
    for index, entry in enumerate(contract.rate.net_prices):
        where = f"rate.netPrices[{index}]"
        product = catalog.product(entry.product)
        if product is None:
            problems.append(f"{where}.product: no product {entry.product!r} in the catalogue")
            continue
        options = (
            product.options if entry.option is None else [o for o in product.options if o.id == entry.option]
        )
        if not options:
            problems.append(f"{where}.option: {entry.product!r} has no option {entry.option!r}")
        elif entry.unit is not None and not any(o.unit(entry.unit) for o in options):
            problems.append(f"{where}.unit: {entry.product!r} has no unit {entry.unit!r}")
        if entry.currency not in product.currencies:
            problems.append(f"{where}.currency: {entry.product!r} is not sold in {entry.currency}")
    problems.extend(_net_amount_problems(contract, catalog))
    problems.extend(
        f"{found}: lower the net, or set allowAboveRetail: true on the entry to sell at a loss to this reseller"
        for found in nets_above_retail(contract, catalog)
    )
    problems.extend(_allotment_problems(contract, catalog))
    return problems


def _allotment_problems(contract: Contract, catalog: Catalog) -> list[str]:
    problems = []
    named: list[tuple[str, str | None, str | None]] = [
        (f"allotments[{i}]", a.product, a.option) for i, a in enumerate(contract.allotments)
    ]
    named += [(f"stopSells[{i}]", s.product, s.option) for i, s in enumerate(contract.stop_sells)]
    for where, product_id, option_id in named:
        if product_id is None:
            continue
        product = catalog.product(product_id)
        if product is None:
            problems.append(f"{where}.product: no product {product_id!r} in the catalogue")
        elif option_id is not None and product.option(option_id) is None:
            problems.append(f"{where}.option: {product_id!r} has no option {option_id!r}")
        elif where.startswith("allotments") and contract.grant(product_id) is None:
            problems.append(f"{where}.product: the contract does not sell {product_id!r}")
    for index, allotment in enumerate(contract.allotments):
        product = catalog.product(allotment.product)
        options = [] if product is None else [o for o in product.options if allotment.option in (None, o.id)]
        if any(o.is_rental for o in options):
            problems.append(
                f"allotments[{index}]: {allotment.product!r} is rented by duration, not sold by "
                "departure; allotments hold places on departures"
            )
    return problems
