"""Webhooks and deliveries for staff: every attempt, redelivery, secret rotation."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from berth.container import Services
from berth.domain.staff import Actor
from berth.domain.times import format_utc_or_none
from berth.http.admin.roles import admin
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.http.types import MAX_OFFSET, IsoDateTime
from berth.store.deliveries_repo import Delivery
from berth.views.webhooks import webhook_view

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


def delivery_json(delivery: Delivery, *, with_payload: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": delivery.id,
        "kind": delivery.kind,
        "event": delivery.event,
        "webhookId": delivery.webhook_id,
        "connectionId": delivery.connection_id,
        "subject": delivery.subject_key,
        "url": delivery.url,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "createdAt": format_utc_or_none(delivery.created_at),
        "nextAttemptAt": format_utc_or_none(delivery.next_attempt_at),
        "deliveredAt": format_utc_or_none(delivery.delivered_at),
    }
    if with_payload:
        out["payload"] = delivery.payload
    return out


@router.get("/webhooks", summary="Every connection's webhooks, a page at a time (total in X-Total-Count)")
async def list_webhooks(
    limit: int = Query(default=100, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(current_services),
) -> Response:
    hooks, total = await svc.webhooks.page(limit, offset)
    return json_response(
        [
            {
                **webhook_view(w),
                "connectionId": w.connection_id,
                "disabledAt": format_utc_or_none(w.disabled_at),
                "disabledReason": w.disabled_reason,
            }
            for w in hooks
        ],
        headers={"X-Total-Count": str(total)},
    )


@router.get("/webhooks/{webhookId}/deliveries", summary="A webhook's deliveries, newest first")
async def webhook_deliveries(
    webhookId: str,
    status: str | None = None,
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(current_services),
) -> Response:
    await svc.webhooks.webhook(webhookId)
    found, total = await svc.webhooks.deliveries(
        webhook_id=webhookId, status=status, limit=limit, offset=offset
    )
    return json_response({"total": total, "deliveries": [delivery_json(d) for d in found]})


@router.post("/webhooks/{webhookId}/redeliver", summary="Send again every delivery since a time")
async def redeliver_since(
    webhookId: str,
    since: IsoDateTime,
    actor: Actor = Depends(admin),
    svc: Services = Depends(current_services),
) -> Response:
    return json_response({"requeued": await svc.webhooks.redeliver_since(webhookId, since, actor=actor)})


@router.get("/deliveries", summary="Deliveries of every kind, newest first")
async def list_deliveries(
    status: str | None = None,
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(current_services),
) -> Response:
    found, total = await svc.webhooks.deliveries(status=status, limit=limit, offset=offset)
    return json_response({"total": total, "deliveries": [delivery_json(d) for d in found]})


@router.get("/deliveries/{deliveryId}", summary="One delivery with its payload and every attempt")
async def get_delivery(deliveryId: str, svc: Services = Depends(current_services)) -> Response:
    delivery, attempts = await svc.webhooks.delivery(deliveryId)
    return json_response({**delivery_json(delivery, with_payload=True), "attemptLog": attempts})


@router.post("/deliveries/{deliveryId}/redeliver", summary="Send one delivery again (same message id)")
async def redeliver(
    deliveryId: str, actor: Actor = Depends(admin), svc: Services = Depends(current_services)
) -> Response:
    return json_response(delivery_json(await svc.webhooks.redeliver(deliveryId, actor=actor)))


@router.post(
    "/connections/{connectionId}/rotate-secret", summary="New signing secret; the old one signs for 24 h"
)
async def rotate_secret(
    connectionId: str,
    graceHours: float = Query(default=24, ge=0, le=720),
    actor: Actor = Depends(admin),
    svc: Services = Depends(current_services),
) -> Response:
    connection = await svc.connections.get(connectionId)
    secret = await svc.webhooks.rotate_secret(connection.id, timedelta(hours=graceHours), actor=actor)
    return json_response({"connectionId": connection.id, "signingSecret": secret})
