"""What the auth middleware learns about a request, handed to the routes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from fastapi import Request

from berth.capabilities.base import View
from berth.capabilities.ids import MAPPINGS
from berth.container import Services
from berth.domain.connections import Connection
from berth.services.catalog import CatalogSnapshot


@dataclass(frozen=True)
class OctoRequest:
    connection: Connection
    view: View
    snapshot: CatalogSnapshot


# Dependencies are coroutines: FastAPI runs plain functions in a thread pool, a thread hop
# per request for nothing.
async def octo_request(request: Request) -> OctoRequest:
    octo = request.scope["state"]["octo"]
    assert isinstance(octo, OctoRequest)
    return octo


def services(request: Request) -> Services:
    found = request.app.state.services
    assert isinstance(found, Services)
    return found


# Base URLs by what they are built from: building one costs more than most answers. Bounded,
# as the Host header is the client's to choose.
_ENDPOINTS: dict[tuple[object, ...], str] = {}
MAX_ENDPOINTS = 256


def octo_endpoint(request: Request) -> str:
    """Where resellers reach the OCTO API, as an answer to `request` names it."""
    settings = services(request).settings
    if settings.public_url:
        return settings.octo_endpoint()
    scope = request.scope
    server = scope.get("server")  # a tuple, or a list from some ASGI servers
    key = (
        scope.get("scheme"), tuple(server) if server else None, scope.get("app_root_path"),
        scope.get("root_path"), request.headers.get("host"),
    )  # fmt: skip
    found = _ENDPOINTS.get(key)
    if found is None:
        if len(_ENDPOINTS) >= MAX_ENDPOINTS:
            _ENDPOINTS.clear()
        found = _ENDPOINTS[key] = settings.octo_endpoint(str(request.base_url))
    return found


async def current_services(request: Request) -> Services:
    """`services` as a route dependency (a coroutine, so no thread hop)."""
    return services(request)


async def with_mappings(octo: OctoRequest, svc: Services) -> OctoRequest:
    """The request context for routes that serialize availability or bookings: with
    vendor/mappings requested, its View carries the connection's mapped rows (one query)."""
    if not octo.view.has(MAPPINGS):
        return octo
    rows = await svc.mappings.view_rows(octo.connection.id)
    return replace(octo, view=replace(octo.view, mappings=rows))


async def octo_request_with_mappings(request: Request) -> OctoRequest:
    """`with_mappings` as a route dependency."""
    return await with_mappings(await octo_request(request), services(request))
