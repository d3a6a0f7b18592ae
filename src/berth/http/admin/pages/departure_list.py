"""Every departure of one product and option, a month at a time: places sold of its capacity,
its state as resellers see it, resellers' blocks on it (read for the whole month at once),
staff's note, a link to its manifest, and close or reopen (the manifest's actions, answered
back here)."""

from __future__ import annotations

from datetime import date, timedelta

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from berth.domain.catalog import Option, Product
from berth.http.admin.pages.dates import of_product
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff

router = APIRouter(route_class=PageRoute)
PATH = "/admin/departures"


def month_of(text: str, today: date) -> date:
    """The first day of the month `YYYY-MM` names; `today`'s month for anything else."""
    try:
        year, month = (int(part) for part in text.split("-"))
        if 1970 <= year <= 2999:  # a month away from the calendar's ends: its neighbours exist
            return date(year, month, 1)
    except ValueError:
        pass
    return today.replace(day=1)


def next_month(first: date) -> date:
    return (first + timedelta(days=32)).replace(day=1)


def previous_month(first: date) -> date:
    return (first - timedelta(days=1)).replace(day=1)


def departures_path(product: Product, option: Option, month: date) -> str:
    return f"{PATH}?product={product.id}&option={option.id}&month={month:%Y-%m}"


@router.get("/departures")
async def departures(
    request: Request,
    product: str = Query(default="", max_length=200),
    option: str = Query(default="", max_length=200),
    month: str = Query(default="", max_length=7),
    me: Staff = Depends(staff),
) -> Response:
    catalog = me.catalog.catalog
    chosen = catalog.product(product) or (catalog.products[0] if catalog.products else None)
    if chosen is None:
        return page(request, "departures.html", me, section="departures", product=None)
    variant = chosen.option(option) or chosen.default_option
    local = of_product(chosen)
    today = me.services.clock().astimezone(local.tz).date()
    first = month_of(month, today)
    last = next_month(first) - timedelta(days=1)
    found = await me.services.departures.find(catalog, chosen.id, variant.id, first, last)
    uses = await me.services.allotments.blocks_of(chosen, variant, [d.slot for d in found])
    blocks = {d.slot.id: used for d, used in zip(found, uses, strict=True) if used}
    names = {c.id: c.name for c in await me.services.connections.list()} if blocks else {}
    return page(
        request, "departures.html", me, section="departures", product=chosen, option=variant,
        departures=found, blocks=blocks, names=names, local=local, month=first, last=last, today=today,
        here=departures_path(chosen, variant, first),
        earlier=departures_path(chosen, variant, previous_month(first)),
        later=departures_path(chosen, variant, next_month(first)),
        this_month=departures_path(chosen, variant, today.replace(day=1)),
    )  # fmt: skip
