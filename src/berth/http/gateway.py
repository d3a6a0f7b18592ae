"""The one ASGI layer in front of FastAPI's routing: everything every request goes through.

In order, for an HTTP request:
1. a request id (the client's `X-Request-Id`, else a new one) bound to the logs and echoed in
   the answer; `/octo/products/` served as `/octo/products` (the core spec writes some paths
   with a trailing slash); one access log line;
2. a deadline, `BERTH_REQUEST_TIMEOUT_SECONDS`, at which the request is answered
   INTERNAL_SERVER_ERROR and stopped;
3. authentication (`berth.http.authentication`), then the rate limit and the body limit
   (`berth.http.limits`), each refusal an OCTO error;
4. the hot OCTO routes answered directly (`berth.http.hot_routes`), the rest by FastAPI.

One layer rather than one middleware per concern: on `GET /supplier` each layer's call and
send wrapper was a measurable share of the request (issue 31). An exception nothing handled
is logged here, where the request id is bound, and answered with a fixed text.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from berth.container import Services
from berth.domain.errors import OctoError
from berth.http.asgi import header, new_request_id, replaying
from berth.http.authentication import authenticate
from berth.http.context import OctoRequest
from berth.http.errors import error_response, internal_error
from berth.http.hot_routes import hot_answer
from berth.http.limits import rate_limited, read_body
from berth.logs import info_logged
from berth.store.faults import log_failure

access_log = structlog.get_logger("berth.access")
log = structlog.get_logger("berth.http")


def _capabilities(scope: Scope) -> frozenset[str]:
    found = scope.get("state", {}).get("capabilities")
    return found if isinstance(found, frozenset) else frozenset()


class Gateway:
    """Wraps FastAPI's exception handling and routes (`app`); `hot_routes=False` leaves every
    request to FastAPI (tests compare both roads)."""

    def __init__(self, app: ASGIApp, *, hot_routes: bool = True) -> None:
        self.app = app
        self.hot_routes = hot_routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if len(path) > 1 and path.endswith("/"):
            scope = dict(scope)
            scope["path"] = path.rstrip("/") or "/"
            scope["raw_path"] = scope["path"].encode()
        services: Services = scope["app"].state.services
        request_id = header(scope, b"x-request-id") or new_request_id()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status: int | None = None
        expired = False
        id_header = (b"x-request-id", request_id.encode())

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), id_header]
            await send(message)

        async def guarded_send(message: Message) -> None:
            if not expired:  # after the deadline the answer is out: drop what the request still sends
                await send_with_id(message)

        seconds = services.settings.request_timeout_seconds
        request = asyncio.current_task()
        answer: asyncio.Task[None] | None = None

        def expire() -> None:
            nonlocal expired, answer
            expired = True
            log.warning("request timed out", method=scope["method"], path=scope["path"], seconds=seconds)
            if status is None:  # else part of the answer is out: nothing better to do than to end it
                error = OctoError(
                    f"The request did not finish within {seconds:g} s and was stopped; "
                    "repeat it to learn its outcome"
                )
                respond = error_response(error, _capabilities(scope))
                answer = asyncio.create_task(respond(scope, receive, send_with_id))
            assert request is not None
            services.unwinding.add(request)
            request.cancel()

        # A timer, not a task per request (a task and a wait cost more than some answers): at
        # the deadline the answer goes out at once from a task of its own, and the request's
        # task is cancelled. Work blocked in a driver thread (waiting for SQLite's write lock)
        # may take a while to unwind; it does so after the answer, rolling back its
        # transaction, and whatever it still sends is dropped.
        timer = asyncio.get_running_loop().call_later(seconds, expire) if seconds and request else None
        try:
            try:
                await self._serve(scope, receive, guarded_send, services)
            except asyncio.CancelledError:
                if not expired or (request is not None and request.uncancel() > 0):  # the server's too
                    raise
            except Exception as exc:
                if expired:
                    log.warning("timed-out request failed while stopping", error=type(exc).__name__)
                else:
                    log_failure(access_log, "unhandled error", exc, path=scope["path"])
                    if status is not None:  # part of the answer is out: nothing better to do than to end it
                        raise
                    respond = error_response(internal_error(exc), _capabilities(scope))
                    await respond(scope, receive, send_with_id)
            finally:
                if timer is not None:
                    timer.cancel()
                    services.unwinding.discard(request)
            if answer is not None:
                await answer
        finally:
            if info_logged():
                access_log.info(
                    "request",
                    method=scope["method"],
                    path=scope["path"],
                    status=status or 500,
                    duration_ms=round((time.perf_counter() - started) * 1000, 2),
                    connection=scope.get("state", {}).get("connection_id"),
                )
            structlog.contextvars.clear_contextvars()

    async def _serve(self, scope: Scope, receive: Receive, send: Send, services: Services) -> None:
        state: dict[str, Any] = scope.setdefault("state", {})
        error: OctoError | None = await authenticate(scope, state, services)
        if error is None:
            error = await rate_limited(state.get("connection_id"), services)
        if error is not None:
            await error_response(error, _capabilities(scope))(scope, receive, send)
            return
        body = await read_body(scope, receive, services.settings.max_body_bytes)
        if body is None:
            return  # the client has gone: nobody to answer
        if isinstance(body, OctoError):
            await error_response(body, _capabilities(scope))(scope, receive, send)
            return
        octo = state.get("octo")
        if self.hot_routes and isinstance(octo, OctoRequest):
            response = await hot_answer(scope, body, octo, services)
            if response is not None:
                await response(scope, receive, send)
                return
        await self.app(scope, replaying(body, receive), send)
