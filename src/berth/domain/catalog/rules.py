"""The core rules of a catalogue, those of plain OCTO: unique ids, units that reference each
other, schedules that fit the product's availability type, prices that cover every unit.

A capability's rules for the declarations it adds live with the capability and are passed in
as `CatalogRule`s (the domain imports nothing else of Berth); the capability registry lists
them (`berth.capabilities.registry.CATALOG_RULES`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from berth.domain.catalog.model import (
    CORE_FORMATS,
    AvailabilityType,
    Catalog,
    DeliveryFormat,
    Option,
    Price,
    PricingPer,
    Product,
    Schedule,
    amount_problem,
    price_amounts,
)

# Where a problem is: the keys and indexes of the catalogue file.
Path = tuple[str | int, ...]
Problem = tuple[Path, str]

# Why a format outside the core's cannot be delivered as Berth is set up.
UNDELIVERABLE = {
    DeliveryFormat.PKPASS_URL: "PKPASS_URL needs an Apple Wallet pass certificate: set BERTH_PKPASS_CERTIFICATE, "
    "BERTH_PKPASS_KEY, BERTH_PKPASS_TEAM_ID and BERTH_PKPASS_PASS_TYPE_ID (docs/operations.md), or leave it out",
}


class CatalogRule:
    """A capability's rules; each hook adds problems at the place the core rules reach."""

    def product_problems(self, product: Product, path: Path) -> list[Problem]:
        return []

    def option_problems(self, product: Product, option: Option, path: Path) -> list[Problem]:
        return []

    def catalog_problems(self, catalog: Catalog) -> list[Problem]:
        return []

    # Delivery formats this rule makes deliverable beyond the core's (PKPASS_URL once Apple
    # Wallet passes can be signed).
    delivery_formats: frozenset[DeliveryFormat] = frozenset()


_TIME = re.compile(r"^(\d\d):(\d\d)$")


def _minutes(clock: str) -> int:
    match = _TIME.match(clock)
    assert match is not None
    return int(match.group(1)) * 60 + int(match.group(2))


def duplicate_ids(ids: Sequence[str], path: Path, what: str) -> list[tuple[Path, str]]:
    """A problem at each id of the list at `path` that an earlier item already has."""
    seen: set[str] = set()
    problems: list[tuple[Path, str]] = []
    for index, item_id in enumerate(ids):
        if item_id in seen:
            problems.append(((*path, index, "id"), f"duplicate {what} id {item_id!r}"))
        seen.add(item_id)
    return problems


def catalog_problems(catalog: Catalog, rules: Sequence[CatalogRule]) -> list[tuple[Path, str]]:
    """Rules that span fields: unique ids, references between units, schedules that fit the
    product's availability type, prices that cover every unit; then each capability's rules
    (`rules`) for the declarations it adds. Paths use the file's keys."""
    problems = duplicate_ids([p.id for p in catalog.products], ("products",), "product")
    deliverable = CORE_FORMATS.union(*(rule.delivery_formats for rule in rules))
    for p_index, product in enumerate(catalog.products):
        p_path: Path = ("products", p_index)
        if sum(1 for o in product.options if o.default) > 1:
            problems.append(((*p_path, "options"), "more than one option is marked default"))
        for f_index, delivery_format in enumerate(product.delivery_formats):
            if delivery_format not in deliverable:
                problems.append(((*p_path, "deliveryFormats", f_index), UNDELIVERABLE[delivery_format]))
        for rule in rules:
            problems.extend(rule.product_problems(product, p_path))
        if product.content and product.locale not in product.content:
            problems.append(
                ((*p_path, "content"), f"content must include the product locale {product.locale!r}")
            )
        currencies = product.currencies
        priced = {price.currency for o in product.options for price in o.booking_prices} | {
            price.currency for o in product.options for u in o.units for price in u.prices
        }
        if product.default_currency and product.default_currency not in priced:
            problems.append(((*p_path, "defaultCurrency"), "no price is given in this currency"))
        problems.extend(duplicate_ids([o.id for o in product.options], (*p_path, "options"), "option"))
        for o_index, option in enumerate(product.options):
            o_path: Path = (*p_path, "options", o_index)
            problems.extend(_option_problems(product, option, o_path, currencies, rules))
    for rule in rules:
        problems.extend(rule.catalog_problems(catalog))
    return problems


