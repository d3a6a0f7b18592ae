"""Rendering the back office's pages: the Jinja2 templates, their filters, and the responses
(every page is private: never cached, never framed, scripts and styles only from Berth)."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import Request
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from berth.domain.catalog import Product
from berth.http.admin.pages.navigation import NAVIGATION
from berth.http.admin.pages.session import COOKIE_PATH, NOTICE_COOKIE, Notice, Staff, set_notice, take_notice
from berth.http.admin.pages.static import static_url
from berth.services.bookings import BookingDetails

PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}


def money(amount: int | None, currency: str | None, precision: int = 2) -> str:
    if amount is None or currency is None:
        return "—"
    return f"{amount / 10**precision:,.{precision}f} {currency}"


def utc(value: datetime | str | None) -> str:
    """A UTC instant as staff read it: `2026-06-01 08:00 UTC`."""
    if value is None:
        return "—"
    moment = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    return moment.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%d %H:%M UTC")


def utc_seconds(value: datetime | str | None) -> str:
    """A UTC instant to the second (`2026-06-01 08:00:05 UTC`), where seconds tell things apart."""
    if value is None:
        return "—"
    moment = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    return moment.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%d %H:%M:%S UTC")


def day(value: date) -> str:
    return f"{value:%a} {value.day} {value:%b %Y}"


def clock(value: datetime) -> str:
    return f"{value:%H:%M}"


def unit_summary(details: BookingDetails) -> str:
    """`2 x Adult, 1 x Child` (with a multiplication sign): unit items counted by unit."""
    counts = Counter(item.unit_id for item in details.booking.unit_items)
    parts = []
    for unit_id, count in counts.items():
        unit = details.option.unit(unit_id)
        parts.append(f"{count} \N{MULTIPLICATION SIGN} {unit.internal_name if unit else unit_id}")
    return ", ".join(parts)


def product_title(product: Product) -> str:
    content = product.content.get(product.locale)
    return content.title if content is not None and content.title else product.internal_name


templates = Environment(
    loader=PackageLoader("berth.http.admin", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
templates.filters.update(
    money=money,
    utc=utc,
    utc_seconds=utc_seconds,
    day=day,
    clock=clock,
    product_title=product_title,
    units=unit_summary,
)
templates.globals.update(navigation=NAVIGATION, static=static_url)


def page(
    request: Request,
    template: str,
    staff: Staff | None,
    *,
    section: str | None = None,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    """A rendered page, with the notice the previous action left (shown once)."""
    notice = take_notice(request, staff.key if staff else None)
    html = templates.get_template(template).render(
        request=request, staff=staff, section=section, notice=notice, **context
    )
    response = HTMLResponse(html, status_code=status_code, headers=PAGE_HEADERS)
    if NOTICE_COOKIE in request.cookies:
        response.delete_cookie(NOTICE_COOKIE, path=COOKIE_PATH)
    return response


def redirect(path: str, staff: Staff | None = None, notice: Notice | None = None) -> Response:
    """See-other to `path`, leaving `notice` for the page it shows."""
    response = RedirectResponse(path, status_code=303, headers={"Cache-Control": "no-store"})
    if staff is not None and notice is not None:
        set_notice(response, staff.key, notice, secure=staff.secure)
    return response
