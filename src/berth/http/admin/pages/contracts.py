"""A connection's contract in the back office: read by every role; changed by editors and admins
as a form (products as a checklist, the rate, the net price list as a table), previewed as the
reseller will see one product before it is saved; its versions, each restorable."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from berth.domain.catalog import Catalog, Product
from berth.domain.connections import Connection
from berth.domain.contracts import ALL, Contract, contract_product, parse_contract
from berth.domain.errors import BadRequest, OctoError
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, editor_form, staff

router = APIRouter(route_class=PageRoute)
BLANK_ROWS = 3  # empty price list rows offered for new entries
NET_PRICE_FIELDS = ("product", "option", "unit", "currency", "net", "from", "until")


@dataclass(frozen=True)
class PreviewRow:
    option: str
    unit: str
    currency: str
    retail: int
    net: int | None
    catalogue_net: int | None
    precision: int


def _preview(
    catalog: Catalog, contract: Contract, product_id: str
) -> tuple[Product | None, list[PreviewRow]]:
    """`product_id`'s unit prices as the reseller would buy them under `contract`."""
    product = catalog.product(product_id)
    sold = contract_product(product, contract) if product is not None else None
    rows = []
    for option in sold.options if sold is not None else ():
        for unit in option.units:
            for price in unit.prices:
                if price.valid_from or price.valid_until:
                    continue
                base = product.option(option.id) if product is not None else None
                base_unit = base.unit(unit.id) if base is not None else None
                catalogue = next(
                    (p.net for p in (base_unit.prices if base_unit else ()) if p.currency == price.currency),
                    None,
                )
                rows.append(
                    PreviewRow(
                        option.id, unit.id, price.currency, price.retail, price.net, catalogue,
                        price.currency_precision,
                    )
                )  # fmt: skip
    return sold, rows


def _document(form: FormData) -> dict[str, Any]:
    """The contract the form describes (parse_contract checks it)."""
    document: dict[str, Any] = {}
    if form.get("products") == "LIST":
        chosen = [str(p) for p in form.getlist("product")]
        grants = []
        for product_id in chosen:
            options = [str(o) for o in form.getlist(f"options:{product_id}")]
            all_options = form.get(f"all_options:{product_id}") == "1"
            grants.append(
                {"product": product_id, **({} if all_options or not options else {"options": options})}
            )
        document["products"] = grants
    else:
        document["products"] = ALL
    rate: dict[str, Any] = {}
    commission = str(form.get("commission") or "").strip().rstrip("%").strip()
    if commission:
        try:
            rate["commission"] = str(Decimal(commission.replace(",", ".")))
        except InvalidOperation:
            raise BadRequest(f"rate.commission: {commission!r} is not a percentage") from None
    rows = zip(*(form.getlist(f"np_{name}") for name in NET_PRICE_FIELDS), strict=True)
    entries = []
    for row in rows:
        values = dict(zip(NET_PRICE_FIELDS, (str(v).strip() for v in row), strict=True))
        if not values["product"] and not values["net"]:
            continue
        entries.append({key: value for key, value in values.items() if value})
    if entries:
        rate["netPrices"] = entries
    document["rate"] = rate
    for field, key in (("valid_from", "validFrom"), ("valid_until", "validUntil")):
        value = str(form.get(field) or "").strip()
        if value:
            document[key] = value
    document["paymentTerms"] = str(form.get("payment_terms") or "MONTHLY_INVOICE")
    document["notes"] = str(form.get("notes") or "")
    return document


async def _page(
    request: Request,
    me: Staff,
    connection: Connection,
    *,
    contract: Contract | None = None,
    preview_of: str | None = None,
    error: str | None = None,
    base_version: int | None = None,
) -> Response:
    catalog = me.catalog.catalog
    shown = contract or connection.contract
    product_id = preview_of or (catalog.products[0].id if catalog.products else "")
    sold, preview = _preview(catalog, shown, product_id)
    return page(
        request,
        "contract.html",
        me,
        section="connections",
        status_code=400 if error else 200,
        connection=connection,
        contract=shown,
        granted=None if isinstance(shown.products, str) else {g.product: g for g in shown.products},
        catalog=catalog,
        versions=await me.services.contracts.versions(connection.id),
        base_version=connection.contract_version if base_version is None else base_version,
        preview_product=product_id,
        preview_sold=sold is not None,
        preview=preview,
        blank_rows=BLANK_ROWS,
        unsaved=contract is not None,
        error=error,
    )


@router.get("/connections/{connection_id}/contract")
async def contract_page(request: Request, connection_id: str, me: Staff = Depends(staff)) -> Response:
    connection = await me.services.contracts.get(connection_id)
    preview_of = request.query_params.get("preview")
    return await _page(request, me, connection, preview_of=preview_of)


@router.post("/connections/{connection_id}/contract")
async def save_contract(request: Request, connection_id: str, me: Staff = Depends(editor_form)) -> Response:
    connection = await me.services.contracts.get(connection_id)
    form = await request.form()
    base = str(form.get("base_version") or "")
    base_version = int(base) if base.isdigit() else None
    try:
        document = _document(form)
        contract = parse_contract(document)
    except OctoError as exc:
        return await _page(request, me, connection, error=exc.message, base_version=base_version)
    if form.get("action") == "preview":
        return await _page(
            request, me, connection, contract=contract, preview_of=str(form.get("preview") or ""),
            base_version=base_version,
        )  # fmt: skip
    try:
        saved = await me.services.contracts.save(
            connection.id, document, base_version=base_version, actor=me.actor
        )
    except OctoError as exc:
        return await _page(
            request, me, connection, contract=contract, error=exc.message, base_version=base_version
        )
    notice = Notice("success", f"Contract of {connection.name} saved as version {saved.version}.")
    return redirect(f"/admin/connections/{connection.id}/contract", me, notice)


@router.post("/connections/{connection_id}/contract/versions/{version}/restore")
async def restore_contract(connection_id: str, version: int, me: Staff = Depends(editor_form)) -> Response:
    saved = await me.services.contracts.restore(connection_id, version, actor=me.actor)
    notice = Notice("success", f"Version {version} restored as version {saved.version}.")
    return redirect(f"/admin/connections/{saved.connection.id}/contract", me, notice)
