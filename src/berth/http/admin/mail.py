"""Guests' emails for the box office and staff: the outbox (or the demo's mailbox), one
message with its text and HTML, a booking's messages, and sending a booking's receipt."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain.staff import Actor
from berth.http.admin.roles import operator
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.http.types import MAX_OFFSET
from berth.store.mail_repo import STATUSES
from berth.views.mail import message_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


class ReceiptBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    to: str | None = Field(
        default=None, max_length=254, description="Send it to this address instead of the guest's"
    )


@router.get("/mail", summary="Guests' emails, newest first (the mailbox when no SMTP server is set)")
async def list_mail(
    status: str | None = Query(default=None, pattern="^(" + "|".join(STATUSES) + ")$"),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(current_services),
) -> Response:
    found, total = await svc.mail.outbox(status, limit, offset)
    return json_response({"messages": [message_json(m) for m in found], "total": total})


@router.get("/mail/{messageId}", summary="One email with its text and HTML bodies")
async def get_mail(messageId: str, svc: Services = Depends(current_services)) -> Response:
    return json_response(message_json(await svc.mail.message(messageId), bodies=True))


@router.get("/bookings/{bookingId}/mail", summary="The emails of a booking (and of its order)")
async def booking_mail(bookingId: str, svc: Services = Depends(current_services)) -> Response:
    catalog = (await svc.catalog.snapshot()).catalog
    details, _ = await svc.staff_bookings.get(catalog, bookingId)
    return json_response({"messages": [message_json(m) for m in await svc.mail.messages_of(details.booking)]})


@router.post(
    "/bookings/{bookingId}/receipt",
    summary="Email the guest the booking's receipt (again), as the booking stands now",
)
async def send_receipt(
    bookingId: str,
    body: ReceiptBody | None = Body(default=None),
    actor: Actor = Depends(operator),
    svc: Services = Depends(current_services),
) -> Response:
    return json_response(
        message_json(await svc.mail.send_receipt(bookingId, actor, body.to if body else None))
    )
