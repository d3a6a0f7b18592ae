"""A connection's contract in the back office: read by every role; changed by editors and admins
as a form (products as a checklist, the rate, the net price list, the allotments and the
stop-sells as tables), previewed as the reseller will see one product before it is saved, with
every net of its price list that stands above the retail it applies to; its versions, each
restorable. The form edits a copy of the stored contract: it writes back only the fields it
shows."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from berth.domain.catalog import Catalog, Product
from berth.domain.connections import Connection
from berth.domain.contracts import ALL, Contract, contract_product, nets_above_retail, parse_contract
from berth.domain.errors import BadRequest, OctoError
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, editor_form, staff

router = APIRouter(route_class=PageRoute)
BLANK_ROWS = 3  # empty price list rows offered for new entries
NET_PRICE_FIELDS = ("product", "option", "unit", "currency", "net", "from", "until", "allowAboveRetail")
ALLOTMENT_FIELDS = (
    "product",
    "option",
    "from",
    "until",
    "weekdays",
    "start_times",
    "places",
    "release_hours",
)
STOP_SELL_FIELDS = ("product", "option", "from", "until", "reason")


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


def _rows(form: FormData, prefix: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    """A table's rows (`{prefix}_{field}` per column), the blank ones left out, each with only
    the cells filled in."""
    columns = [form.getlist(f"{prefix}_{name}") for name in fields]
    count = max(len(column) for column in columns)
    # A column the form does not have at all (a page opened before it was added) is blank.
    columns = [column or [""] * count for column in columns]
    if len({len(column) for column in columns}) > 1:
        raise BadRequest(f"The form's {prefix}_ table has rows of different lengths; reload the page")
    rows = []
    for row in zip(*columns, strict=True):
        values = {name: str(value).strip() for name, value in zip(fields, row, strict=True)}
        if any(values.values()):
            rows.append({name: value for name, value in values.items() if value})
    return rows


def _words(text: str) -> list[str]:
    """`MON, TUE` or `10:00 14:00` as a list."""
    return text.replace(",", " ").split()


def _allotment(row: dict[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        key: row[name]
        for name, key in (("product", "product"), ("option", "option"), ("from", "from"), ("until", "until"))
        if name in row
    }
    if "weekdays" in row:
        entry["weekdays"] = [day.upper() for day in _words(row["weekdays"])]
    if "start_times" in row:
        entry["startTimes"] = _words(row["start_times"])
    entry["places"] = row.get("places", "")
    entry["releaseHours"] = row.get("release_hours", "")
    return entry


def _put(document: dict[str, Any], key: str, value: Any) -> None:
    """Set `key`, or drop it when the form leaves it empty (the contract's default)."""
    if value in (None, "", [], {}):
        document.pop(key, None)
    else:
        document[key] = value


def _document(form: FormData, stored: Contract) -> dict[str, Any]:
    """The contract the form describes (parse_contract checks it): the stored contract with the
    fields the form shows replaced by the form's values. A field the form does not send keeps
    its stored value, so a part of the contract the form does not show is never lost."""
    document = stored.to_document()
    if "products" in form:
        if form.get("products") == "LIST":
            grants = []
            for product_id in (str(p) for p in form.getlist("product")):
                options = [str(o) for o in form.getlist(f"options:{product_id}")]
                all_options = form.get(f"all_options:{product_id}") == "1"
                grants.append(
                    {"product": product_id, **({} if all_options or not options else {"options": options})}
                )
            document["products"] = grants
        else:
            document["products"] = ALL
    rate: dict[str, Any] = dict(document.get("rate", {}))
    if "commission" in form:
        commission = str(form.get("commission") or "").strip().rstrip("%").strip()
        try:
            _put(rate, "commission", str(Decimal(commission.replace(",", "."))) if commission else None)
        except InvalidOperation:
            raise BadRequest(f"rate.commission: {commission!r} is not a percentage") from None
    if "np_product" in form:
        _put(rate, "netPrices", _rows(form, "np", NET_PRICE_FIELDS))
    _put(document, "rate", rate)
    if "al_product" in form:
        _put(document, "allotments", [_allotment(row) for row in _rows(form, "al", ALLOTMENT_FIELDS)])
    if "ss_product" in form:
        stop_sells = _rows(form, "ss", STOP_SELL_FIELDS)
        for row in stop_sells:  # `*`: every product (a row stopping everything is not blank)
            if row.get("product") == "*":
                del row["product"]
        _put(document, "stopSells", stop_sells)
    for field, key in (("valid_from", "validFrom"), ("valid_until", "validUntil")):
        if field in form:
            _put(document, key, str(form.get(field) or "").strip())
    for field, key in (("notes", "notes"), ("reseller_address", "resellerAddress")):
        if field in form:  # a browser sends a textarea's lines ended by CR LF
            _put(document, key, str(form.get(field) or "").replace("\r\n", "\n"))
    if "payment_terms" in form:
        document["paymentTerms"] = str(form.get("payment_terms") or "MONTHLY_INVOICE")
    if "sales" in form:
        _put(document, "boxOffice", form.get("sales") == "BOX_OFFICE" or None)
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
        above_retail=[str(found) for found in nets_above_retail(shown, catalog)],
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
        document = _document(form, connection.contract)
        contract = parse_contract(document)
    except OctoError as exc:
        return await _page(request, me, connection, error=exc.message, base_version=base_version)
    if form.get("action") == "preview":
        return await _page(
            request, me, connection, contract=contract, preview_of=str(form.get("preview") or ""),
            base_version=base_version,
        )  # fmt: skip
    if contract.digest == connection.contract.digest and base_version == connection.contract_version:
        said = f"Nothing changed: the contract of {connection.name} stays at version {base_version}."
        return redirect(f"/admin/connections/{connection.id}/contract", me, Notice("success", said))
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
