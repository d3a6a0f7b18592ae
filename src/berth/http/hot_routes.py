"""Direct dispatch of the most-polled OCTO routes, past FastAPI's routing and dependency solving.

Resellers poll `/supplier`, `/products` and availability constantly and book in bursts; for
those requests FastAPI's route matching, dependency graph and body handling cost several times
what the answer itself does (issue 4's profile). The gateway (`berth.http.gateway`) serves them by
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
from starlette.responses import Response
from starlette.types import Scope

from berth.container import Services
from berth.domain.errors import OctoError
from berth.http.asgi import header
from berth.http.context import OctoRequest, with_mappings
from berth.http.errors import error_response
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


async def hot_answer(scope: Scope, raw: bytes, octo: OctoRequest, services: Services) -> Response | None:
    """The answer to a request of `FAST_ROUTES` with body `raw`; None for FastAPI to answer
    (another route, or a body off the plain road)."""
    found = FAST_ROUTES.find(scope["method"], scope["path"])
    if found is None:
        return None
    route, params = found
    body: BaseModel | None = None
    if route.body is not None:
        body = parse_body(route.body, scope, raw)
        if body is None:
            return None
    try:
        if route.mappings:
            octo = await with_mappings(octo, services)
        return await route.answer(Call(octo, services, body, params, scope))
    except OctoError as exc:
        return error_response(exc, octo.view.capabilities)
