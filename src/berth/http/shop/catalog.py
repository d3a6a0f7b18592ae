"""The shop's catalogue pages: the products, a product with its month calendar of bookable days
(each with its lowest price), and one day's departures with the places left and the party's
price."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.container import Services
from berth.domain.errors import NotFound
from berth.domain.shop_party import Problem, most_of, party_problems
from berth.domain.shop_prices import Amount, from_price, lowest_on, month_weeks, party_price
from berth.http.context import current_services
from berth.http.shop.errors import ShopRoute
from berth.http.shop.packages import package_contents, package_day, package_days
from berth.http.shop.rendering import page, shop_words
from berth.http.shop.selection import Selection, default_party, kept, select, viewer
from berth.http.shop.session import Guest, guest
from berth.http.shop.views import (
    cancellation_text,
    duration_text,
    option_title,
    product_text,
    slot_time,
    unit_note,
    unit_title,
)
from berth.http.shop.wording import problem_text
from berth.read_models.availability import CalendarDay, SlotAvailability
from berth.services.availability import AvailabilityQuery, today_in
from berth.translations import Words

router = APIRouter(route_class=ShopRoute, include_in_schema=False)
MONTHS_AHEAD = 12  # how far the calendar pages forward (within BERTH_MAX_RANGE_DAYS of a check)


@dataclass(frozen=True)
class CalendarCell:
    day: date
    bookable: bool
    price: Amount | None
    url: str | None


@dataclass(frozen=True)
class Departure:
    """A departure of the day as the guest sees it: its time, whether the party can take it,
    how many places are left (when few), what the party pays, and where choosing it leads."""

    time: str
    left: int | None
    price: Amount | None
    url: str | None  # None: it cannot be chosen, `why` says why
    why: str | None = None


def _last_month(today: date) -> date:
    return (today.replace(day=1) + timedelta(days=31 * MONTHS_AHEAD)).replace(day=1)


def _month(text: str | None, today: date) -> date:
    """The first day of the month `YYYY-MM` names, within the months the calendar shows."""
    first = today.replace(day=1)
    try:
        year, month = (int(part) for part in (text or "").split("-"))
        asked = date(year, month, 1)
    except ValueError:
        return first
    return min(max(asked, first), _last_month(today))


def _next_month(first: date) -> date:
    return (first + timedelta(days=32)).replace(day=1)


def _previous_month(first: date) -> date:
    return (first - timedelta(days=1)).replace(day=1)


def _party_names(selection: Selection, words: Words) -> dict[str, str]:
    return {unit.id: unit_title(selection.product, unit, words) for unit in selection.option.units}


def party_messages(selection: Selection, problems: list[Problem], words: Words) -> list[str]:
    names = _party_names(selection, words)
    return [problem_text(words, p, lambda key: names.get(key, key)) for p in problems]


@router.get("/shop")
async def products(
    request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    words = shop_words(me, shop.snapshot.languages)
    cards = []
    for product in shop.products:
        currency = product.currency
        today = today_in(product, svc.clock())
        cards.append(
            (
                product,
                product_text(product, words),
                from_price(product, today, currency) if currency else None,
            )
        )
    return page(request, me, "products.html", words=words, cards=cards, supplier=shop.catalog.supplier)


@router.get("/shop/{product_id}")
async def product_page(
    product_id: str,
    request: Request,
    me: Guest = Depends(guest),
    svc: Services = Depends(current_services),
) -> Response:
    shop = await svc.shop.shop()
    selection = select(shop, product_id, request.query_params)
    product, option = selection.product, selection.option
    words = shop_words(me, shop.snapshot.languages)
    today = today_in(product, svc.clock())
    first = _month(request.query_params.get("month"), today)
    last = _next_month(first) - timedelta(days=1)
    query = AvailabilityQuery(
        product.id, option.id, local_date_start=max(first, today), local_date_end=last,
        rental_duration_id=selection.rental.id if selection.rental else None,
    )  # fmt: skip
    days: Mapping[date, CalendarDay | SlotAvailability] = (
        await package_days(svc, shop, query) if product.is_package  # its includes' room too
        else {d.local_date: d for d in await svc.availability.calendar(shop.catalog, query, viewer(shop), kept(shop))}
    )  # fmt: skip
    weeks = []
    for week in month_weeks(first.year, first.month):
        cells: list[CalendarCell | None] = []
        for day in week:
            found = days.get(day) if day is not None else None
            if day is None:
                cells.append(None)
                continue
            bookable = found is not None and found.state.available
            price = (
                lowest_on(product, option, day, selection.currency, selection.rental) if bookable else None
            )
            cells.append(CalendarCell(day, bookable, price, selection.day_url(day) if bookable else None))
        weeks.append(cells)
    previous = _previous_month(first) if first > today.replace(day=1) else None
    following = _next_month(first) if _next_month(first) <= _last_month(today) else None
    return page(
        request, me, "product.html", words=words,
        product=product, option=option, selection=selection, text=product_text(product, words, option),
        options=[(o, option_title(product, o, words)) for o in product.options],
        durations=option.rental_durations,
        duration=duration_text(words, option.duration_minutes) if not option.rental_durations else None,
        cancellation=cancellation_text(words, option),
        from_price=from_price(product, today, selection.currency) if selection.currency else None,
        month=words.month(first), weeks=weeks, weekdays=[words.weekday(d) for d in month_weeks(2024, 1)[1] if d],
        month_query=lambda month: selection.query(month=f"{month:%Y-%m}"),
        previous=previous, following=following,
        package=package_contents(shop.catalog, option, words) if product.is_package else None,
        supplier=shop.catalog.supplier,
    )  # fmt: skip


def _units_form(selection: Selection, day: date, words: Words) -> list[dict[str, object]]:
    product, option = selection.product, selection.option
    rows = []
    for unit in option.units:
        price = party_price(product, option, {unit.id: 1}, day, selection.currency, selection.rental)
        rows.append(
            {
                "unit": unit,
                "title": unit_title(product, unit, words),
                "note": unit_note(product, unit, words),
                "price": price,
                "count": selection.units.get(unit.id, 0),
                "most": most_of(option, unit.id),
            }
        )
    return rows


@router.get("/shop/{product_id}/{day}")
async def day_page(
    product_id: str,
    day: date,
    request: Request,
    me: Guest = Depends(guest),
    svc: Services = Depends(current_services),
) -> Response:
    shop = await svc.shop.shop()
    selection = select(shop, product_id, request.query_params)
    if not selection.units:
        selection = Selection(
            selection.product, selection.option, selection.rental, default_party(selection.option)
        )
    product, option = selection.product, selection.option
    words = shop_words(me, shop.snapshot.languages)
    today = today_in(product, svc.clock())
    if day < today or day > today + timedelta(days=svc.settings.max_range_days - 1):
        raise NotFound(f"{day} cannot be booked")
    problems = party_problems(option, selection.units)
    party = tuple(selection.units.items()) if not problems else None
    query = AvailabilityQuery(
        product.id, option.id, local_date=day, units=party,
        rental_duration_id=selection.rental.id if selection.rental else None,
    )  # fmt: skip
    found = await svc.availability.check(shop.catalog, query, viewer(shop), kept(shop))
    few = svc.settings.shop_few_left
    price = party_price(product, option, selection.units, day, selection.currency, selection.rental)
    departures = []
    for item in found:
        vacancies = item.state.vacancies
        why = None
        if problems:
            why = words("Choose your party first")
        elif not item.state.available:
            why = words("Not enough places for your party") if vacancies else words("Sold out")
        departures.append(
            Departure(
                time=slot_time(words, item.slot, item.rental),
                left=vacancies if why is None and vacancies is not None and vacancies < few else None,
                price=price,
                url=None if why else f"/shop/{product.id}/book?{selection.query(slot=item.slot.id)}",
                why=why,
            )
        )
    return page(
        request, me, "package_day.html" if product.is_package else "day.html", words=words,
        status_code=400 if problems else 200,
        product=product, option=option, selection=selection, day=day, text=product_text(product, words, option),
        option_name=option_title(product, option, words) if len(product.options) > 1 else None,
        rental=selection.rental.title if selection.rental else None,
        units=_units_form(selection, day, words), problems=party_messages(selection, problems, words),
        departures=departures, supplier=shop.catalog.supplier,
        package=await package_day(svc, shop, selection, day, words, found) if product.is_package else None,
    )  # fmt: skip
