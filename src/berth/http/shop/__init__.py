"""The supplier's web shop: server-rendered pages under /shop where guests book and pay, and
manage their booking afterwards (docs/shop.md). Its pages parse, call the services and render,
like the back office's."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import Scope

from berth.http.shop import booking, catalog, checkout, manage, payment, widget
from berth.http.shop.rendering import FILES


class ShopRouter(APIRouter):
    """The shop's routes, every one under /shop: any other path is not tried against them one
    by one (FastAPI tries each route of each router in turn, about 2 µs a route), so the app can
    look here first at no cost to the other paths."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if "/shop" not in scope.get("path", ""):
            return Match.NONE, {}
        return super().matches(scope)


router = ShopRouter(include_in_schema=False)


@router.get("/shop/static/{name}")
async def static_file(name: str, request: Request) -> Response:
    return FILES.answer(name, request)


# The fixed paths first: a product's own page is /shop/{product id}.
for module in (widget, payment, checkout, manage, booking, catalog):
    router.include_router(module.router)
