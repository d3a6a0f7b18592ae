"""Offers (octo/offers): promotions staff define, with a code a guest or reseller types
("HARBOUR10") or none (an automatic offer, such as an early-bird price, that applies by itself).

The offers are one document (YAML or JSON), versioned and audited like a contract. Each offer
says what it takes off (a percentage, or a fixed amount per unit or per booking in each
currency), what it applies to (products, options, units), when it can be sold and for which
travel dates and weekdays, its limits (units, minimum total, uses in all and per guest email),
which channels may use it (the shop, listed connections, or all) and how a reseller's net
follows the discount (`netDiscount`, docs/offers.md).

A booking keeps the terms of its offer (`OfferTerms`) when the offer is applied: a later change
or deletion of the offer changes no booking (domain.discounts prices its lines from the terms).
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from berth.domain.catalog import Catalog
from berth.domain.catalog.model import Amount, CurrencyCode, Identifier, LanguageTag, Weekday
from berth.domain.errors import BadRequest, OctoError

ALL: Literal["ALL"] = "ALL"
SHOP: Literal["SHOP"] = "SHOP"  # the channel of the supplier's own web shop
# The OCTO ids of offers are UUIDs; an offer's own id is the name staff give it, so its OCTO id
# is derived from it and stays the same across versions of the document.
_OCTO_IDS = uuid.UUID("0b0e6f1c-7d63-4a36-9a6e-2f4f3c1d5e80")
MAX_OFFERS = 500

OfferCode = Annotated[str, Field(min_length=3, max_length=32, pattern=r"^[A-Z0-9][A-Z0-9_-]*$")]


def _percent_written(value: Decimal) -> int | float:
    """A percent as the document writes it: `10`, `12.5` (two decimals at most: the float is exact in text)."""
    return int(value) if value == value.to_integral_value() else float(value)


Percent = Annotated[
    Decimal,
    Field(gt=0, le=100, max_digits=5, decimal_places=2),
    PlainSerializer(_percent_written, when_used="json"),
]
Count = Annotated[int, Field(ge=1)]


class NetDiscount(StrEnum):
    """How a reseller's net follows a discount of the retail price (Ventrata's values)."""

    NONE = "NONE"  # the net stays (never above the discounted retail)
    FULL = "FULL"  # the net falls by the whole discount: the supplier gives all of it
    SPLIT = "SPLIT"  # the net falls by half the discount: supplier and reseller give half each
    PRORATED = "PRORATED"  # the net falls in proportion to the retail: the commission rate stays


class DiscountPer(StrEnum):
    UNIT = "UNIT"  # a fixed amount off each unit item the offer applies to
    BOOKING = "BOOKING"  # a fixed amount off the booking, spread over the parts it applies to


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class Discount(_Model):
    """A percentage off, or fixed amounts (minor units, per currency) off each unit or the booking."""

    percent: Percent | None = None
    amounts: dict[CurrencyCode, Annotated[int, Field(gt=0, le=1_000_000_000_000)]] | None = None
    per: DiscountPer = DiscountPer.UNIT

    @model_validator(mode="after")
    def _one_kind(self) -> Discount:
        if (self.percent is None) == (self.amounts is None):
            raise ValueError("a discount is either a percent or amounts per currency (one of them)")
        if self.amounts is not None and not self.amounts:
            raise ValueError("amounts lists at least one currency")
        return self


class Target(_Model):
    """What an offer applies to: a product, all of its options or those listed, all of their
    units or those listed."""

    product: Identifier
    options: tuple[Identifier, ...] | None = None
    units: tuple[Identifier, ...] | None = None

    def covers(self, product_id: str, option_id: str) -> bool:
        return self.product == product_id and (self.options is None or option_id in self.options)


class OfferText(_Model):
    """An offer's words in one language."""

    title: Annotated[str, Field(min_length=1, max_length=200)]
    description: Annotated[str, Field(max_length=2000)] = ""
    label: Annotated[str, Field(max_length=50)] = ""  # a badge ("10% off"); worked out when empty


