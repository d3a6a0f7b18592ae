"""A package (octo/packages) in the shop: its calendar says a day is bookable when the package
is, which its own availability already says (a required include with nothing to sell that day
makes it sold out); its day's page asks, beside the party, the package's departure and the
departure of each include that needs one (on the day, or within the include's `validityDays`),
and offers the optional includes as a choice within their group's `count`. The hold is the
package booking with its included bookings, made by the same booking service as an OCTO
reservation with `packageBookings`, so every rule of the capability holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from berth.container import Services
from berth.domain.catalog import Catalog, Option, PackageInclude, PackageIncludeGroup, Product, include_unit
from berth.domain.errors import OctoError
from berth.domain.slots import slot_for_id
from berth.http.shop.selection import Selection, viewer
from berth.http.shop.views import product_text, slot_time, unit_title
from berth.read_models.availability import SlotAvailability
from berth.services.availability import AvailabilityQuery
from berth.services.shop import Shop
from berth.translations import Words


@dataclass(frozen=True)
class Time:
    """A departure the guest may pick (a radio button): `why` says why it cannot be."""

    id: str
    text: str
    left: int | None
    why: str | None


@dataclass(frozen=True)
class IncludePart:
    """One include on the package's day page: its departures to pick from (none for an include
    that names no availability), and what the guest has picked (None: not included)."""

    include: PackageInclude
    title: str
    times: list[Time]
    chosen: str | None
    why: str | None = None  # why it has no departure to pick: it cannot take the party


@dataclass(frozen=True)
class GroupPart:
    group: PackageIncludeGroup
    title: str | None
    parts: list[IncludePart]


@dataclass(frozen=True)
class PackageDay:
    """The package's day page beside the party: its own departures and its includes' groups."""

    times: list[Time]
    chosen: str | None
    groups: list[GroupPart]


def include_title(catalog: Catalog, include: PackageInclude, words: Words) -> str:
    """The include as the guest knows it: its product's title."""
    product = catalog.product(include.product_id)
    return product_text(product, words).title if product is not None else include.id


def package_contents(catalog: Catalog, option: Option, words: Words) -> list[GroupPart]:
    """What the package books, group by group (its product page's list)."""
    return [
        GroupPart(
            group,
            group.title,
            [IncludePart(i, include_title(catalog, i, words), [], None) for i in group.includes],
        )
        for group in option.package_includes
    ]


def include_names(catalog: Catalog, product: Product, option: Option, words: Words) -> Callable[[str], str]:
    """The title of each of the package's units, includes and groups, by id (for the guest's
    messages)."""
    names = {unit.id: unit_title(product, unit, words) for unit in option.units}
    names |= {include.id: include_title(catalog, include, words) for include in option.includes}
    names |= {group.id: group.title or words("Included") for group in option.package_includes}
    return lambda key: names.get(key, key)


def _time(words: Words, item: SlotAvailability, day: date, few: int) -> Time:
    vacancies = item.state.vacancies
    why = None
    if not item.state.available:
        why = words("Not enough places for your party") if vacancies else words("Sold out")
    text = slot_time(words, item.slot, item.rental)
    if item.slot.local_date != day:
        text = f"{words.date(item.slot.local_date)}, {text}"
    left = vacancies if why is None and vacancies is not None and vacancies < few else None
    return Time(item.slot.id, text, left, why)


def _party_on(catalog: Catalog, option: Option, include: PackageInclude, units: Mapping[str, int]
              ) -> tuple[tuple[str, int], ...] | None:  # fmt: skip
    """The party as the include books it (its units of the same id, else type); None when a
    unit of the party has no counterpart there."""
    product = catalog.product(include.product_id)
    included = product.option(include.option_id) if product is not None else None
    if included is None:
        return None
    counts: dict[str, int] = {}
    for unit in option.units:
        count = units.get(unit.id, 0)
        if not count:
            continue
        mapped = include_unit(included, unit)
        if mapped is None:
            return None
        counts[mapped.id] = counts.get(mapped.id, 0) + count
    return tuple(counts.items())


