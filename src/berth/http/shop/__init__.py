"""The supplier's web shop: server-rendered pages under /shop where guests book and pay, and
manage their booking afterwards (docs/shop.md). Its pages parse, call the services and render,
like the back office's."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from berth.http.shop import booking, catalog, checkout, manage, payment
from berth.http.shop.rendering import FILES

router = APIRouter(include_in_schema=False)


@router.get("/shop/static/{name}")
async def static_file(name: str, request: Request) -> Response:
    return FILES.answer(name, request)


# The fixed paths first: a product's own page is /shop/{product id}.
for module in (payment, checkout, manage, booking, catalog):
    router.include_router(module.router)
