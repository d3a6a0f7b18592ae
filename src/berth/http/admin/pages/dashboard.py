"""The dashboard: today's and tomorrow's slots with their occupancy, and what needs a decision."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.domain.bookings import BookingStatus
from berth.http.admin.backoffice import coming_days
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff
from berth.store.bookings_repo import BookingFilter

router = APIRouter(route_class=PageRoute)


@router.get("")
async def dashboard(request: Request, me: Staff = Depends(staff)) -> Response:
    catalog = me.catalog.catalog
    days = await coming_days(me.services, catalog)
    _, pending = await me.services.staff_bookings.search(
        catalog, BookingFilter(status=BookingStatus.PENDING.value), limit=1, offset=0
    )
    waiting = sum(c.pending for c in await me.services.mappings.counts())
    return page(
        request, "dashboard.html", me, section="dashboard", days=days, pending=pending, waiting=waiting
    )