async def _include_times(
    svc: Services, shop: Shop, selection: Selection, include: PackageInclude, day: date, words: Words
) -> list[Time]:
    """The include's departures the package of `day` may book, for the party: that day's, and
    up to `validityDays` later."""
    party = _party_on(shop.catalog, selection.option, include, selection.units)
    if party is None:
        return []
    last = day + timedelta(days=include.validity_days or 0)
    query = AvailabilityQuery(include.product_id, include.option_id, local_date_start=day, local_date_end=last,
                              units=party)  # fmt: skip
    try:
        found = await svc.availability.check(shop.catalog, query, viewer(shop))
    except OctoError:  # the include is not sold to the shop (its contract) or not that far ahead
        return []
    return [_time(words, item, day, svc.settings.shop_few_left) for item in found]


def _only_one(times: list[Time]) -> str | None:
    """The departure picked for the guest when there is no choice: the one that can be booked."""
    open_ = [t.id for t in times if t.why is None]
    return open_[0] if len(open_) == 1 else None


async def package_day(
    svc: Services, shop: Shop, selection: Selection, day: date, words: Words, found: list[SlotAvailability]
) -> PackageDay:
    """What the package's day page offers the party: `found`, the package's departures that day
    (sold out where a required include has no room), and each include's."""
    few = svc.settings.shop_few_left
    times = [_time(words, item, day, few) for item in found]
    groups = []
    for group in selection.option.package_includes:
        parts = []
        for include in group.includes:
            title = include_title(shop.catalog, include, words)
            if _party_on(shop.catalog, selection.option, include, selection.units) is None:
                parts.append(IncludePart(include, title, [], None, words("Not for your party")))
                continue
            include_times = (
                await _include_times(svc, shop, selection, include, day, words)
                if include.availability_required
                else []
            )
            picked = selection.includes.get(include.id)
            if picked is None and include.required:
                picked = _only_one(include_times) if include.availability_required else ""
            parts.append(IncludePart(include, title, include_times, picked))
        groups.append(GroupPart(group, group.title, parts))
    return PackageDay(times, _only_one(times), groups)


async def package_days(svc: Services, shop: Shop, query: AvailabilityQuery) -> dict[date, SlotAvailability]:
    """The package's calendar: each day's departure that can be booked (else its first), as the
    package's own availability says (a required include with no room that day: sold out)."""
    days: dict[date, SlotAvailability] = {}
    for item in await svc.availability.check(shop.catalog, query, viewer(shop)):
        known = days.get(item.slot.local_date)
        if known is None or (item.state.available and not known.state.available):
            days[item.slot.local_date] = item
    return days


def package_bookings(selection: Selection) -> tuple[tuple[str | None, str | None], ...] | None:
    """A package's includes chosen, as an OCTO reservation's `packageBookings` (include id and
    availability id each); None for any other product."""
    if not selection.product.is_package:
        return None
    return tuple(
        (include_id, availability_id or None) for include_id, availability_id in selection.includes.items()
    )


def chosen_parts(shop: Shop, selection: Selection, words: Words) -> list[tuple[str, str]]:
    """Each include chosen and when (the booking form's list of what the package books)."""
    found = []
    for include in selection.option.includes:
        if include.id not in selection.includes:
            continue
        title = include_title(shop.catalog, include, words)
        product = shop.catalog.product(include.product_id)
        option = product.option(include.option_id) if product is not None else None
        availability_id = selection.includes[include.id]
        slot = (
            slot_for_id(product, option, availability_id)
            if product is not None and option is not None and availability_id
            else None
        )
        when = (
            f"{words.date(slot.local_date)}, {slot_time(words, slot)}"
            if slot is not None
            else words("Included")
        )
        found.append((title, when))
    return found
