"""The offers document in the admin API (/admin/api/offers): read by every staff role; saved
(YAML or JSON, refused on a stale `baseVersion`) and restored by the roles that change contracts,
editors and admins. The back office's Offers page reads a document with `read_offers` too."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from berth.container import Services
from berth.domain.catalog.document import CatalogFileError, read_yaml
from berth.domain.errors import BadRequest
from berth.domain.staff import Actor
from berth.domain.times import format_utc_or_none
from berth.http.admin.roles import editor
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES, OctoErrorBody
from berth.http.responses import json_response
from berth.store.offers_repo import OffersVersion
from berth.store.tables import LAST_VERSION

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)
_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/yaml": {"schema": {"type": "string"}}, "application/json": {}},
    }
}


def read_offers(text: str) -> Any:
    """The document `text` writes (YAML or JSON): `{offers: [...]}`, or GET's whole answer, whose
    `document` it is. BAD_REQUEST, naming each line in error, when it cannot be read."""
    try:
        document = read_yaml(text)
    except CatalogFileError as exc:
        problems = [str(p) for p in exc.problems]
        raise BadRequest(
            "The offers could not be read as YAML or JSON: " + "; ".join(problems), problems=problems
        ) from None
    if document is None:
        raise BadRequest("The offers document is empty: send {offers: []} to remove every offer")
    if isinstance(document, dict) and "document" in document and "offers" not in document:
        return document["document"]
    return document


def version_json(version: OffersVersion) -> dict[str, Any]:
    return {
        "version": version.version,
        "createdAt": format_utc_or_none(version.created_at),
        "actor": version.actor,
        "actorRole": version.actor_role,
        "summary": version.summary,
        "document": {"offers": [], **version.document.to_document()},  # no offers: `offers: []`
    }


async def _answer(svc: Services, version: OffersVersion) -> Response:
    return json_response({**version_json(version), "uses": await svc.offers.use_counts()})


@router.get(
    "/offers",
    summary="The offers document (octo/offers) with its version, and each offer's uses by live bookings",
    description="`document` can be sent back to `PUT /admin/api/offers` as it is, or GET's whole answer.",
)
async def get_offers(svc: Services = Depends(current_services)) -> Response:
    return await _answer(svc, (await svc.offers.current()).version)


@router.put(
    "/offers",
    summary="Replace the offers document with a YAML or JSON document (`{offers: [...]}`); all or nothing",
    description=(
        "Saved as the next version and audited (`offers.save`). A document in error is refused "
        "(400) naming every problem in `problems`: each field in error, and each product, option, "
        "unit or channel the catalogue and the connections do not have; nothing is saved."
    ),
    responses={
        409: {"model": OctoErrorBody, "description": "CONFLICT: the offers changed since `baseVersion`"}
    },
    openapi_extra=_BODY,
)
async def put_offers(
    request: Request,
    baseVersion: int | None = Query(
        default=None,
        ge=0,
        le=LAST_VERSION,
        description="The version the document was made from: if another save came since, the save is "
        "refused with 409 CONFLICT. Without it the save is made over whatever version is current",
    ),
    actor: Actor = Depends(editor),
    svc: Services = Depends(current_services),
) -> Response:
    try:
        text = (await request.body()).decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("The offers must be UTF-8 text") from None
    saved = await svc.offers.save(read_offers(text), base_version=baseVersion, actor=actor)
    return await _answer(svc, saved)


@router.get(
    "/offers/versions",
    summary="The offers' versions, newest first: who saved each, when, what changed, and its document",
)
async def offers_versions(
    limit: int = Query(default=100, ge=1, le=500), svc: Services = Depends(current_services)
) -> Response:
    return json_response([version_json(v) for v in await svc.offers.versions(limit=limit)])


@router.post(
    "/offers/versions/{version}/restore",
    summary="Make an earlier version of the offers the current one (saved as a new version)",
    description="Checked against today's catalogue and connections like a save (400 naming each problem).",
)
async def restore_offers(
    version: int, actor: Actor = Depends(editor), svc: Services = Depends(current_services)
) -> Response:
    return await _answer(svc, await svc.offers.restore(version, actor=actor))
