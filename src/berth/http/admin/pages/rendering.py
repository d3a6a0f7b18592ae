"""Rendering the back office's pages: the Jinja2 templates, their filters, and the responses
(every page is private: never cached, never framed, scripts and styles only from Berth)."""

from __future__ import annotations

from collections import Counter
from datetime import date
from decimal import Decimal
from typing import Any

from fastapi import Request
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from berth.domain.catalog import Product
from berth.http.admin.backoffice import guests
from berth.http.admin.pages.dates import DEFAULT_LOCALE, Local, abbreviation, of_product, of_supplier
from berth.http.admin.pages.navigation import NAVIGATION
from berth.http.admin.pages.session import COOKIE_PATH, NOTICE_COOKIE, Notice, Staff, set_notice, take_notice
from berth.http.admin.pages.static import static_url
from berth.read_models.bookings import BookingDetails
from berth.translations import currency_precision

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
    return f"{Decimal(amount).scaleb(-precision):,.{precision}f} {currency}"


def ledger_money(amount: int, currency: str) -> str:
    """An amount of the payments ledger, whose minor units are its currency's (ISO 4217)."""
    return money(amount, currency, currency_precision(currency))


def unit_summary(details: BookingDetails) -> str:
    """`2 x Adult, 1 x Child` (with a multiplication sign): unit items counted by unit."""
    counts = Counter(item.unit_id for item in details.booking.unit_items)
    parts = []
    for unit_id, count in counts.items():
        unit = details.option.unit(unit_id)
        parts.append(f"{count} \N{MULTIPLICATION SIGN} {unit.internal_name if unit else unit_id}")
    return ", ".join(parts)


def typed_day(local: Local, text: str) -> str:
    """A date typed as year-month-day, in the page's style (`Tue 2 Jun 2026`); "" if it is none."""
    try:
        return local.day(date.fromisoformat(text.strip()))
    except ValueError:
        return ""


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
    ledger_money=ledger_money,
    product_title=product_title,
    units=unit_summary,
    guests=guests,
    zone=abbreviation,
)
# Pages write times with `local` (the supplier's zone and locale unless the page is about one
# product) or `local_of(product)` for a row about one product.
templates.globals.update(navigation=NAVIGATION, static=static_url, local_of=of_product, typed_day=typed_day)


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
    if "local" not in context:
        context["local"] = of_supplier(staff.catalog.catalog) if staff else Local("UTC", DEFAULT_LOCALE)
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
