"""The ASGI application: settings -> services -> routes and middleware."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.middleware.asyncexitstack import AsyncExitStackMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.types import ASGIApp

from berth import __version__
from berth.background import log_start, return_freed_memory, run_background
from berth.container import Services, build_services
from berth.http.admin.api import router as admin_router
from berth.http.admin.bookings import router as admin_bookings_router
from berth.http.admin.checkin import router as admin_checkin_router
from berth.http.admin.departures import router as admin_departures_router
from berth.http.admin.gifts import router as admin_gifts_router
from berth.http.admin.mail import router as admin_mail_router
from berth.http.admin.mappings import router as admin_mappings_router
from berth.http.admin.offers import router as admin_offers_router
from berth.http.admin.pages import router as backoffice_router
from berth.http.admin.pickups import router as admin_pickups_router
from berth.http.admin.resources import router as admin_resources_router
from berth.http.admin.staff import router as admin_staff_router
from berth.http.admin.statements import router as admin_statements_router
from berth.http.admin.webhooks import router as admin_webhooks_router
from berth.http.docs import install_docs
from berth.http.errors import install_error_handlers
from berth.http.gateway import Gateway
from berth.http.octo.availability import router as octo_availability_router
from berth.http.octo.bookings import router as octo_bookings_router
from berth.http.octo.catalog import router as octo_catalog_router
from berth.http.octo.common import bearer
from berth.http.octo.gifts import router as octo_gifts_router
from berth.http.octo.mappings import router as octo_mappings_router
from berth.http.octo.offers import router as octo_offers_router
from berth.http.octo.orders import router as octo_orders_router
from berth.http.octo.resources import router as octo_resources_router
from berth.http.octo.webhooks import router as octo_webhooks_router
from berth.http.ops import router as ops_router
from berth.http.payments import router as payments_router
from berth.http.shop import router as shop_router
from berth.http.tickets import router as tickets_router
from berth.logs import configure_logging
from berth.settings import Settings


class BerthApp(FastAPI):
    """FastAPI with Berth's gateway outermost.

    FastAPI wraps user middleware in its own outer layers (server errors, telemetry, a body
    limit), which Berth's gateway already does, and every layer costs the most polled routes a
    call and a send wrapper. Here the gateway (`berth.http.gateway`) is the one layer in front
    of FastAPI's exception handling for routes."""

    hot_routes: bool = True

    def build_middleware_stack(self) -> ASGIApp:
        handlers = {
            key: value for key, value in self.exception_handlers.items() if key not in (500, Exception)
        }
        routes = ExceptionMiddleware(AsyncExitStackMiddleware(self.router), handlers=handlers)
        return Gateway(routes, hot_routes=self.hot_routes)


def create_app(
    settings: Settings | None = None, services: Services | None = None, *, hot_routes: bool = True
) -> FastAPI:
    """`hot_routes=False` leaves every request to FastAPI's routing: tests compare both roads."""
    settings = settings or (services.settings if services else Settings())
    configure_logging(settings.log_level, settings.log_format)
    built = services or build_services(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        log_start("serve", built.settings)
        stop = asyncio.Event()
        background = [asyncio.create_task(return_freed_memory(stop))]
        if built.settings.run_worker:
            background.append(asyncio.create_task(run_background(built, stop)))
        yield
        stop.set()
        await asyncio.gather(*background)
        if services is None:
            await built.close()

    app = BerthApp(
        title="Berth",
        version=__version__,
        description="OCTO booking API for resellers (`/octo`) and the supplier's admin API (`/admin/api`).",
        lifespan=lifespan,
        docs_url=None,  # berth.http.docs serves them, with no file from other sites
        redoc_url=None,
        # Berth ships no OpenTelemetry SDK; FastAPI's check for one costs every request.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.state.services = built
    app.hot_routes = hot_routes
    _document_only_real_answers(app)
    install_error_handlers(app)
    install_docs(app)
    app.include_router(ops_router, tags=["operations"])
    # The guests' pages before the routers they would otherwise be tried against in turn (the
    # shop's router turns away any other path at once).
    app.include_router(shop_router)
    octo_routers = (
        octo_catalog_router, octo_availability_router, octo_bookings_router, octo_orders_router,
        octo_webhooks_router, octo_mappings_router, octo_resources_router, octo_offers_router, octo_gifts_router,
    )  # fmt: skip
    for router in octo_routers:
        app.include_router(router, prefix="/octo", tags=["octo"], dependencies=[Depends(bearer)])
    admin_routers = (
        admin_router, admin_bookings_router, admin_departures_router, admin_webhooks_router, admin_mappings_router,
        admin_resources_router, admin_staff_router, admin_pickups_router, admin_mail_router,
        admin_checkin_router, admin_statements_router, admin_offers_router, admin_gifts_router,
    )  # fmt: skip
    for router in admin_routers:
        app.include_router(router, prefix="/admin/api", tags=["admin"], dependencies=[Depends(bearer)])
    app.include_router(backoffice_router)
    app.include_router(tickets_router, tags=["tickets"])
    app.include_router(payments_router, tags=["payments"])
    return app


def _document_only_real_answers(app: FastAPI) -> None:
    """FastAPI documents a 422 validation error on every route with input; Berth answers those
    as OCTO BAD_REQUEST (400), which is documented, so the 422 entries go."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            for operations in document.get("paths", {}).values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            schemas = document.get("components", {}).get("schemas", {})
            for name in ("HTTPValidationError", "ValidationError"):
                schemas.pop(name, None)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def app_from_environment() -> FastAPI:
    """Factory for `uvicorn --factory` (each worker process builds its own services)."""
    return create_app(Settings())
