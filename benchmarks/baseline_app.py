"""The baseline: a bare Starlette app answering every request with a small, pre-encoded JSON
document about the size of Berth's `GET /octo/supplier` answer.

It is the practical ceiling of the Python HTTP stack on this machine (same uvicorn, same
event loop and HTTP parser, same worker count as Berth), so Berth's figures are reported as
ratios to it. It answers any path and method (reading the body of a POST, as any endpoint
would) so each route's wrk script can run against it unchanged.

Run by run.py as `python -m uvicorn baseline_app:app --app-dir benchmarks --workers N`.
"""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

DOCUMENT = {
    "id": "baseline",
    "name": "Baseline Supplier Ltd",
    "endpoint": "http://127.0.0.1:8000/octo",
    "contact": {
        "website": "https://baseline.example",
        "email": "bookings@baseline.example",
        "telephone": "+442079460000",
        "address": "1 Baseline Walk, London SE1 9PP, United Kingdom",
    },
}
BODY = json.dumps(DOCUMENT, separators=(",", ":")).encode()


async def answer(request: Request) -> Response:
    if request.method != "GET":
        await request.body()
    return Response(BODY, media_type="application/json")


app = Starlette(
    routes=[
        Route(
            "/{path:path}",
            answer,
            methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            include_in_schema=False,
        )
    ]
)
