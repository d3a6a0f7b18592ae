"""Who is calling the admin API, and the role a route needs.

A route that changes something takes its caller as a dependency that also checks the role,
and hands the caller on to the service, which records it in the audit trail:

    async def redeem(bookingId: str, actor: Actor = Depends(operator), ...) -> Response:
        ... await svc.staff_bookings.redeem(catalog, bookingId, actor=actor)

A caller without the role gets FORBIDDEN (403) before the route runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import Request

from berth.domain.staff import Actor, Role


def caller(request: Request) -> Actor:
    """The admin API's caller, as the auth middleware found it."""
    found = request.scope["state"]["actor"]
    assert isinstance(found, Actor)
    return found


def require_role(needed: Role) -> Callable[[Request], Awaitable[Actor]]:
    """A dependency: the caller, if their role allows `needed`; else RoleRefused (FORBIDDEN)."""

    async def check(request: Request) -> Actor:
        actor = caller(request)
        actor.require(needed, f"{request.method} {request.url.path}")
        return actor

    return check


viewer = require_role(Role.VIEWER)
operator = require_role(Role.OPERATOR)
admin = require_role(Role.ADMIN)
editor = require_role(Role.EDITOR)  # the catalogue: editors and admins
