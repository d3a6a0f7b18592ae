"""Gift vouchers in the back office: the search (a code as typed, a reference, the buyer, the
recipient, the status, the days sold), a gift's page (its details, its ledger, its emails, and
the cancel form for operators and admins), and the monthly report of the liability per
currency, as a page and CSV. Every role reads them."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import UTC
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from berth.domain.errors import BadRequest
from berth.domain.gifts import GiftDetails, GiftStatus, MovementKind
from berth.domain.statements import Month
from berth.http.admin.exports import csv_download
from berth.http.admin.gifts import gift_search, staff_gift
from berth.http.admin.pages.dates import of_supplier
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, operator_form, staff
from berth.http.types import MAX_OFFSET
from berth.views.gifts import liability_csv

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 50
MOVEMENTS = {
    MovementKind.ISSUE: "Issued",
    MovementKind.REDEMPTION: "Paid a booking",
    MovementKind.REVERSAL: "Given back (booking cancelled)",
    MovementKind.EXPIRY: "Expired",
    MovementKind.CANCELLATION: "Cancelled",
}


@dataclass(frozen=True)
class Form:
    """The Gifts page's search as typed: blank means any."""

    code: str = ""
    buyer: str = ""
    recipient: str = ""
    status: str = ""
    start: str = ""
    end: str = ""

    @property
    def active(self) -> bool:
        return any(asdict(self).values())

    def page_url(self, number: int) -> str:
        fields = {
            **asdict(self),
            "from": self.start,
            "to": self.end,
            "page": str(number) if number > 1 else "",
        }
        query = {k: v for k, v in fields.items() if v and k not in ("start", "end")}
        return "/admin/gifts" + ("?" + urlencode(query) if query else "")


@router.get("/gifts")
async def gifts_page(
    request: Request,
    code: str = "",
    buyer: str = "",
    recipient: str = "",
    status: str = "",
    start: str = Query(default="", alias="from"),
    end: str = Query(default="", alias="to"),
    page_number: int = Query(default=1, ge=1, le=MAX_OFFSET // PAGE_SIZE, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    form = Form(code.strip(), buyer.strip(), recipient.strip(), status.strip(), start.strip(), end.strip())
    problem: str | None = None
    found: list[GiftDetails] = []
    total = 0
    try:
        search = gift_search(form.code, form.buyer, form.recipient, form.status, form.start, form.end)
        found, total = await me.services.gifts.search(search, PAGE_SIZE, (page_number - 1) * PAGE_SIZE)
    except BadRequest as exc:
        problem = exc.message + "."
    names = {c.id: c.name for c in await me.services.connections.list()}
    return page(
        request,
        "gifts.html",
        me,
        section="gifts",
        local=of_supplier(me.catalog.catalog),
        form=form,
        problem=problem,
        gifts=found,
        total=total,
        page_number=page_number,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        page_size=PAGE_SIZE,
        statuses={s.value: s.value.replace("_", " ").capitalize() for s in GiftStatus},
        channels=names,
        now=me.services.clock(),
        outstanding=await me.services.gifts.outstanding_by_currency(),
    )


def _month(text: str, me: Staff) -> Month:
    """The month asked for (YYYY-MM), or this month in UTC."""
    return Month.parse(text.strip()) if text.strip() else Month.of(me.services.clock().astimezone(UTC).date())


@router.get("/gift-report")
async def gift_report_page(request: Request, month: str = "", me: Staff = Depends(staff)) -> Response:
    try:
        period = _month(month, me)
    except BadRequest as exc:
        return redirect("/admin/gift-report", me, Notice("error", exc.message))
    previous = Month(period.year - 1, 12) if period.month == 1 else Month(period.year, period.month - 1)
    return page(
        request,
        "gift_report.html",
        me,
        section="gifts",
        month=period,
        previous=previous,
        following=period.next,
        lines=await me.services.gifts.liability(period.starts_at(), period.next.starts_at()),
    )


@router.get("/gift-report.csv")
async def gift_report_csv(month: str = "", me: Staff = Depends(staff)) -> Response:
    try:
        period = _month(month, me)
    except BadRequest as exc:
        return redirect("/admin/gift-report", me, Notice("error", f"Nothing exported: {exc.message}"))
    lines = await me.services.gifts.liability(period.starts_at(), period.next.starts_at())
    return csv_download(liability_csv(period, lines), f"gifts-{period}.csv")


@router.get("/gifts/{gift_id}")
async def gift_page(gift_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    details = await staff_gift(me.services, gift_id)
    now = me.services.clock()
    connection = next(
        (c for c in await me.services.connections.list() if c.id == details.gift.connection_id), None
    )
    return page(
        request,
        "gift.html",
        me,
        section="gifts",
        local=of_supplier(me.catalog.catalog),
        details=details,
        gift=details.gift,
        status=details.gift.status_at(now).value,
        cancellable=details.gift.status_at(now) in (GiftStatus.ON_HOLD, GiftStatus.CONFIRMED),
        connection=connection,
        movements=MOVEMENTS,
        messages=await me.services.mail.messages_of_gift(gift_id),
    )


@router.post("/gifts/{gift_id}/cancel")
async def cancel_gift(gift_id: str, request: Request, me: Staff = Depends(operator_form)) -> Response:
    form = await request.form()
    reason = str(form.get("reason") or "").strip()[:1000] or None
    details = await staff_gift(me.services, gift_id)
    cancelled = await me.services.gifts.staff_cancel(gift_id, reason, actor=me.actor)
    said = f"Gift voucher {details.gift.supplier_reference} is cancelled."
    if cancelled.gift.amount and details.gift.confirmed_at is not None:
        said += " What the buyer paid is not refunded by Berth: refund it by hand."
    return redirect(f"/admin/gifts/{gift_id}", me, Notice("success", said))
