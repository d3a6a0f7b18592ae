"""The mappings inbox: every connection's mapping rows (those waiting for staff first), and one
row's page with the form that maps it to a product, option and unit (the reseller is then
notified at its webhookUrl) and the notifications it was sent.

The option and unit lists carry every choice of the catalogue, grouped by product (and option),
with values that name the whole path (`product/option/unit`): without scripts a wrong
combination is refused here and the form shown again; backoffice.js narrows the lists as the
product and option are picked."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import Response

from berth.domain.catalog import Catalog, Option, Product, Unit
from berth.domain.errors import OctoError
from berth.domain.mappings import MappingRow, Resolution
from berth.http.admin.backoffice import last_attempts, latest_notifications
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, operator_form, staff
from berth.http.context import octo_endpoint
from berth.services.mappings import StaffRow

# Between the parts of a mapping, as in "Thames sightseeing cruise > Evening > Adult".
STEP = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} "

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 25
SHOW = ("all", "pending")


@dataclass(frozen=True)
class ChoiceGroup:
    """An <optgroup>: the choices under one product (or one option), and what it hangs on."""

    label: str
    parent: str  # the value of the product (or option) choice it belongs to
    choices: list[tuple[str, str]]  # (value, label)


@dataclass(frozen=True)
class Choices:
    """What the completion form offers for one row, and the lookup of each submitted value."""

    products: list[tuple[str, str]]
    options: list[ChoiceGroup]
    units: list[ChoiceGroup]
    option_values: dict[str, tuple[Product, Option]] = field(default_factory=dict)
    unit_values: dict[str, tuple[Product, Option | None, Unit]] = field(default_factory=dict)


def _named(thing: Product | Option | Unit) -> str:
    return f"{thing.internal_name} ({thing.id})"


def choices_for(catalog: Catalog, row: MappingRow) -> Choices:
    products = [(p.id, p.internal_name) for p in catalog.products]
    options: list[ChoiceGroup] = []
    units: list[ChoiceGroup] = []
    option_values: dict[str, tuple[Product, Option]] = {}
    unit_values: dict[str, tuple[Product, Option | None, Unit]] = {}
    for product in catalog.products:
        group = []
        for option in product.options:
            value = f"{product.id}/{option.id}"
            option_values[value] = (product, option)
            group.append((value, _named(option)))
            if row.option_required:
                unit_group = []
                for unit in option.units:
                    unit_value = f"{value}/{unit.id}"
                    unit_values[unit_value] = (product, option, unit)
                    unit_group.append((unit_value, _named(unit)))
                label = f"{product.internal_name}{STEP}{option.internal_name}"
                units.append(ChoiceGroup(label, value, unit_group))
        options.append(ChoiceGroup(product.internal_name, product.id, group))
        if not row.option_required:
            # No option is chosen: a unit of any of the product's options will do.
            unit_group = []
            for option in product.options:
                for unit in option.units:
                    unit_value = f"{product.id}/{unit.id}"
                    if unit_value not in unit_values:
                        unit_values[unit_value] = (product, None, unit)
                        unit_group.append((unit_value, _named(unit)))
            units.append(ChoiceGroup(product.internal_name, product.id, unit_group))
    return Choices(products, options, units, option_values, unit_values)


def mapped_to(catalog: Catalog, row: MappingRow) -> str:
    """A row's mapping as staff read it: its product, option and unit, by name (see STEP)."""
    if row.product_id is None:
        return "—"
    product = catalog.product(row.product_id)
    parts = [product.internal_name if product else row.product_id]
    option = product.option(row.option_id) if product and row.option_id else None
    if row.resolved_option is not None:
        parts.append(option.internal_name if option else row.resolved_option)
    if row.resolved_unit is not None:
        found = None
        if product is not None:
            scope = [option] if option is not None else product.options
            found = next((u for o in scope for u in o.units if u.id == row.resolved_unit), None)
        parts.append(found.internal_name if found else row.resolved_unit)
    return STEP.join(parts)


def _list_path(show: str, connection: str, page_number: int = 1) -> str:
    query = {}
    if show != "all":
        query["show"] = show
    if connection:
        query["connection"] = connection
    if page_number > 1:
        query["page"] = str(page_number)
    return "/admin/mappings" + ("?" + urlencode(query) if query else "")


async def _pending_first(
    me: Staff, show: str, connection: str, page_number: int
) -> tuple[list[StaffRow], int]:
    """One page of rows, those waiting for staff first (each group oldest first), and the total."""
    offset = (page_number - 1) * PAGE_SIZE
    search = me.services.mappings.search
    connection_id = connection or None
    waiting, pending_total = await search(
        pending=True, connection_id=connection_id, limit=PAGE_SIZE, offset=offset
    )
    if show == "pending":
        return waiting, pending_total
    room = PAGE_SIZE - len(waiting)
    mapped, mapped_total = await search(
        pending=False, connection_id=connection_id, limit=max(room, 1), offset=max(0, offset - pending_total)
    )
    return waiting + mapped[:room], pending_total + mapped_total


