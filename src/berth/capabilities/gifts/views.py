"""A gift as OCTO shows it (Ventrata's `Gift`): every field the schema requires, `pricing` with
octo/pricing, and its code in `voucher.deliveryOptions` once issued and while it can be spent."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from berth.capabilities.base import View
from berth.capabilities.ids import PRICING
from berth.domain.bookings import Contact
from berth.domain.gifts import GiftDetails, GiftStatus, cancellable, last_redeemed_at
from berth.domain.times import format_utc, format_utc_or_none

JSON = dict[str, Any]
# What a gift's contact shows; none is required to confirm one.
VISIBLE_CONTACT_FIELDS = ["firstName", "lastName", "emailAddress", "phoneNumber", "locales"]


def customer_contact(contact: Contact) -> JSON:
    """Ventrata's `CustomerContact`: every key, null where the contact has none."""
    values = contact.values
    return {
        "fullName": contact.full_name,
        "firstName": values.get("firstName"),
        "lastName": values.get("lastName"),
        "emailAddress": values.get("emailAddress"),
        "phoneNumber": values.get("phoneNumber"),
        "locales": list(contact.locales),
        "postalCode": values.get("postalCode"),
        "country": values.get("country"),
        "notes": values.get("notes"),
        "taxId": None,
        "title": None,
        "streetAddress": None,
        "city": None,
        "state": None,
        "allowMarketing": contact.allow_marketing is True,
        "company": None,
        "age": None,
        "birthdate": None,
    }


def gift_json(details: GiftDetails, view: View, now: datetime) -> JSON:
    gift, movements = details.gift, details.movements
    status = gift.status_at(now)
    redeemed_at = format_utc_or_none(last_redeemed_at(movements))
    spendable = status is GiftStatus.CONFIRMED and details.code is not None
    out: JSON = {
        "id": gift.id,
        "uuid": gift.uuid,
        "alias": gift.alias,
        "status": status.value,
        "testMode": gift.test_mode,
        "supplierReference": gift.supplier_reference,
        "resellerReference": gift.reseller_reference,
        "amount": gift.amount,
        "currency": gift.currency,
        "updatable": gift.updatable(now),
        "confirmable": gift.confirmable(now),
        "cancellable": cancellable(gift, movements, now),
        "cancellation": None,
        "contact": customer_contact(gift.contact),
        "recipient": customer_contact(gift.recipient) if gift.recipient is not None else None,
        "message": gift.message,
        "notes": gift.notes,
        "deliveryMethods": ["VOUCHER"],
        "giftPayment": None,
        "requiredContactFields": [],
        "VisibleContactFields": VISIBLE_CONTACT_FIELDS,
        "settlementMethod": gift.settlement_method.value,
        "agent": None,
        "reseller": None,
        "seller": None,
        "user": None,
        "utcCreatedAt": format_utc(gift.created_at),
        "utcUpdatedAt": format_utc(gift.updated_at),
        "utcExpiresAt": format_utc(gift.expires_at),
        "utcConfirmedAt": format_utc_or_none(gift.confirmed_at),
        "utcRedeemedAt": redeemed_at,
        "voucher": {
            "redemptionMethod": "DIGITAL",
            "utcRedeemedAt": redeemed_at,
            "deliveryOptions": (
                [{"deliveryFormat": "QRCODE", "deliveryValue": details.code}] if spendable else []
            ),
        },
    }
    if gift.cancelled_at is not None:
        out["cancellation"] = {
            # What was left of a confirmed gift is cancelled with it; a held one had no value yet.
            "refund": "NONE" if gift.confirmed_at is None else "FULL",
            "reason": gift.cancellation_reason,
            "utcCancelledAt": format_utc(gift.cancelled_at),
        }
    if view.has(PRICING):
        out["pricing"] = {
            "original": gift.amount,
            "retail": gift.amount,
            "net": gift.net,
            "currency": gift.currency,
            "currencyPrecision": gift.currency_precision,
            "includedTaxes": [],
        }
    return out
