"""The OCTO routes the direct dispatch answers (`berth.http.hot_routes`): the most polled and
the booking bursts. Each is declared once, beside its resource; FastAPI serves the same
declarations (`berth.http.octo.routing`)."""

from __future__ import annotations

from berth.http.octo.availability import CALENDAR, CHECK
from berth.http.octo.bookings import CONFIRM, RESERVE
from berth.http.octo.catalog import PRODUCT, PRODUCTS, SUPPLIER
from berth.http.octo.routing import RouteTable

FAST_ROUTES = RouteTable([SUPPLIER, PRODUCTS, PRODUCT, CHECK, CALENDAR, RESERVE, CONFIRM])
