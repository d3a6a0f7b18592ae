"""The supplier's JSON API under /admin/api (admin token or a staff token): connections and the
catalogue, both the admin role's to change."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain.catalog.document import CatalogFileError
from berth.domain.catalog_changes import ImportRefused
from berth.domain.errors import BadRequest
from berth.domain.staff import Actor
from berth.http.admin.roles import admin
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.views.catalog_changes import changes_json
from berth.views.connections import connection_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


class ConnectionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)


class ConnectionOut(BaseModel):
    id: str
    name: str
    keyHint: str
    createdAt: str
    revokedAt: str | None
    active: bool


class ConnectionCreated(BaseModel):
    connection: ConnectionOut
    apiKey: str = Field(description="Shown once: only its hash is stored")
    signingSecret: str = Field(description="Signs this connection's webhook deliveries (Standard Webhooks)")


@router.get("/connections", response_model=list[ConnectionOut])
async def list_connections(svc: Services = Depends(current_services)) -> Response:
    return json_response([connection_json(c) for c in await svc.connections.list()])


@router.post("/connections", response_model=ConnectionCreated)
async def create_connection(
    body: ConnectionCreate, actor: Actor = Depends(admin), svc: Services = Depends(current_services)
) -> Response:
    connection, key, secret = await svc.connections.create(body.name, actor=actor)
    return json_response({"connection": connection_json(connection), "apiKey": key, "signingSecret": secret})


@router.post("/connections/{connectionId}/revoke", response_model=ConnectionOut)
async def revoke_connection(
    connectionId: str, actor: Actor = Depends(admin), svc: Services = Depends(current_services)
) -> Response:
    return json_response(connection_json(await svc.connections.revoke(connectionId, actor=actor)))


@router.get(
    "/catalog",
    summary="The catalogue as a YAML file (the format `berth catalog import` reads)",
    response_class=Response,
    responses={200: {"content": {"application/yaml": {}}}},
)
async def export_catalog(svc: Services = Depends(current_services)) -> Response:
    return Response(await svc.catalog.export_text(), media_type="application/yaml")


@router.put(
    "/catalog",
    summary="Replace the catalogue with a YAML (or JSON) catalogue file; all or nothing",
    description=(
        "Answers what the import changes: products, options and units added, changed or removed; "
        "departures that lose places up to the last date with live bookings; and the live bookings "
        "in the way. An import that removes or shrinks what live bookings hold is refused (400, with "
        "`conflicts`) unless `force=true`. `dryRun=true` answers the same and stores nothing."
    ),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/yaml": {"schema": {"type": "string"}}, "application/json": {}},
        }
    },
)
async def import_catalog(
    request: Request,
    dryRun: bool = Query(default=False, description="true: answer what would change, store nothing"),
    force: bool = Query(default=False, description="true: import even over live bookings it hurts"),
    actor: Actor = Depends(admin),
    svc: Services = Depends(current_services),
) -> Response:
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The catalogue file must be UTF-8 text") from None
    try:
        outcome = await svc.catalog.import_text(text, actor=actor, dry_run=dryRun, force=force)
    except CatalogFileError as exc:
        problems = [{"line": p.line, "path": p.path, "message": p.message} for p in exc.problems]
        error = BadRequest(f"The catalogue file has {len(problems)} problem(s); nothing was imported")
        return json_response({**error.body(), "problems": problems}, status_code=400)
    except ImportRefused as exc:
        error = BadRequest(f"{exc.message} (conflicts lists them; force=true imports anyway)")
        return json_response({**error.body(), **changes_json(exc.changes)}, status_code=400)
    return json_response(
        {
            "dryRun": dryRun,
            "imported": outcome.version is not None,
            "version": outcome.version,
            "products": len(outcome.catalog.products),
            **changes_json(outcome.changes),
        }
    )
