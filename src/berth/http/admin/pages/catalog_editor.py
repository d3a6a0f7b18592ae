"""Editing the catalogue in the back office: a product's form (the core fields, then each
capability's part), the product as YAML, the supplier; a preview of what a save changes (the
dry run of `berth catalog import`); the history of versions, each against the one before, and
restoring one. Every save is an import of the whole catalogue through the editor's door, based
on the version the form was made from."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from berth.capabilities.registry import EDITOR_PARTS
from berth.domain.catalog import (
    Catalog,
    ContactField,
    DeliveryFormat,
    DeliveryMethod,
    DurationUnit,
    UnitType,
    Weekday,
)
from berth.domain.catalog.document import CatalogFileError, read_yaml, to_yaml
from berth.domain.catalog.model import AvailabilityType, PricingPer, RedemptionMethod
from berth.domain.catalog_changes import ImportRefused
from berth.domain.catalog_history import CatalogConflict, Door
from berth.domain.errors import BadRequest, NotFound
from berth.http.admin.pages.catalog_form import (
    FIELD_LABELS,
    Document,
    FieldProblems,
    ProductForm,
    Shown,
    as_hours,
    as_list,
    as_text,
    dump_yaml,
    field_id,
    money,
    part_yaml,
    product_problems,
    reading_problems,
    shown,
    tax_amount,
)
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, editor_form, staff
from berth.services.catalog import ImportOutcome
from berth.views.catalog_changes import changes_lines, conflict_lines, net_lines

router = APIRouter(route_class=PageRoute)
HISTORY_PAGE = 30
# The file's values as staff say them (the others: capitalised, `START_TIME` -> `Start time`).
VALUE_LABELS = {
    "PDF_URL": "PDF ticket (attached to emails, linked in OCTO)",
    "PKPASS_URL": "Apple Wallet pass",
    "QRCODE": "QR code",
    "CODE128": "Code 128 barcode",
    "AZTECCODE": "Aztec code",
    "START_TIME": "Departures at set times",
    "OPENING_HOURS": "Opening hours (a day ticket)",
}


def _document(catalog: Catalog) -> Document:
    return catalog.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def _new_product(catalog: Catalog) -> Document:
    zone = catalog.products[0].time_zone if catalog.products else "Europe/London"
    return {
        "id": "",
        "internalName": "",
        "timeZone": zone,
        "availabilityType": "START_TIME",
        "deliveryFormats": ["QRCODE", "PDF_URL"],
        "deliveryMethods": ["TICKET"],
        "options": [],
    }


def _stored_product(me: Staff, product_id: str) -> tuple[int, Document]:
    for index, product in enumerate(me.catalog.catalog.products):
        if product.id == product_id:
            return index, product.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    raise NotFound(f"The catalogue has no product {product_id!r}")


def _choices() -> dict[str, Any]:
    return {
        "availability_types": [t.value for t in AvailabilityType],
        "delivery_formats": [f.value for f in DeliveryFormat],
        "delivery_methods": [m.value for m in DeliveryMethod],
        "redemption_methods": [m.value for m in RedemptionMethod],
        "pricing_per": [p.value for p in PricingPer],
        "duration_units": [u.value for u in DurationUnit],
        "unit_types": [t.value for t in UnitType],
        "weekdays": [d.value for d in Weekday],
        "contact_fields": [c.value for c in ContactField],
        "value_labels": VALUE_LABELS,
    }


def _refusal(exc: ImportRefused | None) -> dict[str, list[str] | None]:
    """What a page says of a refused save: the live bookings in the way, and the contract nets
    it puts above the retail (each only when it is why the save was refused)."""
    return {
        "refused": list(conflict_lines(exc.changes.conflicts)) if exc and exc.bookings else None,
        "refused_nets": list(net_lines(exc.changes.nets_above_retail)) if exc and exc.nets else None,
    }


def _editor_page(
    request: Request,
    me: Staff,
    doc: Document,
    *,
    base_version: int,
    product_id: str | None,
    problems: FieldProblems | None = None,
    outcome: ImportOutcome | None = None,
    refused: ImportRefused | None = None,
    conflict: CatalogConflict | None = None,
    status_code: int = 200,
) -> Response:
    return page(
        request,
        "catalog_edit.html",
        me,
        section="catalog",
        status_code=status_code,
        doc=shown(doc),
        blank=Shown(),
        product_id=product_id,
        base_version=base_version,
        problems=problems or FieldProblems(),
        preview=changes_lines(outcome.changes) if outcome else None,
        **_refusal(refused),
        refused_count=refused.changes.affected_bookings if refused else 0,
        conflict=conflict,
        product_parts=[p for p in EDITOR_PARTS if p.level == "product"],
        option_parts=[p for p in EDITOR_PARTS if p.level == "option"],
        part_yaml=part_yaml,
        amount=money,
        text=as_text,
        listed=as_list,
        hours=as_hours,
        tax_amount=tax_amount,
        fid=field_id,
        labels=FIELD_LABELS,
        **_choices(),
    )


@router.get("/catalog/new")
async def new_product(request: Request, me: Staff = Depends(staff)) -> Response:
    doc = _new_product(me.catalog.catalog)
    return _editor_page(request, me, doc, base_version=me.catalog.version, product_id=None)


@router.post("/catalog/new")
async def add_product(request: Request, me: Staff = Depends(editor_form)) -> Response:
    form = await request.form()
    reader = ProductForm(form, {}, EDITOR_PARTS)
    return await _save_product(request, me, form, reader, None)


@router.get("/catalog/{product_id}/edit")
async def edit_product(product_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    _, doc = _stored_product(me, product_id)
    return _editor_page(request, me, doc, base_version=me.catalog.version, product_id=product_id)


@router.post("/catalog/{product_id}/edit")
async def save_product(product_id: str, request: Request, me: Staff = Depends(editor_form)) -> Response:
    form = await request.form()
    _, stored = _stored_product(me, product_id)
    return await _save_product(request, me, form, ProductForm(form, stored, EDITOR_PARTS), product_id)


def _base_version(form: FormData) -> int:
    value = form.get("base_version")
    if not isinstance(value, str) or not value.isdigit():
        raise BadRequest("The form does not say which catalogue version it was made from; open it again")
    return int(value)


async def _save_product(
    request: Request, me: Staff, form: FormData, reader: ProductForm, product_id: str | None
) -> Response:
    base_version = _base_version(form)
    doc = reader.document()
    if reader.problems:
        problems = reading_problems(reader.problems, doc)
        return _editor_page(
            request,
            me,
            doc,
            base_version=base_version,
            product_id=product_id,
            problems=problems,
            status_code=400,
        )
    action = str(form.get("action", "preview"))
    if action == "save" and product_id is not None and doc == reader.stored:
        return redirect(f"/admin/catalog/{quote(product_id, safe='')}", me, _unchanged(base_version))
    catalog = _document(me.catalog.catalog)
    products = list(catalog.get("products", []))
    index = next((i for i, p in enumerate(products) if p.get("id") == product_id), len(products))
    products[index : index + 1] = [doc]
    catalog["products"] = products
    try:
        outcome = await _import(me, catalog, base_version, action, cap_nets=_cap_nets(form))
    except CatalogFileError as exc:
        problems = product_problems(exc, index, doc)
        return _editor_page(
            request,
            me,
            doc,
            base_version=base_version,
            product_id=product_id,
            problems=problems,
            status_code=400,
        )
    except ImportRefused as exc:
        return _editor_page(
            request, me, doc, base_version=base_version, product_id=product_id, refused=exc, status_code=409
        )
    except CatalogConflict as exc:
        return _editor_page(
            request, me, doc, base_version=base_version, product_id=product_id, conflict=exc, status_code=409
        )
    if outcome.version is None:
        return _editor_page(
            request, me, doc, base_version=base_version, product_id=product_id, outcome=outcome
        )
    saved = str(doc.get("id", ""))
    return redirect(f"/admin/catalog/{quote(saved, safe='')}", me, _saved_notice(outcome))


def _cap_nets(form: FormData) -> bool:
    """Staff chose to sell contracts' nets the save puts above the retail at the retail."""
    return form.get("cap_nets") == "1"


