"""The payments ledger for staff: every payment and refund with its filters, totals and CSV
export (to reconcile with Stripe's balance and payout reports), and the monthly sales report per
channel: the money each took, and what each sold as its statement counts it. Every staff role reads them; times are UTC, as
Stripe's reports write them."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from berth.domain.calendar import out_of_range, supported
from berth.domain.errors import BadRequest
from berth.domain.ledger import ChannelLine, Kind, channel_lines, currency_totals, sold_totals
from berth.domain.payments import PaymentStatus, RefundStatus
from berth.domain.statements import Month
from berth.http.admin.exports import csv_download, file_name
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, staff
from berth.http.types import MAX_OFFSET
from berth.store.ledger_repo import LedgerFilter
from berth.views.ledger import movements_csv, sales_csv

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 50
METHODS = {"card": "Card (Stripe)", "cash": "Cash", "card_terminal": "Card terminal"}
TYPES = {"payment": "Payments", "refund": "Refunds"}
# A movement's status: a payment's or a refund's, as the ledger keeps them.
STATUSES = tuple(dict.fromkeys([*(s.value for s in PaymentStatus), *(s.value for s in RefundStatus)]))


def _day(text: str, what: str) -> date | str:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        return f"{what} {text!r} is not a date like 2026-06-02."
    return day if supported(day) else out_of_range(what, day) + "."


@dataclass(frozen=True)
class Search:
    """The payments page's form as sent: every field optional, blank meaning 'any'."""

    start: str = ""  # first day, UTC
    end: str = ""  # last day, UTC
    channel: str = ""
    method: str = ""
    type: str = ""
    status: str = ""
    currency: str = ""
    q: str = ""

    def to_filter(self) -> LedgerFilter | str:
        """The filter, or what is wrong with the form."""
        moved_from = moved_before = None
        if self.start:
            first = _day(self.start, "The first day")
            if isinstance(first, str):
                return first
            moved_from = datetime.combine(first, time(), UTC)
        if self.end:
            last = _day(self.end, "The last day")
            if isinstance(last, str):
                return last
            moved_before = datetime.combine(last + timedelta(days=1), time(), UTC)
        if moved_from and moved_before and moved_before <= moved_from:
            return "The last day is before the first day."
        if self.method and self.method not in METHODS:
            return f"{self.method!r} is not a way of paying."
        if self.type and self.type not in {k.value for k in Kind}:
            return f"{self.type!r} is neither a payment nor a refund."
        if self.status and self.status not in STATUSES:
            return f"{self.status!r} is not a payment's or a refund's status."
        if self.currency and not (len(self.currency) == 3 and self.currency.isalpha()):
            return f"{self.currency!r} is not a currency code like EUR."
        return LedgerFilter(
            moved_from=moved_from,
            moved_before=moved_before,
            connection_id=self.channel or None,
            method=self.method or None,
            kind=Kind(self.type) if self.type else None,
            status=self.status or None,
            currency=self.currency.upper() or None,
            search=self.q or None,
        )

    @property
    def active(self) -> bool:
        return any(asdict(self).values())

    def _query(self, **more: str) -> str:
        query = {key: value for key, value in {**asdict(self), **more}.items() if value}
        return "?" + urlencode(query) if query else ""

    def csv_url(self) -> str:
        return "/admin/payments.csv" + self._query()

    def page_url(self, number: int) -> str:
        return "/admin/payments" + self._query(page=str(number) if number > 1 else "")


def _form(
    start: str, end: str, channel: str, method: str, kind: str, status: str, currency: str, q: str
) -> Search:
    return Search(
        start.strip(), end.strip(), channel, method, kind, status, currency.strip(), q.strip()[:255]
    )


async def _channels(me: Staff) -> dict[str, str]:
    return {c.id: c.name for c in await me.services.connections.list()}