class Offer(_Model):
    id: Identifier
    code: OfferCode | None = None  # None: an automatic offer, applied without a code
    texts: Annotated[dict[LanguageTag, OfferText], Field(min_length=1)]
    discount: Discount
    applies_to: Literal["ALL"] | tuple[Target, ...] = ALL
    sale_from: datetime | None = None  # when it can be sold (UTC when no offset is written)
    sale_until: datetime | None = None
    travel_from: date | None = None  # the travel dates it is for
    travel_until: date | None = None
    weekdays: tuple[Weekday, ...] | None = None  # the travel weekdays it is for (None: all)
    min_days_ahead: Annotated[int, Field(ge=1, le=3650)] | None = None  # booked this long before travel
    min_units: Count | None = None  # units it applies to, in the booking
    max_units: Count | None = None
    min_total: dict[CurrencyCode, Amount] = {}  # the booking's retail total before the discount
    max_uses: Count | None = None  # bookings that may use it, in all (a cancelled one gives it back)
    max_uses_per_email: Count | None = None  # ... by the same guest email
    channels: Literal["ALL"] | tuple[Identifier, ...] = ALL  # "SHOP" and connection ids
    net_discount: NetDiscount = NetDiscount.PRORATED
    active: bool = True  # False: kept but not sold

    @field_validator("code", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("applies_to", "channels", mode="before")
    @classmethod
    def _all(cls, value: Any) -> Any:
        return ALL if isinstance(value, str) and value.upper() == ALL else value

    @model_validator(mode="after")
    def _ranges(self) -> Offer:
        if self.sale_from and self.sale_until and self.sale_until < self.sale_from:
            raise ValueError("saleUntil is before saleFrom")
        if self.travel_from and self.travel_until and self.travel_until < self.travel_from:
            raise ValueError("travelUntil is before travelFrom")
        if self.min_units and self.max_units and self.max_units < self.min_units:
            raise ValueError("maxUnits is below minUnits")
        if self.weekdays is not None and not self.weekdays:
            raise ValueError("weekdays lists at least one day (leave it out for every day)")
        return self

    @property
    def octo_id(self) -> str:
        return str(uuid.uuid5(_OCTO_IDS, self.id))

    @property
    def automatic(self) -> bool:
        return self.code is None

    def text(self, language: str | None) -> OfferText:
        """Its words in `language` (or the language's base: `de` for `de-CH`), else the first given."""
        if language:
            for tag in (language, language.split("-")[0]):
                found = self.texts.get(tag) or next(
                    (t for lang, t in self.texts.items() if lang.split("-")[0] == tag), None
                )
                if found is not None:
                    return found
        return next(iter(self.texts.values()))

    def covers(self, product_id: str, option_id: str) -> bool:
        return self.applies_to == ALL or any(t.covers(product_id, option_id) for t in self.applies_to)

    def unit_ids(self, product_id: str, option_id: str) -> frozenset[str] | None:
        """The units of the option it applies to (None: every unit)."""
        if self.applies_to == ALL:
            return None
        listed = [t.units for t in self.applies_to if t.covers(product_id, option_id)]
        if not listed or any(units is None for units in listed):
            return None
        return frozenset(u for units in listed if units is not None for u in units)


class OffersDocument(_Model):
    offers: Annotated[tuple[Offer, ...], Field(max_length=MAX_OFFERS)] = ()

    @model_validator(mode="after")
    def _unique(self) -> OffersDocument:
        ids = [o.id for o in self.offers]
        codes = [o.code for o in self.offers if o.code is not None]
        for name, values in (("id", ids), ("code", codes)):
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"offer {name}s must be unique; repeated: {', '.join(repeated)}")
        return self

    def to_document(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)

    def by_code(self, code: str) -> Offer | None:
        wanted = code.strip().upper()
        return next((o for o in self.offers if o.code == wanted), None)

    def by_id(self, offer_id: str) -> Offer | None:
        return next((o for o in self.offers if o.id == offer_id), None)

    @property
    def automatic(self) -> tuple[Offer, ...]:
        return tuple(o for o in self.offers if o.automatic)


NO_OFFERS = OffersDocument()


def parse_offers(data: Any) -> OffersDocument:
    """The offers a document describes (`{offers: [...]}`); BAD_REQUEST naming every field in error."""
    if data is None:
        return NO_OFFERS
    if not isinstance(data, dict):
        raise BadRequest("The offers document is a mapping with one key, offers: a list of offers")
    try:
        return OffersDocument.model_validate(data)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc']) or 'offers'}: {e['msg']}" for e in exc.errors()]
        raise BadRequest(
            f"The offers have {len(problems)} problem(s); nothing was saved: " + "; ".join(problems),
            problems=problems,
        ) from None


def catalog_problems(document: OffersDocument, catalog: Catalog, connection_ids: set[str]) -> list[str]:
    """What an offers document names that the catalogue or the connections do not have."""
    problems: list[str] = []
    for offer in document.offers:
        where = f"offer {offer.id!r}"
        if offer.channels != ALL:
            problems += [
                f"{where}: channel {c!r} is neither SHOP nor a connection's id"
                for c in offer.channels
                if c != SHOP and c not in connection_ids
            ]
        if offer.applies_to == ALL:
            continue
        for target in offer.applies_to:
            product = next((p for p in catalog.products if p.id == target.product), None)
            if product is None:
                problems.append(f"{where}: product {target.product!r} is not in the catalogue")
                continue
            options = [o for o in product.options if target.options is None or o.id in target.options]
            missing = set(target.options or ()) - {o.id for o in options}
            problems += [f"{where}: product {product.id!r} has no option {o!r}" for o in sorted(missing)]
            units = {u.id for o in options for u in o.units}
            problems += [
                f"{where}: no option of product {product.id!r} it applies to has unit {u!r}"
                for u in target.units or ()
                if u not in units
            ]
    return problems


class OfferRefused(OctoError):
    """An offer code that cannot be used on this sale, and why."""

    code = "INVALID_OFFER_CODE"

    def __init__(self, offer_code: str, reason: str) -> None:
        super().__init__(f"Offer code {offer_code!r} cannot be used: {reason}", offerCode=offer_code)
        self.reason = reason
