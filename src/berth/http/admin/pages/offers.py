"""The offers (octo/offers) in the back office: every role reads the list (code, discount, when
and for whom, live uses against the limit) and the versions; editors and admins change the
document as YAML, with a help panel of every key, check it without saving, save it (refused on a
stale version) and restore a version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.domain.catalog.document import to_yaml
from berth.domain.errors import Conflict, OctoError
from berth.domain.offers import ALL, SHOP, Offer, OffersDocument, catalog_problems, parse_offers
from berth.http.admin.offers import read_offers
from berth.http.admin.pages.dates import Local, of_supplier
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.offer_help import EXAMPLE, offer_keys
from berth.http.admin.pages.rendering import ledger_money, page, redirect
from berth.http.admin.pages.session import Notice, Staff, editor_form, staff

router = APIRouter(route_class=PageRoute)
PATH = "/admin/offers"


@dataclass(frozen=True)
class OfferRow:
    """One offer as the list writes it."""

    offer: Offer
    title: str
    discount: str
    sale: str
    travel: str
    channels: str
    uses: str


def _discount(offer: Offer) -> str:
    discount = offer.discount
    if discount.percent is not None:
        return f"{discount.percent.normalize():f} %"
    amounts = ", ".join(
        ledger_money(amount, currency) for currency, amount in (discount.amounts or {}).items()
    )
    return f"{amounts} per {discount.per.value.lower()}"


def _moment(local: Local, value: datetime) -> str:
    return local.moment(value if value.tzinfo else value.replace(tzinfo=UTC))  # no offset: UTC


def _window(start: str | None, end: str | None, always: str) -> str:
    if start and end:
        return f"{start} \N{EN DASH} {end}"
    if start or end:
        return f"from {start}" if start else f"until {end}"
    return always


def _row(offer: Offer, local: Local, names: dict[str, str], uses: int) -> OfferRow:
    sale = _window(
        _moment(local, offer.sale_from) if offer.sale_from else None,
        _moment(local, offer.sale_until) if offer.sale_until else None,
        "any time",
    )
    travel = _window(
        local.date(offer.travel_from) if offer.travel_from else None,
        local.date(offer.travel_until) if offer.travel_until else None,
        "any date",
    )
    if offer.weekdays:
        travel += ", " + " ".join(day.value.capitalize() for day in offer.weekdays)
    channels = (
        "all"
        if offer.channels == ALL
        else ", ".join("web shop" if c == SHOP else names.get(c, c) for c in offer.channels)
    )
    limit = f"{uses} of {offer.max_uses}" if offer.max_uses is not None else f"{uses} (no limit)"
    if offer.max_uses_per_email is not None:
        limit += f"; {offer.max_uses_per_email} per email"
    return OfferRow(offer, offer.text(None).title, _discount(offer), sale, travel, channels, limit)


def _problems(exc: OctoError) -> list[str]:
    """Each problem an error names (a document's errors list them all), else its message."""
    listed = exc.extra.get("problems")
    return [str(p) for p in listed] if isinstance(listed, list) and listed else [exc.message]


async def _page(
    request: Request,
    me: Staff,
    *,
    text: str | None = None,
    base_version: int | None = None,
    problems: list[str] | None = None,
    checked: int | None = None,
    status_code: int = 200,
) -> Response:
    """The page; with `text`, the editor shows what was typed (refused, or only checked)."""
    current = await me.services.offers.current()
    connections = await me.services.connections.list()
    uses = await me.services.offers.use_counts()
    local = of_supplier(me.catalog.catalog)
    names = {c.id: c.name for c in connections}
    return page(
        request,
        "offers.html",
        me,
        section="offers",
        status_code=status_code,
        local=local,
        current=current.version,
        rows=[_row(o, local, names, uses.get(o.id, 0)) for o in current.document.offers],
        text=_yaml(current.document) if text is None else text,
        typed=text is not None,
        base_version=current.version.version if base_version is None else base_version,
        problems=problems or [],
        checked=checked,
        versions=await me.services.offers.versions(),
        keys=offer_keys(),
        example=EXAMPLE,
        channels=[c for c in connections if c.active and c.id != current.shop_connection_id],
    )


def _yaml(document: OffersDocument) -> str:
    return to_yaml(document.to_document()) if document.offers else "offers: []\n"


@router.get("/offers")
async def offers_page(request: Request, me: Staff = Depends(staff)) -> Response:
    return await _page(request, me)


@router.post("/offers")
async def save_offers(request: Request, me: Staff = Depends(editor_form)) -> Response:
    form = await request.form()
    text = str(form.get("document") or "").replace("\r\n", "\n")  # a browser sends CR LF
    base = str(form.get("base_version") or "")
    if not base.isdigit():
        problems = ["The form does not say which version of the offers it was made from; open the page again"]
        return await _page(request, me, text=text, problems=problems, status_code=400)
    base_version = int(base)
    try:
        data = read_offers(text)
        document = parse_offers(data)
        if form.get("action") == "check":
            connection_ids = {c.id for c in await me.services.connections.list()}
            problems = catalog_problems(document, me.catalog.catalog, connection_ids)
            return await _page(
                request, me, text=text, base_version=base_version, problems=problems,
                checked=len(document.offers), status_code=400 if problems else 200,
            )  # fmt: skip
        current = (await me.services.offers.current()).version
        if document == current.document and base_version == current.version:
            said = f"Nothing changed: the offers stay at version {current.version}."
            return redirect(PATH, me, Notice("success", said))
        saved = await me.services.offers.save(data, base_version=base_version, actor=me.actor)
    except OctoError as exc:
        return await _page(
            request, me, text=text, base_version=base_version, problems=_problems(exc),
            status_code=409 if isinstance(exc, Conflict) else 400,
        )  # fmt: skip
    return redirect(PATH, me, Notice("success", f"Offers saved as version {saved.version}."))


@router.post("/offers/versions/{version}/restore")
async def restore_offers(request: Request, version: int, me: Staff = Depends(editor_form)) -> Response:
    try:
        saved = await me.services.offers.restore(version, actor=me.actor)
    except OctoError as exc:
        if exc.code == "NOT_FOUND":
            raise
        return await _page(request, me, problems=_problems(exc), status_code=400)
    return redirect(PATH, me, Notice("success", f"Version {version} restored as version {saved.version}."))
