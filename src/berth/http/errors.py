"""Every failure becomes an OCTO error body; the HTTP status of each code lives here."""

from __future__ import annotations

import re
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match

from berth.capabilities.registry import header_value
from berth.domain.errors import BadRequest, NotFound, OctoError, RetryLater, ServiceUnavailable
from berth.domain.input_errors import expectation, field_path
from berth.http.responses import json_response
from berth.store.faults import fault_of

log = structlog.get_logger("berth.http")

# OCTO clients and the conformance validator expect 400 for every OCTO error but the internal
# one (OCTO.md §2.2); NOT_FOUND is only for unknown routes (and unknown ids of the admin API);
# TOO_MANY_REQUESTS is 429 so generic HTTP clients and proxies back off too (docs/decisions.md);
# FORBIDDEN, which only the admin API answers (a role that may not, the API switched off), 403;
# SERVICE_UNAVAILABLE (the database refuses connections) 503 with Retry-After, which load
# balancers, proxies and retrying clients understand (docs/decisions.md).
STATUS_BY_CODE: dict[str, int] = {
    "INTERNAL_SERVER_ERROR": 500,
    "SERVICE_UNAVAILABLE": 503,
    "NOT_FOUND": 404,
    "TOO_MANY_REQUESTS": 429,
    "FORBIDDEN": 403,
    "CONFLICT": 409,  # the admin API's catalogue save based on an older version
}
DEFAULT_ERROR_STATUS = 400

# What a client is told of a failure that is not its own: never the exception's text (driver
# messages name hosts, databases and SQL); the log has it, under the request id.
UNEXPECTED = "An unexpected error occurred; it has been logged"
DATABASE_FAULTS = {
    "refused": "The service cannot reach its database now; repeat the request after retryAfter seconds",
    "unavailable": "The database could not be reached; repeat the request shortly to learn its outcome",
    "full": "The database is full; the change was not saved",
}
# How long a client is asked to wait when the database refuses connections: a moment, as a
# pool's connections come free or a server restarts.
DATABASE_RETRY_AFTER_SECONDS = 5


def internal_error(exc: BaseException) -> OctoError:
    """What a client gets for an exception nothing else handled: SERVICE_UNAVAILABLE when the
    database refused a connection, else INTERNAL_SERVER_ERROR."""
    fault = fault_of(exc)
    if fault == "refused":
        return ServiceUnavailable(DATABASE_FAULTS[fault], DATABASE_RETRY_AFTER_SECONDS)
    return OctoError(DATABASE_FAULTS[fault] if fault else UNEXPECTED)


def error_response(error: OctoError, capabilities: frozenset[str] = frozenset()) -> Response:
    """The error's body and status; `Retry-After` for an error to repeat later."""
    headers = {"Octo-Capabilities": header_value(capabilities)}
    if isinstance(error, RetryLater):
        headers["Retry-After"] = str(error.retry_after)
    return json_response(
        error.body(), status_code=STATUS_BY_CODE.get(error.code, DEFAULT_ERROR_STATUS), headers=headers
    )


def _capabilities(request: Request) -> frozenset[str]:
    found = request.scope.get("state", {}).get("capabilities")
    return found if isinstance(found, frozenset) else frozenset()


_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (list, "an array"),
    (str, "a string"),
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
)
_NOT_AN_OBJECT = frozenset({"dict_type", "model_type", "model_attributes_type"})
_JSON_CONTENT = re.compile(r"^application/([\w.+-]+\+)?json\s*(;|$)", re.IGNORECASE)


def _body_is_not_an_object(content_type: str | None, body: Any) -> str:
    """Why a request body is not the JSON object a route expects: not sent as JSON at all, or
    JSON of another kind."""
    if not content_type or not _JSON_CONTENT.match(content_type):
        sent = f" ({content_type.split(';')[0].strip()} was sent)" if content_type else ""
        return f"The request body must be JSON sent with the header Content-Type: application/json{sent}"
    kind = next((name for cls, name in _JSON_KINDS if isinstance(body, cls)), None)
    return "The request body must be a JSON object" + (f"; {kind} was sent" if kind else "")


def validation_message(errors: list[Any], content_type: str | None = None, body: Any = None) -> str:
    """One message naming every field that is wrong and what it expects. `content_type` and
    `body` (the request's) tell why a body that is not a JSON object was refused."""
    messages = []
    for error in errors:
        kind = error.get("type")
        field = field_path(tuple(error.get("loc", ())))
        if kind == "json_invalid":
            detail = (error.get("ctx") or {}).get("error", "")
            return (
                f"The request body is not valid JSON ({detail})"
                if detail
                else "The request body is not valid JSON"
            )
        if kind == "missing" and not field:
            messages.append("The request body is required")
        elif kind in _NOT_AN_OBJECT and not field:
            messages.append(_body_is_not_an_object(content_type, body))
        elif kind in ("missing", "extra_forbidden"):
            messages.append(f"{field} {expectation(error)}")
        else:
            messages.append(f"{field}: {expectation(error)}" if field else expectation(error))
    return "; ".join(messages) or "The request is not valid"


_METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")


def _documented_paths(app: Any) -> list[tuple[int, re.Pattern[str], list[str]]]:
    """(parameters, pattern, methods) of each path of the OpenAPI document, built once."""
    found: list[tuple[int, re.Pattern[str], list[str]]] | None = getattr(app.state, "documented_paths", None)
    if found is None:
        found = []
        for template, operations in app.openapi().get("paths", {}).items():
            pattern = re.compile("^" + re.sub(r"\\{[^/]+?\\}", "[^/]+", re.escape(template)) + "$")
            methods = sorted(m.upper() for m in operations if m.upper() in _METHODS)
            found.append((template.count("{"), pattern, methods))
        found.sort(key=lambda entry: entry[0])
        app.state.documented_paths = found
    return found


def _allowed_methods(request: Request) -> list[str]:
    """The methods the OpenAPI document lists for this path; where paths overlap
    (`/mappings/counts` and `/mappings/{mappingId}`) the most literal one. Starlette names only
    the first route's method. Paths outside the document: asked of the routes themselves."""
    for _, pattern, methods in _documented_paths(request.app):
        if pattern.match(request.url.path):
            return methods
    routes = request.app.router.routes
    return [
        method
        for method in _METHODS
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)
    ]


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(OctoError)
    async def _octo(request: Request, exc: OctoError) -> Response:
        return error_response(exc, _capabilities(request))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        message = validation_message(list(exc.errors()), request.headers.get("content-type"), exc.body)
        return error_response(BadRequest(message), _capabilities(request))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            error: OctoError = NotFound(f"There is no route {request.method} {request.url.path}")
            return error_response(error, _capabilities(request))
        if exc.status_code == 405:
            return json_response(
                BadRequest(f"{request.method} is not allowed on {request.url.path}").body(),
                status_code=405,
                headers={"Allow": ", ".join(_allowed_methods(request))},
            )
        return json_response(BadRequest(str(exc.detail)).body(), status_code=exc.status_code)