def _option_problems(
    product: Product, option: Option, o_path: Path, currencies: list[str], rules: Sequence[CatalogRule]
) -> list[tuple[Path, str]]:
    problems: list[tuple[Path, str]] = []
    r = option.restrictions
    if r.min_units is not None and r.max_units is not None and r.min_units > r.max_units:
        problems.append(((*o_path, "restrictions"), "minUnits is greater than maxUnits"))
    unit_ids = [u.id for u in option.units]
    problems.extend(duplicate_ids(unit_ids, (*o_path, "units"), "unit"))
    for u_index, unit in enumerate(option.units):
        u_path: Path = (*o_path, "units", u_index)
        ur = unit.restrictions
        if ur.min_quantity is not None and ur.max_quantity is not None and ur.min_quantity > ur.max_quantity:
            problems.append(((*u_path, "restrictions"), "minQuantity is greater than maxQuantity"))
        if ur.min_age > ur.max_age:
            problems.append(((*u_path, "restrictions"), "minAge is greater than maxAge"))
        for a_index, other in enumerate(ur.accompanied_by):
            if other not in unit_ids or other == unit.id:
                problems.append(
                    (
                        (*u_path, "restrictions", "accompaniedBy", a_index),
                        f"{other!r} is not another unit of option {option.id!r}",
                    )
                )
        if product.pricing_per is PricingPer.UNIT:
            problems.extend(price_problems(unit.prices, (*u_path, "prices"), currencies))
    if product.pricing_per is PricingPer.BOOKING:
        problems.extend(price_problems(option.booking_prices, (*o_path, "bookingPrices"), currencies))
    for s_index, schedule in enumerate(option.schedules):
        s_path: Path = (*o_path, "schedules", s_index)
        problems.extend(_schedule_problems(product.availability_type, schedule, s_path))
    for rule in rules:
        problems.extend(rule.option_problems(product, option, o_path))
    return problems


def price_problems(prices: tuple[Price, ...], path: Path, currencies: list[str]) -> list[tuple[Path, str]]:
    problems: list[tuple[Path, str]] = []
    if currencies and not prices:
        return [(path, "prices are required: the product is priced in " + ", ".join(currencies))]
    covered = {p.currency for p in prices}
    for currency in currencies:
        if currency not in covered:
            problems.append((path, f"no price in {currency}, which other prices of the product use"))
    for index, price in enumerate(prices):
        for place, amount in price_amounts(price):
            if (too_large := amount_problem(amount)) is not None:
                problems.append(((*path, index, *place), too_large))
        if price.original is not None and price.original < price.retail:
            problems.append(((*path, index, "original"), "original must not be lower than retail"))
        if price.net is not None and price.net > price.retail:
            problems.append(((*path, index, "net"), f"net {price.net} is above retail {price.retail}"))
        for t_index, tax in enumerate(price.included_taxes):
            if tax.net is not None and tax.net > tax.retail:
                problems.append(
                    (
                        (*path, index, "includedTaxes", t_index, "net"),
                        f"net {tax.net} is above retail {tax.retail}",
                    )
                )
        if price.valid_from and price.valid_until and price.valid_from > price.valid_until:
            problems.append(((*path, index), "'from' is after 'until'"))
    return problems


def _schedule_problems(kind: AvailabilityType, schedule: Schedule, path: Path) -> list[tuple[Path, str]]:
    problems: list[tuple[Path, str]] = []
    if schedule.valid_from and schedule.valid_until and schedule.valid_from > schedule.valid_until:
        problems.append((path, "'from' is after 'until'"))
    if not schedule.weekdays:
        problems.append(((*path, "weekdays"), "at least one weekday is required"))
    if kind is AvailabilityType.START_TIME:
        if not schedule.start_times:
            problems.append(((*path, "startTimes"), "a START_TIME product needs start times"))
        if schedule.opening_hours:
            problems.append(
                ((*path, "openingHours"), "a START_TIME product has start times, not opening hours")
            )
        if len(set(schedule.start_times)) != len(schedule.start_times):
            problems.append(((*path, "startTimes"), "start times repeat"))
    else:
        if not schedule.opening_hours:
            problems.append(((*path, "openingHours"), "an OPENING_HOURS product needs opening hours"))
        if schedule.start_times:
            problems.append(
                ((*path, "startTimes"), "an OPENING_HOURS product has opening hours, not start times")
            )
        previous_close = -1
        for h_index, hours in enumerate(schedule.opening_hours):
            opens, closes = _minutes(hours.opens), _minutes(hours.closes)
            if opens >= closes:
                problems.append(((*path, "openingHours", h_index), "'from' must be before 'to'"))
            if opens < previous_close:
                problems.append(
                    ((*path, "openingHours", h_index), "opening hours overlap or are out of order")
                )
            previous_close = closes
    return problems