@router.get("/payments")
async def payments_page(
    request: Request,
    start: str = Query(default="", alias="from"),
    end: str = Query(default="", alias="to"),
    channel: str = "",
    method: str = "",
    kind: str = Query(default="", alias="type"),
    status: str = "",
    currency: str = "",
    q: str = "",
    page_number: int = Query(default=1, ge=1, le=MAX_OFFSET // PAGE_SIZE, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    form = _form(start, end, channel, method, kind, status, currency, q)
    where = form.to_filter()
    found = None
    if isinstance(where, LedgerFilter):
        found = await me.services.ledger.page(where, PAGE_SIZE, (page_number - 1) * PAGE_SIZE)
    failed, since = await me.services.ledger.failed_refunds()
    total = found.total if found else 0
    return page(
        request,
        "payments.html",
        me,
        section="payments",
        form=form,
        problem=where if isinstance(where, str) else None,
        movements=found.movements if found else [],
        total=total,
        totals=currency_totals(found.sales) if found else [],
        page_number=page_number,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        page_size=PAGE_SIZE,
        channels=await _channels(me),
        methods=METHODS,
        statuses={s: s.replace("_", " ").capitalize() for s in STATUSES},
        types=TYPES,
        failed_refunds=failed,
        failed_url=Search(start=f"{since:%Y-%m-%d}", type="refund", status="failed").page_url(1),
        card_payments=me.services.payments.provider is not None,
    )


@router.get("/payments.csv")
async def payments_export(
    start: str = Query(default="", alias="from"),
    end: str = Query(default="", alias="to"),
    channel: str = "",
    method: str = "",
    kind: str = Query(default="", alias="type"),
    status: str = "",
    currency: str = "",
    q: str = "",
    me: Staff = Depends(staff),
) -> Response:
    """Every movement the form matches, oldest first, as CSV (streamed)."""
    form = _form(start, end, channel, method, kind, status, currency, q)
    where = form.to_filter()
    if isinstance(where, str):
        return redirect(form.page_url(1), me, Notice("error", f"Nothing exported: {where}"))
    name = file_name("payments", *(part for part in (form.start, form.end) if part)) + ".csv"
    return csv_download(movements_csv(me.services.ledger.export(where), await _channels(me)), name)


async def _report(me: Staff, month: Month, channels: dict[str, str]) -> list[ChannelLine]:
    """The month's lines by channel name and currency: money moved, and sold (the statements)."""
    sold = await me.services.statements.sold_in(me.catalog.catalog, month)
    lines = channel_lines(await me.services.ledger.sales(month), sold)
    return sorted(
        lines, key=lambda line: (channels.get(line.connection_id, line.connection_id), line.currency)
    )


def _month(text: str, me: Staff) -> Month:
    """The month asked for (YYYY-MM), or this month in UTC."""
    return Month.parse(text.strip()) if text.strip() else Month.of(me.services.clock().astimezone(UTC).date())


@router.get("/sales")
async def sales_page(request: Request, month: str = "", me: Staff = Depends(staff)) -> Response:
    try:
        period = _month(month, me)
    except BadRequest as exc:
        return redirect("/admin/sales", me, Notice("error", exc.message))
    channels = await _channels(me)
    lines = await _report(me, period, channels)
    moved = [line.moved for line in lines if line.moved is not None]
    previous = Month(period.year - 1, 12) if period.month == 1 else Month(period.year, period.month - 1)
    days = {"from": period.first.isoformat(), "to": period.last.isoformat()}
    return page(
        request,
        "sales.html",
        me,
        section="payments",
        month=period,
        previous=previous,
        following=period.next,
        sold=[line for line in lines if line.sold is not None],
        sold_totals=sold_totals(lines),
        lines=moved,
        totals=currency_totals(moved),
        channels=channels,
        basis=me.services.statements.basis.value,
        months=await me.services.ledger.months(),
        payments_url=lambda **more: "/admin/payments?" + urlencode({**days, "status": "succeeded", **more}),
    )


@router.get("/sales.csv")
async def sales_export(month: str = "", me: Staff = Depends(staff)) -> Response:
    try:
        period = _month(month, me)
    except BadRequest as exc:
        return redirect("/admin/sales", me, Notice("error", f"Nothing exported: {exc.message}"))
    channels = await _channels(me)
    lines = await _report(me, period, channels)
    return csv_download(sales_csv(period, lines, channels), f"sales-{period}.csv")
