"""The widget a supplier pastes into its own website (docs/widget.md): one script from Berth
itself, at an address that names the version of its interface (its data attributes and the
messages it exchanges with the shop's pages), which a later Berth keeps answering."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from berth.http.shop.rendering import FILES

router = APIRouter(include_in_schema=False)

# The address stays while the file may change with Berth (compatibly): browsers keep it a day,
# then use it while they check for a new one in the background (a 304 when it is the same).
CACHE = "public, max-age=86400, stale-while-revalidate=604800"


@router.get("/shop/widget/v1.js")
async def widget_script(request: Request) -> Response:
    return FILES.answer(
        "widget-v1.js",
        request,
        cache=CACHE,
        extra={
            "X-Content-Type-Options": "nosniff",
            "Cross-Origin-Resource-Policy": "cross-origin",  # loaded by the supplier's pages
            "Access-Control-Allow-Origin": "*",  # also with `crossorigin` (errors the site sees)
        },
    )
