"""The supplier's JSON API under /admin/api (admin token or a staff token): connections and the
catalogue, both the admin role's to change."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain.catalog.document import CatalogFileError, read_yaml
from berth.domain.catalog_changes import ImportRefused
from berth.domain.catalog_history import Door
from berth.domain.contracts import ALL
from berth.domain.errors import BadRequest
from berth.domain.staff import Actor
from berth.domain.times import format_utc
from berth.http.admin.roles import admin, editor
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES, OctoErrorBody
from berth.http.responses import json_response
from berth.services.catalog import ImportOutcome
from berth.services.contracts import SavedContract
from berth.store.tables import LAST_VERSION
from berth.views.catalog_changes import changes_json
from berth.views.connections import connection_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)
CAP_NETS = (
    "true: save even though contracts' nets end above the retail they apply to; those are sold at "
    "the retail (no commission) until their contracts change"
)


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
    version, text = await svc.catalog.export()
    # The version to send back as `baseVersion` with the edited file.
    return Response(text, media_type="application/yaml", headers={"Catalog-Version": str(version)})


@router.put(
    "/catalog",
    summary="Replace the catalogue with a YAML (or JSON) catalogue file; all or nothing",
    responses={
        409: {"model": OctoErrorBody, "description": "CONFLICT: the catalogue changed since `baseVersion`"}
    },
    description=(
        "Answers what the import changes: products, options and units added, changed or removed; "
        "departures that lose places up to the last date with live bookings; the live bookings "
        "in the way; and the contract nets it puts above the retail they apply to. An import that "
        "removes or shrinks what live bookings hold is refused (400, with `conflicts`) unless "
        "`force=true`; one that puts contract nets above the retail is refused (400, with "
        "`netsAboveRetail`) unless `capNets=true` (those nets are sold at the retail, no commission, "
        "until their contracts change). `dryRun=true` answers the same and stores nothing."
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
    capNets: bool = Query(default=False, description=CAP_NETS),
    baseVersion: int | None = Query(
        default=None,
        ge=0,
        le=LAST_VERSION,
        description="The catalogue version the file was made from: if another save came since, the "
        "import is refused with 409 CONFLICT naming what that save changed",
    ),
    actor: Actor = Depends(editor),
    svc: Services = Depends(current_services),
) -> Response:
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The catalogue file must be UTF-8 text") from None
    try:
        outcome = await svc.catalog.import_text(
            text,
            actor=actor,
            door=Door.API,
            dry_run=dryRun,
            force=force,
            cap_nets=capNets,
            base_version=baseVersion,
        )
    except (CatalogFileError, ImportRefused) as exc:
        return _refusal(exc)
    return _saved(outcome, dryRun)


def _refusal(exc: CatalogFileError | ImportRefused) -> Response:
    if isinstance(exc, CatalogFileError):
        problems = [{"line": p.line, "path": p.path, "message": p.message} for p in exc.problems]
        error = BadRequest(f"The catalogue file has {len(problems)} problem(s); nothing was imported")
        return json_response({**error.body(), "problems": problems}, status_code=400)
    choices = [
        choice
        for choice, refused in (
            ("conflicts lists them; force=true imports anyway", exc.bookings),
            ("netsAboveRetail lists them; capNets=true sells them at the retail", exc.nets),
        )
        if refused
    ]
    error = BadRequest(f"{exc.message} ({'; '.join(choices)})")
    return json_response({**error.body(), **changes_json(exc.changes)}, status_code=400)


def _saved(outcome: ImportOutcome, dry_run: bool) -> Response:
    return json_response(
        {
            "dryRun": dry_run,
            "imported": outcome.version is not None,
            "version": outcome.version,
            "baseVersion": outcome.base_version,
            "products": len(outcome.catalog.products),
            **changes_json(outcome.changes),
        }
    )


class CatalogVersionOut(BaseModel):
    version: int
    createdAt: str
    actor: str
    actorRole: str
    door: str = Field(
        description="editor (the back office), api, cli, or setup (the demo, or before the history)"
    )
    summary: str


@router.get(
    "/catalog/versions",
    response_model=list[CatalogVersionOut],
    summary="The catalogue's versions, newest first: who saved each, when, through which door, and what it changed",
)
async def catalog_versions(
    limit: int = Query(default=50, ge=1, le=500),
    before: int | None = Query(default=None, description="Only versions older than this one (the next page)"),
    svc: Services = Depends(current_services),
) -> Response:
    return json_response(
        [
            {
                "version": v.version,
                "createdAt": v.created_at.isoformat(),
                "actor": v.actor,
                "actorRole": v.actor_role,
                "door": v.door.value,
                "summary": v.summary,
            }
            for v in await svc.catalog.versions(limit=limit, before=before)
        ]
    )


@router.get(
    "/catalog/versions/{version}",
    summary="One catalogue version as a YAML file (the format `berth catalog import` reads)",
    response_class=Response,
    responses={200: {"content": {"application/yaml": {}}}},
)
async def catalog_version(version: int, svc: Services = Depends(current_services)) -> Response:
    _, document = await svc.catalog.version_document(version)
    return Response(document, media_type="application/yaml")


@router.post(
    "/catalog/versions/{version}/restore",
    summary="Save a version's document as a new version, with the checks of an import",
    description="Answers as `PUT /admin/api/catalog`; `dryRun`, `force` and `capNets` work the same way.",
)
async def restore_catalog_version(
    version: int,
    dryRun: bool = Query(default=False, description="true: answer what would change, store nothing"),
    force: bool = Query(default=False, description="true: restore even over live bookings it hurts"),
    capNets: bool = Query(default=False, description=CAP_NETS),
    actor: Actor = Depends(editor),
    svc: Services = Depends(current_services),
) -> Response:
    try:
        outcome = await svc.catalog.restore(
            version, actor=actor, door=Door.API, dry_run=dryRun, force=force, cap_nets=capNets
        )
    except (CatalogFileError, ImportRefused) as exc:
        return _refusal(exc)
    return _saved(outcome, dryRun)


# --- contracts ---------------------------------------------------------------------------------


def _contract_json(saved: SavedContract) -> dict[str, Any]:
    return {
        "connectionId": saved.connection.id,
        "connectionName": saved.connection.name,
        "version": saved.version,
        "rateKind": saved.contract.rate.kind,
        "contract": {"products": ALL, **saved.contract.to_document()},
    }


@router.get(
    "/connections/{connectionId}/contract",
    summary="A connection's contract: what it may sell, its rate, validity and terms, with its version",
)
async def get_contract(connectionId: str, svc: Services = Depends(current_services)) -> Response:
    connection = await svc.contracts.get(connectionId)
    return json_response(
        _contract_json(SavedContract(connection, connection.contract, connection.contract_version))
    )


@router.put(
    "/connections/{connectionId}/contract",
    summary="Replace a connection's contract with a YAML or JSON document (the `contract` of GET)",
    responses={
        409: {"model": OctoErrorBody, "description": "CONFLICT: the contract changed since `baseVersion`"}
    },
)
async def put_contract(
    connectionId: str,
    request: Request,
    baseVersion: int | None = Query(
        default=None,
        ge=0,
        le=LAST_VERSION,
        description="The contract version the document was made from: if another save came since, "
        "the save is refused with 409 CONFLICT",
    ),
    actor: Actor = Depends(editor),
    svc: Services = Depends(current_services),
) -> Response:
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The contract must be UTF-8 text") from None
    try:
        document = read_yaml(text)
    except CatalogFileError as exc:
        raise BadRequest(
            "The contract could not be read as YAML or JSON: " + "; ".join(str(p) for p in exc.problems)
        ) from None
    document = (
        document.get("contract", document)
        if isinstance(document, dict) and "version" in document
        else document
    )
    saved = await svc.contracts.save(connectionId, document, base_version=baseVersion, actor=actor)
    return json_response(_contract_json(saved))


@router.get(
    "/connections/{connectionId}/contract/versions",
    summary="A connection's contract versions, newest first: who saved each, when, and what changed",
)
async def contract_versions(connectionId: str, svc: Services = Depends(current_services)) -> Response:
    return json_response(
        [
            {
                "version": v.version,
                "createdAt": format_utc(v.created_at),
                "actor": v.actor,
                "actorRole": v.actor_role,
                "summary": v.summary,
                "contract": v.contract.to_document(),
            }
            for v in await svc.contracts.versions(connectionId)
        ]
    )


@router.post(
    "/connections/{connectionId}/contract/versions/{version}/restore",
    summary="Make an earlier contract version the current one (saved as a new version)",
)
async def restore_contract(
    connectionId: str, version: int, actor: Actor = Depends(editor), svc: Services = Depends(current_services)
) -> Response:
    return json_response(_contract_json(await svc.contracts.restore(connectionId, version, actor=actor)))
