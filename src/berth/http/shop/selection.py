"""What a guest has chosen so far, carried from page to page in the address: the product, its
option, a rental's duration, the party (`unit-<id>=<count>`) and, for a package, the
departure of each include chosen (`include-<id>=<availability id>`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import ImmutableMultiDict

from berth.domain.catalog import Option, Product, RentalDuration
from berth.domain.errors import InvalidOptionId
from berth.domain.shop_party import most_of
from berth.services.allotments import Viewer
from berth.services.shop import Shop

UNIT_PREFIX = "unit-"
INCLUDE_PREFIX = "include-"
CHOSEN = "yes"  # an include chosen that names no availability
# A page's address or a form sent: what a selection is read from.
Params = ImmutableMultiDict[str, Any]


@dataclass(frozen=True)
class Selection:
    product: Product
    option: Option
    rental: RentalDuration | None
    units: Mapping[str, int] = field(default_factory=dict)
    # A package's includes chosen: include id -> its availability id ("" for one without).
    includes: Mapping[str, str] = field(default_factory=dict)

    @property
    def currency(self) -> str:
        return self.product.currency or ""

    def params(self, **extra: str) -> list[tuple[str, str]]:
        """The selection as query parameters (with `extra` ones)."""
        found = [("option", self.option.id)]
        if self.rental is not None:
            found.append(("duration", self.rental.id))
        found += [(UNIT_PREFIX + unit_id, str(count)) for unit_id, count in self.units.items() if count > 0]
        found += [(INCLUDE_PREFIX + include_id, slot or CHOSEN) for include_id, slot in self.includes.items()]
        return found + list(extra.items())

    def query(self, **extra: str) -> str:
        return urlencode(self.params(**extra))

    def day_url(self, day: date) -> str:
        return f"/shop/{self.product.id}/{day.isoformat()}?{self.query()}"


def _count(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 4 else None


def units_of(option: Option, params: Params) -> dict[str, int]:
    """The party the address (or form) names: known units only, each count within what the form
    offers (a count it could not offer is taken as the most it does)."""
    found = {}
    for unit in option.units:
        count = _count(str(params.get(UNIT_PREFIX + unit.id, "")))
        if count:
            found[unit.id] = min(count, most_of(option, unit.id))
    return found


def includes_of(option: Option, params: Params) -> dict[str, str]:
    """A package's includes the address (or form) chooses: known includes only, each with the
    availability named (checked when the places are held), or "" for one that names none
    (`include-<id>=yes`). An include left empty is not chosen."""
    found = {}
    for include in option.includes:
        value = str(params.get(INCLUDE_PREFIX + include.id, ""))[:100]
        if include.availability_required and value:
            found[include.id] = value
        elif not include.availability_required and value == CHOSEN:
            found[include.id] = ""
    return found


def default_party(option: Option) -> dict[str, int]:
    """The party a day's page starts with: the option's fewest guests of its first unit."""
    first = option.units[0]
    return {first.id: max(option.restrictions.min_units or 1, first.restrictions.min_quantity or 1)}


def select(shop: Shop, product_id: str, params: Params) -> Selection:
    """The selection an address names: an unknown product or option is not found; a rental's
    duration not named (or unknown) is the option's default."""
    product = shop.product(product_id)
    option_id = str(params.get("option", ""))
    option = product.option(option_id) if option_id else product.default_option
    if option is None:
        raise InvalidOptionId(option_id, product.id)
    duration_id = str(params.get("duration", ""))
    rental = (option.rental_duration(duration_id) if duration_id else None) or option.default_rental_duration
    return Selection(product, option, rental, units_of(option, params), includes_of(option, params))


def viewer(shop: Shop) -> Viewer:
    """The shop's view of availability: its contract's stop-sells and allotments, as any
    reseller's."""
    return Viewer(shop.connection.id, shop.connection.contract.stop_sells)


def kept(shop: Shop) -> tuple[int, str]:
    """What the shop's availability answers are kept under beside the question (`kept` of
    `AvailabilityService.check`): the catalogue's version and the contract it sells under."""
    return shop.snapshot.version, shop.snapshot.scope
