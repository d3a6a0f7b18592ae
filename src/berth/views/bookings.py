"""The Booking object (OCTO.md §3.7): one serializer for every route and webhook payload."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from berth.capabilities.base import JSON, View
from berth.capabilities.registry import active
from berth.domain.bookings import Booking, Contact, UnitItem
from berth.domain.catalog import DeliveryMethod, Product
from berth.domain.tickets import ISSUED, NO_TICKETS, SUFFIXES, VOUCHER, IssuedTickets
from berth.domain.times import format_utc, format_utc_or_none
from berth.read_models.availability import SlotAvailability
from berth.read_models.bookings import BookingDetails
from berth.views.availability import availability_view
from berth.views.catalog import option_view, product_view, unit_view


def contact_view(contact: Contact) -> JSON:
    values = contact.values
    return {
        "fullName": contact.full_name,
        "firstName": values.get("firstName"),
        "lastName": values.get("lastName"),
        "emailAddress": values.get("emailAddress"),
        "phoneNumber": values.get("phoneNumber"),
        "postalCode": values.get("postalCode"),
        "country": values.get("country"),
        "notes": values.get("notes"),
        "locales": list(contact.locales),
        "allowMarketing": contact.allow_marketing is True,  # OCTO types: a boolean; not given = no consent
    }


def ticket_view(
    product: Product,
    booking: Booking,
    code: str,
    redeemed_at: datetime | None,
    tickets: IssuedTickets = NO_TICKETS,
    key: str = VOUCHER,
) -> JSON:
    """A voucher or ticket; its codes exist once the booking is confirmed. A code format
    (QRCODE, CODE128, AZTECCODE) carries the code itself, a document format (PDF_URL,
    PKPASS_URL) the URL of the document issued for it."""
    options: list[JSON] = []
    if booking.status in ISSUED:
        for f in product.delivery_formats:
            value = tickets.url(key, f) if f in SUFFIXES else code
            if value is not None:
                options.append({"deliveryFormat": str(f), "deliveryValue": value})
    return {
        "redemptionMethod": str(product.redemption_method),
        "utcRedeemedAt": format_utc_or_none(redeemed_at),
        "deliveryOptions": options,
    }


def _unit_item_view(details: BookingDetails, item: UnitItem, view: View) -> JSON:
    booking, product = details.booking, details.product
    out: JSON = {
        "uuid": item.uuid,
        "resellerReference": item.reseller_reference,
        "supplierReference": item.supplier_reference,
        "unitId": item.unit_id,
        "status": booking.status.value,
        "utcRedeemedAt": format_utc_or_none(item.redeemed_at or booking.redeemed_at),
        "contact": contact_view(item.contact),
        "ticket": (
            ticket_view(
                product,
                booking,
                item.supplier_reference,
                item.redeemed_at or booking.redeemed_at,
                details.tickets,
                item.uuid,
            )
            if DeliveryMethod.TICKET in product.delivery_methods
            else None
        ),
    }
    unit = details.option.unit(item.unit_id)
    if unit is not None:
        out["unit"] = unit_view(product, details.option, unit, view)
    for capability in active(view.capabilities):
        capability.unit_item_fields(details, item, out, view)
    return out


def booking_view(details: BookingDetails, view: View, product_json: JSON | None = None) -> JSON:
    booking, product, option = details.booking, details.product, details.option
    cancellation = booking.cancellation
    availability = None
    if details.slot is not None and details.state is not None:
        item = SlotAvailability(
            product, option, details.slot, details.state, (), booking.currency, details.rental
        )
        availability = availability_view(item, view)
    out: JSON = {
        "id": booking.id,
        "uuid": booking.uuid,
        "testMode": booking.test_mode,
        "resellerReference": booking.reseller_reference,
        "supplierReference": booking.supplier_reference,
        "status": booking.status.value,
        "utcCreatedAt": format_utc(booking.created_at),
        "utcUpdatedAt": format_utc_or_none(booking.updated_at),
        "utcExpiresAt": format_utc_or_none(booking.expires_at),
        "utcRedeemedAt": format_utc_or_none(booking.redeemed_at),
        "utcConfirmedAt": format_utc_or_none(booking.confirmed_at),
        "productId": product.id,
        "product": product_json if product_json is not None else product_view(product, view),
        "optionId": option.id,
        "option": option_view(product, option, view),
        "cancellable": details.cancellable,
        "cancellation": (
            {
                "refund": cancellation.refund,
                "reason": cancellation.reason,
                "utcCancelledAt": format_utc(cancellation.at),
            }
            if cancellation
            else None
        ),
        "freesale": booking.freesale,
        "availabilityId": booking.availability_id,
        "availability": availability,
        "contact": contact_view(booking.contact),
        "notes": booking.notes,
        "deliveryMethods": [str(m) for m in product.delivery_methods],
        "voucher": (
            ticket_view(product, booking, booking.supplier_reference, booking.redeemed_at, details.tickets)
            if DeliveryMethod.VOUCHER in product.delivery_methods
            else None
        ),
        "unitItems": [_unit_item_view(details, item, view) for item in booking.unit_items],
    }
    for capability in active(view.capabilities):
        capability.booking_fields(details, out, view, booking_view)
    return out


def bookings_view(all_details: Sequence[BookingDetails], view: View) -> list[JSON]:
    """Several bookings; each product object is built once and shared."""
    products: dict[str, JSON] = {}
    result = []
    for details in all_details:
        product_json = products.get(details.product.id)
        if product_json is None:
            product_json = products[details.product.id] = product_view(details.product, view)
        result.append(booking_view(details, view, product_json))
    return result