async def _import(
    me: Staff, catalog: Document, base_version: int, action: str, *, cap_nets: bool = False
) -> ImportOutcome:
    """Preview (`action` preview), save, or save over live bookings (force: admins only, as the
    catalogue service checks for every door); `cap_nets`: staff chose to sell contracts' nets
    the save puts above the retail at the retail."""
    text = to_yaml(catalog)
    return await me.services.catalog.import_text(
        text,
        actor=me.actor,
        door=Door.EDITOR,
        dry_run=action == "preview",
        force=action == "force",
        cap_nets=cap_nets,
        base_version=base_version,
    )


def _unchanged(base_version: int) -> Notice:
    return Notice("success", f"Nothing changed: catalogue version {base_version} stays as it is.")


def _saved_notice(outcome: ImportOutcome) -> Notice:
    forced = f" over {outcome.changes.affected_bookings} live booking(s)" if outcome.changes.conflicts else ""
    return Notice("success", f"Saved as catalogue version {outcome.version}{forced}.")


# --- the product as YAML, and the supplier -------------------------------------------------------


@router.get("/catalog/{product_id}/yaml")
async def product_yaml(product_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    _, doc = _stored_product(me, product_id)
    return _yaml_page(request, me, product_id, dump_yaml(doc), me.catalog.version)


def _yaml_page(
    request: Request,
    me: Staff,
    product_id: str,
    text: str,
    base_version: int,
    status_code: int = 200,
    **context: Any,
) -> Response:
    context.setdefault("problems", [])
    context.setdefault("preview", None)
    context.update({**_refusal(None), **context})
    context.setdefault("conflict", None)
    return page(
        request,
        "catalog_yaml.html",
        me,
        section="catalog",
        status_code=status_code,
        product_id=product_id,
        text=text,
        base_version=base_version,
        **context,
    )


@router.post("/catalog/{product_id}/yaml")
async def save_product_yaml(product_id: str, request: Request, me: Staff = Depends(editor_form)) -> Response:
    form = await request.form()
    base_version = _base_version(form)
    text = str(form.get("document", ""))
    index, stored = _stored_product(me, product_id)
    try:
        doc = read_yaml(text)
    except CatalogFileError as exc:
        return _yaml_page(
            request, me, product_id, text, base_version, 400, problems=[str(p) for p in exc.problems]
        )
    if not isinstance(doc, dict):
        problems = ["The product must be a mapping of its fields (id, internalName, options, …)"]
        return _yaml_page(request, me, product_id, text, base_version, 400, problems=problems)
    if str(form.get("action")) == "save" and doc == stored:
        return redirect(f"/admin/catalog/{quote(product_id, safe='')}", me, _unchanged(base_version))
    catalog = _document(me.catalog.catalog)
    catalog["products"][index] = doc
    try:
        action = str(form.get("action", "preview"))
        outcome = await _import(me, catalog, base_version, action, cap_nets=_cap_nets(form))
    except CatalogFileError as exc:
        own = f"products[{index}]"
        problems = [
            f"{p.path[len(own) :].lstrip('.') or 'the product'}: {p.message}"
            if p.path.startswith(own)
            else f"{p.path}: {p.message}"
            for p in exc.problems
        ]
        return _yaml_page(request, me, product_id, text, base_version, 400, problems=problems)
    except ImportRefused as exc:
        return _yaml_page(request, me, product_id, text, base_version, 409, **_refusal(exc))
    except CatalogConflict as exc:
        return _yaml_page(request, me, product_id, text, base_version, 409, conflict=exc)
    if outcome.version is None:
        return _yaml_page(request, me, product_id, text, base_version, preview=changes_lines(outcome.changes))
    saved = str(doc.get("id", product_id))
    return redirect(f"/admin/catalog/{quote(saved, safe='')}", me, _saved_notice(outcome))


@router.get("/catalog/supplier")
async def supplier(request: Request, me: Staff = Depends(staff)) -> Response:
    doc = me.catalog.catalog.supplier.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return _supplier_page(request, me, doc, me.catalog.version)


def _supplier_page(
    request: Request, me: Staff, doc: Document, base_version: int, status_code: int = 200, **context: Any
) -> Response:
    context.setdefault("problems", [])
    context.setdefault("conflict", None)
    return page(
        request,
        "catalog_supplier.html",
        me,
        section="catalog",
        status_code=status_code,
        doc=shown(doc),
        contact=shown(doc.get("contact") or {}),
        content=dump_yaml(doc.get("content")),
        base_version=base_version,
        **context,
    )


@router.post("/catalog/supplier")
async def save_supplier(request: Request, me: Staff = Depends(editor_form)) -> Response:
    form = await request.form()
    base_version = _base_version(form)
    stored = me.catalog.catalog.supplier.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    doc = dict(stored)
    reader = ProductForm(form, {}, ())
    for key in ("name", "reference"):
        value = reader.text(key)
        if value:
            doc[key] = value
        else:
            doc.pop(key, None)
    contact = {key: reader.text(f"contact.{key}") for key in ("website", "email", "telephone", "address")}
    doc["contact"] = {key: value for key, value in contact.items() if value}
    problems: list[str] = []
    try:
        content = read_yaml(reader.text("content")) if reader.text("content") else None
    except CatalogFileError as exc:
        content = None
        problems = [f"Content per language: {p}" for p in exc.problems]
    doc["content"] = content or {}
    if problems:
        return _supplier_page(request, me, doc, base_version, 400, problems=problems)
    if {key: value for key, value in doc.items() if value} == stored:
        return redirect("/admin/catalog", me, _unchanged(base_version))
    catalog = _document(me.catalog.catalog)
    catalog["supplier"] = doc
    try:
        outcome = await _import(me, catalog, base_version, "save")
    except CatalogFileError as exc:
        words = [f"{FIELD_LABELS.get(p.path.rsplit('.', 1)[-1], p.path)}: {p.message}" for p in exc.problems]
        return _supplier_page(request, me, doc, base_version, 400, problems=words)
    except CatalogConflict as exc:
        return _supplier_page(request, me, doc, base_version, 409, conflict=exc)
    return redirect("/admin/catalog", me, _saved_notice(outcome))


# --- history and restore ---------------------------------------------------------------------------


@router.get("/catalog/history")
async def history(request: Request, before: int | None = None, me: Staff = Depends(staff)) -> Response:
    versions = await me.services.catalog.versions(limit=HISTORY_PAGE + 1, before=before)
    more = len(versions) > HISTORY_PAGE
    shown = versions[:HISTORY_PAGE]
    return page(
        request,
        "catalog_history.html",
        me,
        section="catalog",
        versions=shown,
        current=me.catalog.version,
        older=shown[-1].version if more and shown else None,
    )


@router.get("/catalog/history/{version}.yaml")
async def version_yaml(version: int, me: Staff = Depends(staff)) -> Response:
    _, document = await me.services.catalog.version_document(version)
    return Response(
        document,
        media_type="application/yaml",
        headers={
            "Content-Disposition": f'attachment; filename="catalog-v{version}.yaml"',
            "Cache-Control": "no-store",
        },
    )


@router.get("/catalog/history/{version}")
async def version_page(version: int, request: Request, me: Staff = Depends(staff)) -> Response:
    return await _version_page(request, me, version)


async def _version_page(
    request: Request, me: Staff, version: int, status_code: int = 200, **context: Any
) -> Response:
    diff = await me.services.catalog.version_diff(version)
    context.setdefault("preview", None)
    context.update({**_refusal(None), **context})
    context.setdefault("problems", [])
    return page(
        request,
        "catalog_version.html",
        me,
        section="catalog",
        status_code=status_code,
        diff=diff,
        current=me.catalog.version,
        **context,
    )


@router.post("/catalog/history/{version}/restore")
async def restore(version: int, request: Request, me: Staff = Depends(editor_form)) -> Response:
    form = await request.form()
    action = str(form.get("action", "preview"))
    try:
        outcome = await me.services.catalog.restore(
            version,
            actor=me.actor,
            door=Door.EDITOR,
            dry_run=action == "preview",
            force=action == "force",
            cap_nets=_cap_nets(form),
        )
    except CatalogFileError as exc:
        return await _version_page(request, me, version, 400, problems=[str(p) for p in exc.problems])
    except ImportRefused as exc:
        return await _version_page(request, me, version, 409, **_refusal(exc))
    if outcome.version is None:
        return await _version_page(request, me, version, preview=changes_lines(outcome.changes))
    notice = Notice("success", f"Version {version} restored as catalogue version {outcome.version}.")
    return redirect("/admin/catalog/history", me, notice)
