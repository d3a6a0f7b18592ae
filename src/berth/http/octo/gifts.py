"""Gift vouchers over OCTO (octo/gifts): POST /gifts, PATCH /gifts/{uuid}, POST
/gifts/{uuid}/confirm and /cancel, GET /gifts/{uuid}, GET /gifts with Ventrata's filters."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Header, Query
from pydantic import Field
from starlette.responses import Response

from berth.capabilities.gifts.views import gift_json
from berth.container import Services
from berth.domain import lengths
from berth.domain.errors import BadRequest
from berth.domain.gift_errors import InvalidGiftUuid
from berth.domain.gifts import GiftDetails, GiftInput, SettlementMethod
from berth.domain.languages import accepted_locales
from berth.http.context import OctoRequest, current_services, octo_request
from berth.http.octo.common import octo_response
from berth.http.octo.requests import (
    ClientUuid,
    ContactBody,
    Currency,
    GiftPaymentBody,
    Lenient,
    Text,
    is_uuid,
)
from berth.http.octo.schemas import ERROR_RESPONSES, GiftOut
from berth.http.types import Flag, IsoDateTime, Whole
from berth.store.gifts_repo import GiftFilter

router = APIRouter(responses=ERROR_RESPONSES)
Message = Annotated[str, Field(max_length=lengths.TEXT)]


class GiftBody(Lenient):
    """Ventrata's CreateGiftBody and UpdateGiftBody, with `uuid` (your idempotency key) and
    `recipient` (to whom the voucher is sent). `amount` is in minor units, as every amount."""

    uuid: ClientUuid | None = None
    amount: Whole | None = None
    currency: Currency | None = None
    contact: ContactBody | None = None
    recipient: ContactBody | None = None
    message: Message | None = None
    notes: Text | None = None
    resellerReference: Text | None = None
    alias: Text | None = None
    emailReceipt: Flag | None = None
    expirationMinutes: Annotated[Whole, Field(ge=1)] | None = None
    settlementMethod: SettlementMethod | None = None
    giftPayment: GiftPaymentBody | None = None
    offerCode: Text | None = None

    def input(self) -> GiftInput:
        if self.giftPayment is not None:
            raise BadRequest("giftPayment: a gift voucher cannot be paid with another gift voucher")
        if self.offerCode is not None:
            raise BadRequest("offerCode: offers do not apply to gift vouchers", offerCode=self.offerCode)
        return GiftInput(
            uuid=self.uuid,
            amount=self.amount,
            currency=self.currency,
            contact=self.contact.contact() if self.contact is not None else None,
            recipient=self.recipient.contact() if self.recipient is not None else None,
            message=self.message,
            notes=self.notes,
            reseller_reference=self.resellerReference,
            alias=self.alias,
            email_receipt=self.emailReceipt,
            expiration_minutes=self.expirationMinutes,
            settlement_method=self.settlementMethod,
        )


class CancelGiftBody(Lenient):
    reason: Text | None = None


def _answer(octo: OctoRequest, svc: Services, details: GiftDetails) -> Response:
    return octo_response(octo, gift_json(details, octo.view, svc.clock()))


def _known(uuid: str) -> str:
    if not is_uuid(uuid):
        raise InvalidGiftUuid(uuid, f"{uuid!r} is not a gift uuid")
    return uuid


@router.post("/gifts", response_model=GiftOut, summary="Create a gift voucher (ON_HOLD)")
async def create_gift(
    body: GiftBody,
    octo_env: str | None = Header(default=None, alias="Octo-Env", max_length=20),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    test_mode = (octo_env or "").lower() == "test"
    return _answer(octo, svc, await svc.gifts.create(octo.connection, body.input(), test_mode=test_mode))


@router.patch("/gifts/{uuid}", response_model=GiftOut, summary="Change a gift voucher on hold")
async def update_gift(
    uuid: str,
    body: GiftBody,
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    return _answer(octo, svc, await svc.gifts.update(octo.connection, _known(uuid), body.input()))


@router.post("/gifts/{uuid}/confirm", response_model=GiftOut, summary="Confirm (issue) a gift voucher")
async def confirm_gift(
    uuid: str,
    body: GiftBody | None = Body(default=None),
    accept_language: str | None = Header(default=None, alias="Accept-Language", max_length=500),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    data = body.input() if body is not None else GiftInput()
    confirmed = await svc.gifts.confirm(
        octo.connection, _known(uuid), data, accepted_locales(accept_language)
    )
    return _answer(octo, svc, confirmed)


@router.post("/gifts/{uuid}/cancel", response_model=GiftOut, summary="Cancel a gift voucher not used")
async def cancel_gift(
    uuid: str,
    body: CancelGiftBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    reason = body.reason if body is not None else None
    return _answer(octo, svc, await svc.gifts.cancel(octo.connection, _known(uuid), reason))


@router.get("/gifts/{uuid}", response_model=GiftOut, summary="One of your gift vouchers")
async def get_gift(
    uuid: str, octo: OctoRequest = Depends(octo_request), svc: Services = Depends(current_services)
) -> Response:
    return _answer(octo, svc, await svc.gifts.get(octo.connection.id, _known(uuid)))


@router.get("/gifts", response_model=list[GiftOut], summary="Find your gift vouchers")
async def list_gifts(
    resellerReference: str | None = Query(default=None, max_length=lengths.TEXT),
    supplierReference: str | None = Query(default=None, max_length=100),
    utcCreatedAtStart: IsoDateTime | None = None,
    utcCreatedAtEnd: IsoDateTime | None = None,
    utcUpdatedAtStart: IsoDateTime | None = None,
    utcUpdatedAtEnd: IsoDateTime | None = None,
    contactEmailAddress: str | None = Query(default=None, max_length=lengths.TEXT),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    for name, start, end in (
        ("utcCreatedAt", utcCreatedAtStart, utcCreatedAtEnd),
        ("utcUpdatedAt", utcUpdatedAtStart, utcUpdatedAtEnd),
    ):
        if (start is None) != (end is None):
            raise BadRequest(f"{name}Start and {name}End must be sent together")
        if start is not None and end is not None and end < start:
            raise BadRequest(f"{name}End is before {name}Start")
    where = GiftFilter(
        connection_id=octo.connection.id,
        reseller_reference=resellerReference,
        supplier_reference=supplierReference,
        created_from=utcCreatedAtStart,
        created_until=utcCreatedAtEnd,
        updated_from=utcUpdatedAtStart,
        updated_until=utcUpdatedAtEnd,
        contact_email=contactEmailAddress,
    )
    if not (
        resellerReference
        or supplierReference
        or utcCreatedAtStart
        or utcUpdatedAtStart
        or contactEmailAddress
    ):
        raise BadRequest(
            "Filter by resellerReference, supplierReference, contactEmailAddress, utcCreatedAtStart with "
            "utcCreatedAtEnd, or utcUpdatedAtStart with utcUpdatedAtEnd"
        )
    cap = svc.settings.max_list_items
    found = await svc.gifts.find(where, cap + 1)
    if len(found) > cap:  # never a silently shortened list
        raise BadRequest(f"More than {cap} gifts match: narrow the filter")
    now = svc.clock()
    return octo_response(octo, [gift_json(details, octo.view, now) for details in found])
