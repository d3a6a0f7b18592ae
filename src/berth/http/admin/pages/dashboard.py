"""The dashboard: today's and tomorrow's slots with their occupancy, what needs a decision (refunds
that failed among them), this month's net sales per channel (from their statements: the resellers,
the web shop, the box office), what the gift vouchers still hold per currency (the liability), and two charts: bookings per day over
the last 30 days by reseller, and the next 14 days' occupancy by product."""

from __future__ import annotations

from datetime import date, timedelta

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.domain.bookings import BookingStatus
from berth.domain.statements import Month, Statement
from berth.http.admin.backoffice import coming_days, confirmations_by_day, occupancy_by_day
from berth.http.admin.pages.charts import Chart, Series, ShareRow, share_rows, stacked_bars
from berth.http.admin.pages.dates import Local, of_supplier
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff
from berth.store.bookings_reads import BookingFilter

router = APIRouter(route_class=PageRoute)
BOOKING_DAYS = 30
OCCUPANCY_DAYS = 14


def _short(day: date) -> str:
    """`2 Jun`: a day under a bar."""
    return f"{day.day} {day:%b}"


async def bookings_chart(me: Staff, local: Local) -> Chart:
    first, counts = await confirmations_by_day(me.services, local.tz, BOOKING_DAYS)
    names = {c.id: c.name for c in await me.services.connections.list()}
    days = [_short(first + timedelta(days=i)) for i in range(BOOKING_DAYS)]
    series = [Series(names.get(key, key), tuple(values)) for key, values in counts.items()]
    return stacked_bars(
        days, series, title=f"Bookings confirmed per day, last {BOOKING_DAYS} days, by reseller"
    )


async def occupancy_chart(me: Staff, local: Local) -> Chart:
    today = me.services.clock().astimezone(local.tz).date()
    days = [_short(today + timedelta(days=i)) for i in range(OCCUPANCY_DAYS)]
    rows = [
        ShareRow(product.internal_name, tuple(await occupancy_by_day(me.services, product, OCCUPANCY_DAYS)))
        for product in me.catalog.catalog.products
    ]
    return share_rows(days, rows, title=f"Places sold, next {OCCUPANCY_DAYS} days, by product", label_every=2)


async def net_sales(me: Staff, local: Local) -> tuple[Month, list[Statement]]:
    """This month's statement (in the supplier's time zone) of every connection that sold in it."""
    month = Month.of(me.services.clock().astimezone(local.tz).date())
    return month, await me.services.statements.sold_in(me.catalog.catalog, month)


@router.get("")
async def dashboard(request: Request, me: Staff = Depends(staff)) -> Response:
    catalog = me.catalog.catalog
    local = of_supplier(catalog)
    days = await coming_days(me.services, catalog)
    _, pending = await me.services.staff_bookings.search(
        catalog, BookingFilter(status=BookingStatus.PENDING.value), limit=1, offset=0
    )
    waiting = sum(c.pending for c in await me.services.mappings.counts())
    month, sales = await net_sales(me, local)
    failed_refunds, since = await me.services.ledger.failed_refunds()
    return page(
        request,
        "dashboard.html",
        me,
        section="dashboard",
        days=days,
        pending=pending,
        waiting=waiting,
        month=month,
        sales=sales,
        failed_refunds=failed_refunds,
        gifts_outstanding=await me.services.gifts.outstanding_by_currency(),
        failed_refunds_url=f"/admin/payments?from={since:%Y-%m-%d}&type=refund&status=failed",
        bookings_chart=await bookings_chart(me, local),
        occupancy_chart=await occupancy_chart(me, local) if catalog.products else None,
    )
