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

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from berth.container import Services
from berth.domain.errors import BadRequest, OctoError, TooManyRequests
from berth.http.errors import error_response
from berth.http.middleware import header, replaying

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

    A timer, not a task per request (a task and a wait cost more than some answers): at the
    deadline the answer goes out at once from a task of its own, and the request's task is
    cancelled. Work blocked in a driver thread (waiting for SQLite's write lock) may take a
    while to unwind; it does so after the answer, rolling back its transaction, and whatever it
    still sends is dropped.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        services = _services(scope)
        seconds = services.settings.request_timeout_seconds if scope["type"] == "http" else 0
        request = asyncio.current_task()
        if not seconds or request is None:
            await self.app(scope, receive, send)
            return
        started = expired = False
        answer: asyncio.Task[None] | None = None

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if expired:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        def expire() -> None:
            nonlocal expired, answer
            expired = True
            log.warning("request timed out", method=scope["method"], path=scope["path"], seconds=seconds)
            if not started:  # else part of the answer is out: nothing better to do than to end it
                error = OctoError(
                    f"The request did not finish within {seconds:g} s and was stopped; "
                    "repeat it to learn its outcome"
                )
                answer = asyncio.create_task(
                    error_response(error, _capabilities(scope))(scope, receive, send)
                )
            services.unwinding.add(request)
            request.cancel()

        timer = asyncio.get_running_loop().call_later(seconds, expire)
        try:
            await self.app(scope, receive, guarded_send)
        except asyncio.CancelledError:
            if not expired or request.uncancel() > 0:  # cancelled by someone else too: the server
                raise
        except Exception as exc:
            if not expired:
                raise
            log.warning("timed-out request failed while stopping", error=type(exc).__name__)
        finally:
            timer.cancel()
            services.unwinding.discard(request)
        if answer is not None:
            await answer


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


class RateLimitMiddleware:
    """`BERTH_RATE_LIMIT_PER_MINUTE` requests per connection (OCTO API only): past it,
    TOO_MANY_REQUESTS with `retryAfter` seconds in the body and a `Retry-After` header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        connection_id = scope.get("state", {}).get("connection_id") if scope["type"] == "http" else None
        if connection_id is not None and _services(scope).settings.rate_limit_per_minute > 0:
            limiter = _services(scope).rate_limiter
            wait = await limiter.check(connection_id)
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
        await self.app(scope, replaying(body, receive), send)
