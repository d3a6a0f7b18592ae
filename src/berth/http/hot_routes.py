"""Direct dispatch of the most-polled OCTO routes, past FastAPI's routing and dependency solving.

Resellers poll `/supplier`, `/products` and availability constantly and book in bursts; for
those requests FastAPI's route matching, dependency graph and body handling cost several times
what the answer itself does (issue 4's profile). This innermost middleware serves them by
calling the answer functions of the same route declarations FastAPI serves
(`berth.http.octo.table`), with the request context the authentication middleware has already
built.

It only ever takes the plain road: a JSON body that parses and validates. Anything else (no or
another content type, invalid JSON, a body that fails validation) is handed on to FastAPI
untouched, so every error answer comes from one place and reads the same either way.
`tests/test_hot_routes.py` sends the same requests both ways and compares the answers.
"""

from __future__ import annotations

import orjson
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from berth.container import Services
from berth.domain.errors import OctoError
from berth.http.context import OctoRequest, with_mappings
from berth.http.errors import error_response
from berth.http.middleware import header, replaying
from berth.http.octo.routing import Call
from berth.http.octo.table import FAST_ROUTES


def _is_plain_json(scope: Scope) -> bool:
    content_type = header(scope, b"content-type")
    return content_type is not None and content_type.partition(";")[0].strip().lower() == "application/json"


def parse_body(model: type[BaseModel], scope: Scope, raw: bytes) -> BaseModel | None:
    """The validated body, or None when FastAPI should answer the request (and its error).

    Validated as FastAPI does: the decoded JSON as Python data, `from_attributes` on. orjson
    refuses a few things Python's json module accepts (NaN, integers past 64 bits, lone
    surrogates); those go to FastAPI too, which parses with the json module."""
    if not raw or not _is_plain_json(scope):
        return None
    try:
        return model.model_validate(orjson.loads(raw), from_attributes=True)
    except (orjson.JSONDecodeError, ValidationError):
        return None


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


class HotRoutesMiddleware:
    """Innermost middleware: answers the routes of `FAST_ROUTES` itself, hands the rest to FastAPI."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = FAST_ROUTES.find(scope["method"], scope["path"]) if scope["type"] == "http" else None
        octo = scope.get("state", {}).get("octo") if found is not None else None
        if found is None or not isinstance(octo, OctoRequest):
            await self.app(scope, receive, send)
            return
        route, params = found
        body: BaseModel | None = None
        if route.body is not None:
            raw = await _read_body(receive)
            body = parse_body(route.body, scope, raw)
            if body is None:
                await self.app(scope, replaying(raw, receive), send)
                return
        svc: Services = scope["app"].state.services
        try:
            if route.mappings:
                octo = await with_mappings(octo, svc)
            response = await route.answer(Call(octo, svc, body, params, scope))
        except OctoError as exc:
            response = error_response(exc, octo.view.capabilities)
        await response(scope, receive, send)
