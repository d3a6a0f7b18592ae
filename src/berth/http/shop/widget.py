"""The widget a supplier pastes into its own website (docs/widget.md): one script from Berth
itself, at an address that names the version of its interface (its data attributes and the
messages it exchanges with the shop's pages), which a later Berth keeps answering."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from berth.domain.errors import NotFound
from berth.http.shop.errors import ShopRoute
from berth.http.shop.rendering import FILES

router = APIRouter(route_class=ShopRoute, include_in_schema=False)

VERSIONS = {"v1": "widget-v1.js"}
# The address stays while the file may change with Berth (compatibly): browsers keep it a day,
# then use it while they check for a new one in the background (a 304 when it is the same).
CACHE = "public, max-age=86400, stale-while-revalidate=604800"
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "cross-origin",  # loaded by the supplier's pages
    "Access-Control-Allow-Origin": "*",  # also with `crossorigin` (errors the site can see)
}


@router.get("/shop/widget/{version}.js")
async def widget_script(version: str, request: Request) -> Response:
    name = VERSIONS.get(version)
    if name is None:
        raise NotFound(f"There is no widget {version}")
    return FILES.answer(name, request, cache=CACHE, extra=HEADERS)
