"""Who is calling: a reseller's API key on `/octo/*`, the admin token or a member of staff's API
token on `/admin/api/*`.

Checked before routing and body parsing (`berth.http.gateway`), so a request without a valid
key gets UNAUTHORIZED even when its body is also malformed (OCTO checks auth first).
"""

from __future__ import annotations

import secrets
from typing import Any

from starlette.types import Scope

from berth.capabilities.base import View
from berth.capabilities.registry import parse_capabilities
from berth.container import Services
from berth.domain.errors import Forbidden, OctoError, TooManyRequests, Unauthorized
from berth.domain.guessing import unguessable
from berth.domain.languages import choose_language
from berth.domain.staff import BOOTSTRAP_ADMIN, TOKEN_PREFIX
from berth.http.asgi import header
from berth.http.client_address import client_of
from berth.http.context import OctoRequest


async def authenticate(scope: Scope, state: dict[str, Any], services: Services) -> OctoError | None:
    """The caller of an OCTO or admin API request, into the request state: `octo` and
    `connection_id` for a reseller, `actor` for staff (the routes check its role); the error
    to answer instead, if any. Other paths need no key."""
    path: str = scope["path"]
    if path == "/octo" or path.startswith("/octo/"):
        capabilities = parse_capabilities(header(scope, b"octo-capabilities"))
        state["capabilities"] = capabilities
        return await _reseller(scope, state, services, capabilities)
    if path == "/admin/api" or path.startswith("/admin/api/"):
        return await _admin(scope, state, services)
    return None


def _bearer(scope: Scope) -> str | OctoError:
    value = header(scope, b"authorization")
    if not value:
        return Unauthorized("Send your API key in the header 'Authorization: Bearer <API key>'")
    scheme, _, token = value.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return Unauthorized("The Authorization header must be 'Bearer <API key>'")
    return token


async def _reseller(
    scope: Scope, state: dict[str, Any], services: Services, capabilities: frozenset[str]
) -> OctoError | None:
    token = _bearer(scope)
    if isinstance(token, OctoError):
        return token
    found = await services.connections.authenticate(token)
    if found is None:
        return Unauthorized("The API key is not valid or has been revoked")
    connection, catalog_version = found
    snapshot = services.contracts.snapshot(await services.catalog.snapshot(catalog_version), connection)
    language = choose_language(header(scope, b"accept-language"), snapshot.languages)
    state["connection_id"] = connection.id
    state["octo"] = OctoRequest(
        connection=connection, view=View(capabilities=capabilities, language=language), snapshot=snapshot
    )
    return None


async def _admin(scope: Scope, state: dict[str, Any], services: Services) -> OctoError | None:
    token = _bearer(scope)
    if isinstance(token, OctoError):
        return token
    expected = services.settings.admin_token
    if expected is None:
        return Forbidden("The admin API is disabled: set BERTH_ADMIN_TOKEN to enable it")
    address = client_of(scope, services.settings)
    guessing = [services.guessing.address(address)]
    if secrets.compare_digest(token.encode(), expected.get_secret_value().encode()):
        if not unguessable(expected.get_secret_value()):
            try:  # a short admin token could be guessed: a locked-out address is not told it is right
                await services.guessing.check_recent(guessing[0])
            except TooManyRequests as refused:
                return refused
        state["actor"] = BOOTSTRAP_ADMIN
        return None
    # A staff token is 256 random bits: a right one is no guess, whatever others at its address sent.
    member = await services.staff.by_token(token) if token.startswith(TOKEN_PREFIX) else None
    if member is not None:
        state["actor"] = member.actor
        return None
    try:
        await services.guessing.check_recent(guessing[0])
    except TooManyRequests as refused:
        return refused
    await services.guessing.failed(guessing, address)
    return Unauthorized("The admin token is not valid, nor a staff API token that is in use")
