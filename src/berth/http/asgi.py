"""Small ASGI helpers: request ids, request headers, bodies read whole and handed on."""

from __future__ import annotations

import itertools
import os
import secrets

from starlette.types import Message, Receive, Scope

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
