"""Gift vouchers in the admin API (/admin/api/gifts): every staff role searches them and reads
one with its ledger and emails; operators and admins cancel one (audited `gift.cancel`). The
back office's Gifts page reads its search with `gift_search` too."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, Field
from starlette.responses import Response

from berth.container import Services
from berth.domain.calendar import out_of_range, supported
from berth.domain.errors import BadRequest, NotFound
from berth.domain.gift_errors import InvalidGiftUuid
from berth.domain.gift_report import LiabilityLine
from berth.domain.gift_search import GiftSearch
from berth.domain.gifts import GiftDetails, GiftStatus, Movement
from berth.domain.staff import Actor
from berth.domain.statements import Month
from berth.domain.times import format_utc, format_utc_or_none
from berth.http.admin.roles import operator
from berth.http.context import current_services
from berth.http.octo.schemas import ADMIN_ERROR_RESPONSES
from berth.http.responses import json_response
from berth.http.types import MAX_OFFSET
from berth.views.mail import message_json

router = APIRouter(responses=ADMIN_ERROR_RESPONSES)


def _day(text: str, what: str) -> date:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"{what} {text!r} is not a date like 2026-06-02") from None
    if not supported(day):
        raise BadRequest(out_of_range(what, day))
    return day


def gift_search(
    code: str = "", buyer: str = "", recipient: str = "", status: str = "", start: str = "", end: str = ""
) -> GiftSearch:
    """The search typed (blank: any); the days are UTC, `end` included. BAD_REQUEST naming
    what is wrong."""
    wanted = status.strip().upper()
    if wanted and wanted not in GiftStatus.__members__:
        raise BadRequest(f"{status!r} is not a gift's status: {', '.join(GiftStatus)}")
    sold_from = datetime.combine(_day(start.strip(), "The first day"), time(), UTC) if start.strip() else None
    sold_before = (
        datetime.combine(_day(end.strip(), "The last day") + timedelta(days=1), time(), UTC)
        if end.strip()
        else None
    )
    if sold_from and sold_before and sold_before <= sold_from:
        raise BadRequest("The last day is before the first day")
    return GiftSearch(
        code=code.strip()[:100] or None, buyer=buyer.strip()[:255] or None,
        recipient=recipient.strip()[:255] or None, status=GiftStatus(wanted) if wanted else None,
        sold_from=sold_from, sold_before=sold_before,
    )  # fmt: skip


def _search_query(
    code: str = Query(default="", description="A gift code as typed (any case, spaces, dashes), a supplier "
                      "or reseller reference, or the code's last four characters"),
    buyer: str = Query(default="", description="Part of the buyer's name or email address"),
    recipient: str = Query(default="", description="Part of the recipient's name or email address"),
    status: str = Query(default="", description="ON_HOLD, CONFIRMED, CANCELLED or EXPIRED (as it stands now)"),
    start: str = Query(default="", alias="from", description="Sold on or after this day (UTC)"),
    end: str = Query(default="", alias="to", description="Sold on or before this day (UTC)"),
) -> GiftSearch:  # fmt: skip
    return gift_search(code, buyer, recipient, status, start, end)


async def staff_gift(svc: Services, gift_id: str) -> GiftDetails:
    """A gift by its id, NOT_FOUND when there is none."""
    try:
        return await svc.gifts.gift(gift_id)
    except InvalidGiftUuid:
        raise NotFound(f"No gift voucher has the id {gift_id!r}") from None


def movement_json(movement: Movement) -> dict[str, Any]:
    return {
        "kind": movement.kind.value, "amount": movement.amount, "at": format_utc(movement.at),
        "actor": movement.actor, "bookingId": movement.booking_id,
    }  # fmt: skip


def gift_json(details: GiftDetails, now: datetime) -> dict[str, Any]:
    """A gift as staff see it: never its code, only the code's last four characters."""
    gift = details.gift
    return {
        "id": gift.id, "uuid": gift.uuid, "connectionId": gift.connection_id,
        "supplierReference": gift.supplier_reference, "resellerReference": gift.reseller_reference,
        "status": gift.status_at(now).value, "currency": gift.currency,
        "currencyPrecision": gift.currency_precision, "amount": gift.amount, "net": gift.net,
        "balance": details.balance, "codeHint": gift.code_hint, "testMode": gift.test_mode,
        "settlementMethod": gift.settlement_method.value, "contact": gift.contact.to_document(),
        "recipient": gift.recipient.to_document() if gift.recipient else None,
        "createdAt": format_utc(gift.created_at), "confirmedAt": format_utc_or_none(gift.confirmed_at),
        "expiresAt": format_utc(gift.expires_at), "cancelledAt": format_utc_or_none(gift.cancelled_at),
        "cancellationReason": gift.cancellation_reason,
    }  # fmt: skip


def liability_json(line: LiabilityLine) -> dict[str, Any]:
    return {
        "currency": line.currency, "opening": line.opening, "issued": line.issued,
        "redeemed": line.redeemed, "reversed": line.reversed, "expired": line.expired,
        "cancelled": line.cancelled, "closing": line.closing,
    }  # fmt: skip


class GiftCancelBody(BaseModel):
    reason: str | None = Field(default=None, max_length=1000)


@router.get("/gifts", summary="Search the gift vouchers of every connection, newest first")
async def search_gifts(
    search: GiftSearch = Depends(_search_query),
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=MAX_OFFSET),
    svc: Services = Depends(current_services),
) -> Response:
    found, total = await svc.gifts.search(search, limit, offset)
    now = svc.clock()
    return json_response(
        {"total": total, "limit": limit, "offset": offset, "gifts": [gift_json(d, now) for d in found]}
    )


@router.get(
    "/gifts/report/{month}",
    summary="The month's gift liability per currency: opening, issued, redeemed, reversed, expired, "
    "cancelled, closing (UTC; test gifts aside)",
)
async def gifts_report(month: str, svc: Services = Depends(current_services)) -> Response:
    period = Month.parse(month)
    lines = await svc.gifts.liability(period.starts_at(), period.next.starts_at())
    return json_response({"month": str(period), "currencies": [liability_json(line) for line in lines]})


@router.get("/gifts/{giftId}", summary="One gift voucher with its ledger (movements) and its emails")
async def get_gift(giftId: str, svc: Services = Depends(current_services)) -> Response:
    details = await staff_gift(svc, giftId)
    messages = await svc.mail.messages_of_gift(giftId)
    return json_response(
        {
            "gift": gift_json(details, svc.clock()),
            "movements": [movement_json(m) for m in details.movements],
            "emails": [message_json(m) for m in messages],
        }
    )


@router.post(
    "/gifts/{giftId}/cancel",
    summary="Cancel a gift voucher on hold, or issued and unused: what is left of it is cancelled",
    description="Audited (`gift.cancel`). Refused (UNPROCESSABLE_ENTITY) when bookings hold part of it, "
    "or it expired. What the buyer paid is not refunded by Berth: that refund is made by hand.",
)
async def cancel_gift(
    giftId: str,
    body: GiftCancelBody | None = Body(default=None),
    actor: Actor = Depends(operator),
    svc: Services = Depends(current_services),
) -> Response:
    await staff_gift(svc, giftId)
    details = await svc.gifts.staff_cancel(giftId, body.reason if body else None, actor=actor)
    return json_response(
        {"gift": gift_json(details, svc.clock()), "movements": [movement_json(m) for m in details.movements]}
    )
