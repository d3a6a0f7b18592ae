"""Pure ASGI middleware: request ids and access logs, trailing slashes, authentication.

Authentication runs here, before routing and body parsing, so a request without a valid key
gets UNAUTHORIZED even when its body is also malformed (OCTO checks auth first).
"""

from __future__ import annotations

import itertools
import os
import secrets
import time
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from berth.capabilities.base import View
from berth.capabilities.registry import parse_capabilities
from berth.container import Services
from berth.domain.errors import Forbidden, OctoError, TooManyRequests, Unauthorized
from berth.domain.languages import choose_language
from berth.domain.staff import BOOTSTRAP_ADMIN, TOKEN_PREFIX
from berth.http.client_address import client_of
from berth.http.context import OctoRequest
from berth.http.errors import error_response, internal_error
from berth.logs import info_logged
from berth.store.database import fault_of

log = structlog.get_logger("berth.access")

# Request ids: unique per process by a random prefix, then counted (cheaper than 16 random
# bytes per request, and as unique).
_id_prefix = secrets.token_hex(10)
_id_counter = itertools.count()


def _new_prefix() -> None:
    global _id_prefix
    _id_prefix = secrets.token_hex(10)


os.register_at_fork(after_in_child=_new_prefix)  # a forked worker counts under its own prefix


def new_request_id() -> str:
    return f"{_id_prefix}{next(_id_counter) & 0xFFFFFFFFFFFF:012x}"


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that hands on a body already read whole, then listens to the client again."""
    handed_on = False

    async def replay() -> Message:
        nonlocal handed_on
        if handed_on:
            return await receive()
        handed_on = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class RequestContextMiddleware:
    """Binds a request id to the logs, echoes it as `X-Request-Id`, logs one line per request,
    and serves `/octo/products/` as `/octo/products` (the core spec writes some paths with a
    trailing slash)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            scope = dict(scope)
            scope["path"] = path.rstrip("/") or "/"
            scope["raw_path"] = scope["path"].encode()
        request_id = header(scope, b"x-request-id") or new_request_id()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status: int | None = None

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            # Logged here, where the request id is bound, and answered with X-Request-Id; the
            # client gets a fixed text (internal_error), the log the exception and its cause.
            log.exception("unhandled error", path=scope["path"], fault=fault_of(exc))
            if status is not None:  # part of the answer is out: nothing better to do than to end it
                raise
            capabilities = scope.get("state", {}).get("capabilities", frozenset())
            await error_response(internal_error(exc), capabilities)(scope, receive, send_with_id)
        finally:
            if info_logged():
                log.info(
                    "request",
                    method=scope["method"],
                    path=scope["path"],
                    status=status or 500,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                    connection=scope.get("state", {}).get("connection_id"),
                )
            structlog.contextvars.clear_contextvars()


class AuthMiddleware:
    """`/octo/*` needs a reseller's API key; `/admin/api/*` the admin token or a member of
    staff's API token (who it is goes to the request state as `actor`: the routes check its
    role)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        state: dict[str, Any] = scope.setdefault("state", {})
        services: Services = scope["app"].state.services
        error: OctoError | None = None
        if path == "/octo" or path.startswith("/octo/"):
            capabilities = parse_capabilities(header(scope, b"octo-capabilities"))
            state["capabilities"] = capabilities
            error = await self._authenticate_reseller(scope, state, services, capabilities)
        elif path == "/admin/api" or path.startswith("/admin/api/"):
            error = await self._authenticate_admin(scope, state, services)
        if error is not None:
            wait = {"Retry-After": str(error.retry_after)} if isinstance(error, TooManyRequests) else None
            await error_response(error, state.get("capabilities", frozenset()), wait)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    @staticmethod
    def _bearer(scope: Scope) -> str | OctoError:
        value = header(scope, b"authorization")
        if not value:
            return Unauthorized("Send your API key in the header 'Authorization: Bearer <API key>'")
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return Unauthorized("The Authorization header must be 'Bearer <API key>'")
        return token

    async def _authenticate_reseller(
        self, scope: Scope, state: dict[str, Any], services: Services, capabilities: frozenset[str]
    ) -> OctoError | None:
        token = self._bearer(scope)
        if isinstance(token, OctoError):
            return token
        found = await services.connections.authenticate(token)
        if found is None:
            return Unauthorized("The API key is not valid or has been revoked")
        connection, catalog_version = found
        snapshot = await services.catalog.snapshot(catalog_version)
        language = choose_language(header(scope, b"accept-language"), snapshot.languages)
        state["connection_id"] = connection.id
        state["octo"] = OctoRequest(
            connection=connection, view=View(capabilities=capabilities, language=language), snapshot=snapshot
        )
        return None

    async def _authenticate_admin(
        self, scope: Scope, state: dict[str, Any], services: Services
    ) -> OctoError | None:
        token = self._bearer(scope)
        if isinstance(token, OctoError):
            return token
        expected = services.settings.admin_token
        if expected is None:
            return Forbidden("The admin API is disabled: set BERTH_ADMIN_TOKEN to enable it")
        address = client_of(scope, services.settings)
        guessing = [services.guessing.address(address)]
        try:
            await services.guessing.check_recent(
                guessing[0]
            )  # a locked-out address is not told a right guess
        except TooManyRequests as refused:
            return refused
        if secrets.compare_digest(token.encode(), expected.get_secret_value().encode()):
            state["actor"] = BOOTSTRAP_ADMIN
            return None
        member = await services.staff.by_token(token) if token.startswith(TOKEN_PREFIX) else None
        if member is None:
            await services.guessing.failed(guessing, address)
            return Unauthorized("The admin token is not valid, nor a staff API token that is in use")
        state["actor"] = member.actor
        return None
