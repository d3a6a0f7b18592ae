"""The Order object (octo/cart; OCTO.md §6.3): GET /orders/{id} and order_update payloads."""

from __future__ import annotations

from berth.capabilities.base import JSON, View
from berth.capabilities.registry import active
from berth.domain.orders import LIVE, OrderStatus
from berth.domain.times import format_utc, format_utc_or_none
from berth.read_models.orders import OrderDetails
from berth.views.bookings import bookings_view, contact_view


def order_view(details: OrderDetails, view: View) -> JSON:
    order = details.order
    required: list[str] = []
    for booking in details.bookings:
        for field in booking.option.required_contact_fields:
            if field.value not in required:
                required.append(field.value)
    cancellation = order.cancellation
    out: JSON = {
        "id": order.id,
        "testMode": order.test_mode,
        "supplierReference": order.supplier_reference,
        "settlementMethod": "DEFERRED",
        "settlementMethods": ["DEFERRED"],
        "status": order.status.value,
        "utcCreatedAt": format_utc(order.created_at),
        "utcUpdatedAt": format_utc_or_none(order.updated_at),
        "utcExpiresAt": format_utc_or_none(order.expires_at),
        "utcConfirmedAt": format_utc_or_none(order.confirmed_at),
        "cancellable": details.cancellable,
        "confirmable": details.confirmable,
        "updatable": order.status in LIVE,
        "active": order.status in LIVE,
        "quote": False,
        "emailReceipt": order.email_receipt,
        "currency": order.currency,
        "cancellation": (
            {
                "refund": cancellation.refund,
                "reason": cancellation.reason,
                "utcCancelledAt": format_utc(cancellation.at),
            }
            if cancellation
            else None
        ),
        "contact": contact_view(order.contact),
        "visibleContactFields": required,
        "requiredContactFields": required if order.status is OrderStatus.ON_HOLD else [],
        "voucher": None,
        "bookings": bookings_view(details.bookings, view),
    }
    for capability in active(view.capabilities):
        capability.order_fields(details, out, view)
    return out
