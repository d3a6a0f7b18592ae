"""Direct dispatch of the most-polled OCTO routes, past FastAPI's routing and dependency solving.

Resellers poll `/supplier`, `/products` and availability constantly and book in bursts; for
those requests FastAPI's route matching, dependency graph and body handling cost several times
what the answer itself does (issue 4's profile). This innermost middleware serves them by
calling the same answer functions the FastAPI routes call, with the request context the
authentication middleware has already built.

It only ever takes the plain road: a JSON body that parses and validates. Anything else (no or
another content type, invalid JSON, a body that fails validation) is handed on to FastAPI
untouched, so every error answer comes from one place and reads the same either way.
`tests/test_hot_routes.py` sends the same requests both ways and compares the answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from berth.container import Services
from berth.domain.errors import OctoError
from berth.http.context import OctoRequest, with_mappings
from berth.http.errors import error_response
from berth.http.middleware import header, replaying
from berth.http.octo.availability import availability_answer, calendar_answer
from berth.http.octo.bookings import confirm_answer, reserve_answer
from berth.http.octo.catalog import product_answer, products_answer, supplier_answer
from berth.http.octo.requests import AvailabilityBody, CalendarBody, ConfirmBody, ReserveBody


@dataclass(frozen=True)
class Call:
    """What an answer needs: the request context, the services, the validated body, the path
    parameter (a product id or booking uuid) and the ASGI scope (for headers)."""

    octo: OctoRequest
    svc: Services
    body: Any
    param: str
    scope: Scope


@dataclass(frozen=True)
class HotRoute:
    answer: Callable[[Call], Awaitable[Response]]
    body: type[BaseModel] | None = None
    mappings: bool = False  # the View carries the connection's mapped rows (vendor/mappings)


async def _supplier(call: Call) -> Response:
    return supplier_answer(call.octo, Request(call.scope))


async def _products(call: Call) -> Response:
    return products_answer(call.octo)


async def _product(call: Call) -> Response:
    return product_answer(call.octo, call.param)


async def _availability(call: Call) -> Response:
    return await availability_answer(call.octo, call.svc, call.body)


async def _calendar(call: Call) -> Response:
    return await calendar_answer(call.octo, call.svc, call.body)


async def _reserve(call: Call) -> Response:
    return await reserve_answer(call.octo, call.svc, call.body, header(call.scope, b"octo-env"))


async def _confirm(call: Call) -> Response:
    return await confirm_answer(call.octo, call.svc, call.param, call.body)


EXACT: dict[tuple[str, str], HotRoute] = {
    ("GET", "/octo/supplier"): HotRoute(_supplier),
    ("GET", "/octo/products"): HotRoute(_products),
    ("POST", "/octo/availability"): HotRoute(_availability, AvailabilityBody, mappings=True),
    ("POST", "/octo/availability/calendar"): HotRoute(_calendar, CalendarBody),
    ("POST", "/octo/bookings"): HotRoute(_reserve, ReserveBody, mappings=True),
}
PRODUCT = HotRoute(_product)
CONFIRM = HotRoute(_confirm, ConfirmBody, mappings=True)
_PRODUCTS = "/octo/products/"
_BOOKINGS, _CONFIRM = "/octo/bookings/", "/confirm"


def find(method: str, path: str) -> tuple[HotRoute, str] | None:
    """The hot route for a request and its path parameter ("" when it has none). Path
    parameters match one non-empty segment, as Starlette's `{name}` does."""
    route = EXACT.get((method, path))
    if route is not None:
        return route, ""
    if method == "GET" and path.startswith(_PRODUCTS):
        product_id = path[len(_PRODUCTS) :]
        if product_id and "/" not in product_id:
            return PRODUCT, product_id
    if method == "POST" and path.startswith(_BOOKINGS) and path.endswith(_CONFIRM):
        uuid = path[len(_BOOKINGS) : -len(_CONFIRM)]
        if uuid and "/" not in uuid:
            return CONFIRM, uuid
    return None


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
    """Innermost middleware: answers the routes of `find` itself, hands the rest to FastAPI."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = find(scope["method"], scope["path"]) if scope["type"] == "http" else None
        octo = scope.get("state", {}).get("octo") if found is not None else None
        if found is None or not isinstance(octo, OctoRequest):
            await self.app(scope, receive, send)
            return
        route, param = found
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
            response = await route.answer(Call(octo, svc, body, param, scope))
        except OctoError as exc:
            response = error_response(exc, octo.view.capabilities)
        await response(scope, receive, send)
