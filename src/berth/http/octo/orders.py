"""Orders (octo/cart): create, get, update, extend, confirm, cancel."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Header
from pydantic import Field
from starlette.responses import Response

from berth.capabilities.cart.orders import OrderInput
from berth.capabilities.ids import GIFTS, RENTALS, RESOURCES
from berth.container import Services
from berth.domain.bookings import Contact
from berth.domain.languages import accepted_locales
from berth.http.context import OctoRequest, current_services, octo_request
from berth.http.octo.common import octo_response
from berth.http.octo.requests import ContactBody, Currency, GiftPaymentBody, Lenient, ReserveBody, Text
from berth.http.octo.schemas import ERROR_RESPONSES, OrderOut
from berth.http.types import Flag, Whole
from berth.read_models.orders import OrderDetails
from berth.views.orders import order_view

router = APIRouter(responses=ERROR_RESPONSES)


class OrderBody(Lenient):
    currency: Currency | None = None
    expirationMinutes: Whole | None = None
    emailReceipt: Flag | None = None
    contact: ContactBody | None = None
    bookings: Annotated[list[ReserveBody], Field(max_length=50)] | None = None

    def order(
        self, resources: bool = False, rentals: bool = False, capabilities: frozenset[str] = frozenset()
    ) -> OrderInput:
        return OrderInput(
            currency=self.currency,
            expiration_minutes=self.expirationMinutes,
            email_receipt=self.emailReceipt,
            contact=self.contact.contact() if self.contact else None,
            bookings=tuple(b.reservation(resources, rentals, capabilities) for b in self.bookings or ()),
        )


class OrderConfirmBody(Lenient):
    contact: ContactBody | None = None
    emailReceipt: Flag | None = None
    giftPayment: GiftPaymentBody | None = None  # octo/gifts


class OrderExtendBody(Lenient):
    expirationMinutes: Whole | None = None


class OrderCancelBody(Lenient):
    reason: Text | None = None
    force: Flag | None = None


def _order(octo: OctoRequest, details: OrderDetails) -> Response:
    return octo_response(octo, order_view(details, octo.view))


@router.post(
    "/orders", response_model=OrderOut, summary="Create an ON_HOLD order, optionally with its bookings"
)
async def create_order(
    body: OrderBody,
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
    octo_env: str | None = Header(default=None, alias="Octo-Env"),
) -> Response:
    test_mode = (octo_env or "").lower() == "test"
    details = await svc.orders.create(
        octo.snapshot.catalog,
        octo.connection.id,
        body.order(octo.view.has(RESOURCES), octo.view.has(RENTALS), octo.view.capabilities),
        test_mode=test_mode,
    )
    return _order(octo, details)


@router.get("/orders/{orderId}", response_model=OrderOut, summary="One of your orders")
async def get_order(
    orderId: str, octo: OctoRequest = Depends(octo_request), svc: Services = Depends(current_services)
) -> Response:
    return _order(octo, await svc.orders.get(octo.snapshot.catalog, octo.connection.id, orderId))


@router.patch(
    "/orders/{orderId}", response_model=OrderOut, summary="Change order contact, receipt, currency or hold"
)
async def update_order(
    orderId: str,
    body: OrderBody,
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    details = await svc.orders.update(
        octo.snapshot.catalog, octo.connection.id, orderId, body.order(), frozenset(body.model_fields_set)
    )
    return _order(octo, details)


@router.post(
    "/orders/{orderId}/extend",
    response_model=OrderOut,
    summary="Extend the hold of the order and its bookings",
)
async def extend_order(
    orderId: str,
    body: OrderExtendBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    minutes = body.expirationMinutes if body else None
    return _order(octo, await svc.orders.extend(octo.snapshot.catalog, octo.connection.id, orderId, minutes))


@router.post(
    "/orders/{orderId}/confirm",
    response_model=OrderOut,
    summary="Confirm every booking of the order, or none",
)
async def confirm_order(
    orderId: str,
    body: OrderConfirmBody | None = Body(default=None),
    accept_language: str | None = Header(default=None, alias="Accept-Language"),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    contact = body.contact.contact() if body and body.contact else None
    # The guests' tickets and emails are in these languages when the contact names no locales.
    request_locales = accepted_locales(accept_language)
    if request_locales:
        contact = replace(contact or Contact(), request_locales=request_locales)
    paid = body.giftPayment if body is not None and octo.view.has(GIFTS) else None
    details = await svc.orders.confirm(
        octo.snapshot.catalog,
        octo.connection.id,
        orderId,
        contact,
        body.emailReceipt if body else None,
        gift_payment=paid.model_dump() if paid is not None else None,
    )
    return _order(octo, details)


async def _cancel(orderId: str, body: OrderCancelBody | None, octo: OctoRequest, svc: Services) -> Response:
    # `force` overrides the cutoff for the supplier only; from a reseller it is ignored.
    details = await svc.orders.cancel(
        octo.snapshot.catalog, octo.connection.id, orderId, body.reason if body else None
    )
    return _order(octo, details)


@router.post(
    "/orders/{orderId}/cancel", response_model=OrderOut, summary="Cancel every booking of the order, or none"
)
async def cancel_order(
    orderId: str,
    body: OrderCancelBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    return await _cancel(orderId, body, octo, svc)


@router.delete("/orders/{orderId}", response_model=OrderOut, summary="Cancel (alias of POST …/cancel)")
async def delete_order(
    orderId: str,
    body: OrderCancelBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    return await _cancel(orderId, body, octo, svc)
