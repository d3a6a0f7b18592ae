"""Pure ASGI middleware that bounds what one request may cost: its run time, its body size and
how often its connection may call. Each answers with an OCTO error body.

Order (outermost first): request context, timeout, authentication, rate limit, body limit. So a
request without a valid key is refused before anything is counted or read, and the timeout
covers everything, a client that sends its body slowly included.
"""

from __future__ import annotations

import asyncio
import math
import re
from functools import partial
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from berth.domain.errors import BadRequest, OctoError, TooManyRequests
from berth.http.errors import error_response
from berth.http.middleware import header
from berth.services.container import Services

log = structlog.get_logger("berth.http")


def _services(scope: Scope) -> Services:
    services: Services = scope["app"].state.services
    return services


def _capabilities(scope: Scope) -> frozenset[str]:
    found = scope.get("state", {}).get("capabilities")
    return found if isinstance(found, frozenset) else frozenset()


class TimeoutMiddleware:
    """Answers INTERNAL_SERVER_ERROR once a request has run `BERTH_REQUEST_TIMEOUT_SECONDS`, so a
    stuck database or a slow client never holds a connection open indefinitely.

    The request runs in its own task. At the deadline the task is cancelled and the answer goes
    out at once, without waiting for the cancellation to finish: work blocked in a driver thread
    (SQLite waiting for its write lock) may take a while to unwind, and it does so in the
    background, rolling back its transaction. Whatever the late task still sends is dropped.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        services = _services(scope)
        seconds = services.settings.request_timeout_seconds if scope["type"] == "http" else 0
        if not seconds:
            await self.app(scope, receive, send)
            return
        started = False
        answered = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if answered:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        async def run() -> None:
            await self.app(scope, receive, guarded_send)

        task = asyncio.create_task(run())
        try:
            done, _ = await asyncio.wait({task}, timeout=seconds)
        except asyncio.CancelledError:  # the server gave up on the request: so do we
            task.cancel()
            raise
        if done:
            task.result()
            return
        answered = True
        task.cancel()
        services.unwinding.add(task)
        task.add_done_callback(partial(_unwound, services.unwinding))
        log.warning("request timed out", method=scope["method"], path=scope["path"], seconds=seconds)
        if started:  # part of the answer is out: nothing better to do than to end it here
            return
        error = OctoError(
            f"The request did not finish within {seconds:g} s and was stopped; repeat it to learn its outcome"
        )
        await error_response(error, _capabilities(scope))(scope, receive, send)


# A JSON string escape \u0000 that is not itself an escaped backslash followed by "u0000".
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


def _has_nul(scope: Scope, body: bytes) -> bool:
    query: bytes = scope.get("query_string", b"")
    return (
        "\x00" in scope["path"]
        or b"%00" in query
        or b"\x00" in query
        or b"\x00" in body
        or (b"\\u0000" in body and _JSON_NUL.search(body) is not None)
    )


def _unwound(unwinding: set[asyncio.Task[None]], task: asyncio.Task[None]) -> None:
    unwinding.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.warning("timed-out request failed while stopping", error=type(task.exception()).__name__)


class RateLimitMiddleware:
    """`BERTH_RATE_LIMIT_PER_MINUTE` requests per connection (OCTO API only): past it,
    TOO_MANY_REQUESTS with `retryAfter` seconds in the body and a `Retry-After` header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection_id = scope.get("state", {}).get("connection_id") if scope["type"] == "http" else None
        if connection_id is not None:
            limiter = _services(scope).rate_limiter
            wait = limiter.check(connection_id)
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                per_minute = _services(scope).settings.rate_limit_per_minute
                error = TooManyRequests(
                    f"Too many requests: this connection may send {per_minute} a minute; "
                    f"retry in {seconds} s",
                    retry_after=seconds,
                )
                response = error_response(error, _capabilities(scope), {"Retry-After": str(seconds)})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """Refuses a body over `BERTH_MAX_BODY_BYTES` with BAD_REQUEST: at once when the declared
    `Content-Length` is over it, else as soon as the bytes received pass it (chunked bodies).
    The body is read here, up to the limit, and handed on whole.

    Also refuses the NUL character (U+0000) anywhere in the path, query or body: no field
    accepts it, and PostgreSQL cannot store it in text (the fuzzer found it as a 500)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = _services(scope).settings.max_body_bytes
        too_large = BadRequest(f"The request body is larger than the limit of {limit} bytes")
        declared = header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await error_response(too_large, _capabilities(scope))(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client has gone: nobody to answer
            body: bytes = message.get("body", b"")
            size += len(body)
            if size > limit:
                await error_response(too_large, _capabilities(scope))(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if _has_nul(scope, body):
            error = BadRequest("The request contains the NUL character (U+0000), which no field accepts")
            await error_response(error, _capabilities(scope))(scope, receive, send)
            return
        whole: dict[str, Any] = {"type": "http.request", "body": body, "more_body": False}
        handed_on = False

        async def replay() -> Message:
            nonlocal handed_on
            if handed_on:
                return await receive()
            handed_on = True
            return whole

        await self.app(scope, replay, send)