@router.get("/mappings")
async def mappings(
    request: Request,
    show: str = "all",
    connection: str = "",
    page_number: int = Query(default=1, ge=1, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    show = show if show in SHOW else "all"
    counts = await me.services.mappings.counts()
    rows, total = await _pending_first(me, show, connection, page_number)
    names = {c.connection_id: c.connection_name for c in counts}
    if connection and connection not in names:
        names[connection] = next(
            (c.name for c in await me.services.connections.list() if c.id == connection), connection
        )
    shown_counts = [c for c in counts if not connection or c.connection_id == connection]
    return page(
        request,
        "mappings.html",
        me,
        section="mappings",
        rows=rows,
        total=total,
        everything=sum(c.pending + c.mapped for c in counts),
        pending=sum(c.pending for c in shown_counts),
        mapped=sum(c.mapped for c in shown_counts),
        counts=counts,
        connections=names,
        connection=connection,
        show=show,
        mapped_to=lambda row: mapped_to(me.catalog.catalog, row),
        notifications=await latest_notifications(me.services, [s.row.id for s in rows]),
        page_number=page_number,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        pager_url=lambda number: _list_path(show, connection, number),
        show_url=lambda value: _list_path(value, connection),
        endpoint=octo_endpoint(request),
    )


async def _row_page(
    request: Request,
    me: Staff,
    row_id: str,
    *,
    chosen: tuple[str, str, str] | None = None,
    errors: dict[str, str] | None = None,
) -> Response:
    row, notifications = await me.services.mappings.get(row_id)
    names = {c.id: c.name for c in await me.services.connections.list()}
    catalog = me.catalog.catalog
    if chosen is None:
        option = f"{row.product_id}/{row.option_id}" if row.resolved_option else ""
        unit = ""
        if row.resolved_unit:
            path = (row.product_id, row.option_id) if row.option_required else (row.product_id,)
            unit = "/".join((*(str(part) for part in path), row.resolved_unit))
        chosen = (row.product_id or "", option, unit)
    return page(
        request,
        "mapping.html",
        me,
        section="mappings",
        status_code=400 if errors else 200,
        row=row,
        connection=names.get(row.connection_id, row.connection_id),
        mapped_to=mapped_to(catalog, row),
        choices=choices_for(catalog, row),
        chosen=dict(zip(("product", "option", "unit"), chosen, strict=True)),
        errors=errors or {},
        notifications=notifications,
        latest=await last_attempts(me.services, [d.id for d in notifications]),
        endpoint=octo_endpoint(request),
    )


@router.get("/mappings/{row_id}")
async def mapping(row_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    return await _row_page(request, me, row_id)


def _resolution(
    catalog: Catalog, row: MappingRow, product_id: str, option_value: str, unit_value: str, choices: Choices
) -> tuple[Resolution | None, dict[str, str]]:
    """The form's choice as a Resolution, or what is wrong with it, field by field."""
    errors: dict[str, str] = {}
    product = catalog.product(product_id) if product_id else None
    if not product_id:
        errors["product"] = "Choose the product this listing sells."
    elif product is None:
        errors["product"] = f"{product_id!r} is not a product of the catalogue: choose one from the list."
    option: Option | None = None
    if row.option_required:
        found = choices.option_values.get(option_value)
        if not option_value:
            errors["option"] = "Choose an option: this listing needs one (its optionRequired is true)."
        elif found is None:
            errors["option"] = "That option is not in the catalogue any more: choose one from the list."
        elif product is not None and found[0].id != product.id:
            errors["option"] = (
                f"“{found[1].internal_name}” is an option of {found[0].internal_name}, not of "
                f"{product.internal_name}: choose one of {product.internal_name}'s options."
            )
        else:
            option = found[1]
    unit: Unit | None = None
    if row.unit_required:
        found_unit = choices.unit_values.get(unit_value)
        if not unit_value:
            errors["unit"] = "Choose a unit: this listing needs one (its unitRequired is true)."
        elif found_unit is None:
            errors["unit"] = "That unit is not in the catalogue any more: choose one from the list."
        elif product is not None and found_unit[0].id != product.id:
            errors["unit"] = (
                f"“{found_unit[2].internal_name}” is a unit of {found_unit[0].internal_name}, not of "
                f"{product.internal_name}."
            )
        elif option is not None and found_unit[1] is not None and found_unit[1].id != option.id:
            errors["unit"] = (
                f"“{found_unit[2].internal_name}” is a unit of the option “{found_unit[1].internal_name}”, "
                f"not of “{option.internal_name}”: choose one of its units."
            )
        else:
            unit = found_unit[2]
    if errors or product is None:
        return None, errors
    return Resolution(product.id, option.id if option else None, unit.id if unit else None), errors


@router.post("/mappings/{row_id}")
async def complete(
    row_id: str,
    request: Request,
    product: str = Form(default="", max_length=300),
    option: str = Form(default="", max_length=300),
    unit: str = Form(default="", max_length=300),
    me: Staff = Depends(operator_form),
) -> Response:
    catalog = me.catalog.catalog
    before, _ = await me.services.mappings.get(row_id)
    chosen, errors = _resolution(catalog, before, product, option, unit, choices_for(catalog, before))
    if chosen is None:
        return await _row_page(request, me, row_id, chosen=(product, option, unit), errors=errors)
    try:
        after = await me.services.mappings.complete(catalog, row_id, chosen, actor=me.actor)
    except OctoError as exc:  # the catalogue changed under the form
        return await _row_page(
            request, me, row_id, chosen=(product, option, unit), errors={"form": exc.message}
        )
    names = {c.id: c.name for c in await me.services.connections.list()}
    reseller = names.get(after.connection_id, after.connection_id)
    what = f"“{after.reseller_reference}” of {reseller} mapped to {mapped_to(catalog, after)}."
    if before.mapped and before.resolution == after.resolution:
        text = f"{what} That was already its mapping: nothing changed, and {reseller} is not notified again."
    elif after.webhook_url:
        text = f"{what} {reseller} will be notified at {after.webhook_url}; the notification shows below."
    else:
        text = f"{what} The row has no webhookUrl, so {reseller} is not notified: it sees the mapping in GET /mappings."
    return redirect(f"/admin/mappings/{after.id}", me, Notice("success", text))
