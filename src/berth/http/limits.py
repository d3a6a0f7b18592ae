"""What one request may cost besides its run time (`berth.http.gateway` stops it at its
deadline): how often its connection may call, and its body's size. Each refusal is an OCTO
error the gateway answers.

The gateway asks in this order: authentication, rate limit, body. So a request without a valid
key is refused before anything is counted or read.
"""

from __future__ import annotations

import math
import re

from starlette.types import Receive, Scope

from berth.container import Services
from berth.domain.errors import BadRequest, OctoError, TooManyRequests


async def rate_limited(connection_id: str | None, services: Services) -> TooManyRequests | None:
    """`BERTH_RATE_LIMIT_PER_MINUTE` requests per connection (OCTO API only): past it,
    TOO_MANY_REQUESTS with `retryAfter` seconds (answered with a `Retry-After` header too)."""
    per_minute = services.settings.rate_limit_per_minute
    if connection_id is None or per_minute <= 0:
        return None
    wait = await services.rate_limiter.check(connection_id)
    if wait <= 0:
        return None
    seconds = max(1, math.ceil(wait))
    return TooManyRequests(
        f"Too many requests: this connection may send {per_minute} a minute; retry in {seconds} s",
        retry_after=seconds,
    )


# A JSON string escape \u0000 that is not itself an escaped backslash followed by "u0000".
_JSON_NUL = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


BAD_NUL = BadRequest("The request contains the NUL character (U+0000), which no field accepts")


def _has_nul(scope: Scope, body: bytes) -> bool:
    query: bytes = scope.get("query_string", b"")
    return (
        "\x00" in scope["path"]
        or b"%00" in query
        or b"\x00" in query
        or b"\x00" in body
        or (b"\\u0000" in body and _JSON_NUL.search(body) is not None)
    )


def _framing(scope: Scope) -> tuple[str | None, bool]:
    """The request's declared Content-Length, and whether it has a Transfer-Encoding."""
    declared: str | None = None
    encoded = False
    for key, value in scope["headers"]:
        if key == b"content-length":
            declared = value.decode("latin-1")
        elif key == b"transfer-encoding":
            encoded = True
    return declared, encoded


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes | OctoError | None:
    """The request body read whole, or the error to answer, or None when the client has gone.

    Refuses a body over `limit` bytes (`BERTH_MAX_BODY_BYTES`) with BAD_REQUEST: at once when the
    declared Content-Length is over it, else as soon as the bytes received pass it (chunked
    bodies). Also refuses the NUL character (U+0000) anywhere in the path, query or body: no
    field accepts it, and PostgreSQL cannot store it in text (the fuzzer found it as a 500).
    A request with neither a length nor a transfer encoding has no body (RFC 9112 6.3): it is
    not waited for."""
    declared, encoded = _framing(scope)
    if declared is None and not encoded:
        return BAD_NUL if _has_nul(scope, b"") else b""
    too_large = BadRequest(f"The request body is larger than the limit of {limit} bytes")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        return too_large
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None  # nobody to answer
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return too_large
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return BAD_NUL if _has_nul(scope, body) else body
