"""What a reseller sends to reserve, change and confirm a booking, and what makes two
reservations with one uuid the same request."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from berth.domain.bookings import Booking, Contact

# Who made a step in a booking's history.
RESELLER = "reseller"
SUPPLIER = "supplier"
SYSTEM = "system"

# A booking's version before and after a change, both as stored.
Change = tuple[Booking, Booking]
# The request fields sent for each booking extension, by its key (extensions.Sent).
ExtensionFields = Mapping[str, Mapping[str, Any]]
# The request fields a capability reads itself (its capacity policy, its grouping), by the name
# the reservation's fingerprint gives them, with the values parsed: only those sent (not null)
# with their capability requested. The core hands them on and reads none of them.
Asked = Mapping[str, Any]


@dataclass(frozen=True)
class UnitItemInput:
    unit_id: str
    uuid: str | None = None
    reseller_reference: str | None = None
    contact: Contact | None = None


@dataclass(frozen=True)
class ReserveInput:
    product_id: str | None
    option_id: str | None
    unit_items: tuple[UnitItemInput, ...] | None
    uuid: str | None = None
    availability_id: str | None = None
    expiration_minutes: int | None = None
    notes: str | None = None
    reseller_reference: str | None = None
    contact: Contact | None = None
    currency: str | None = None
    order_id: str | None = None
    asked: Asked = field(default_factory=dict)
    extensions: ExtensionFields = field(default_factory=dict)


@dataclass(frozen=True)
class UpdateInput:
    product_id: str | None = None
    option_id: str | None = None
    availability_id: str | None = None
    unit_items: tuple[UnitItemInput, ...] | None = None
    expiration_minutes: int | None = None
    notes: str | None = None
    reseller_reference: str | None = None
    contact: Contact | None = None
    sent: frozenset[str] = frozenset()
    asked: Asked = field(default_factory=dict)
    extensions: ExtensionFields = field(default_factory=dict)


@dataclass(frozen=True)
class ConfirmInput:
    """`contact`: the lead traveller (None: keep the one given at reservation); `asked`: what a
    capability's fields change (None of them: the booking keeps what it has)."""

    contact: Contact | None
    reseller_reference: str | None = None
    unit_items: tuple[UnitItemInput, ...] | None = None
    notes: str | None = None
    asked: Asked = field(default_factory=dict)
    extensions: ExtensionFields = field(default_factory=dict)
    email_receipt: bool = False  # the guest is emailed a receipt (and told of later changes)
    # The request's Accept-Language as tags: kept on the contact (Contact.request_locales).
    request_locales: tuple[str, ...] = ()


def fingerprint(data: ReserveInput) -> str:
    """What makes two reservations with one uuid 'the same request' (OCTO.md §5.3)."""
    document: dict[str, Any] = {
        "productId": data.product_id,
        "optionId": data.option_id,
        "availabilityId": data.availability_id,
        "unitItems": [
            [i.unit_id, i.uuid, i.reseller_reference, i.contact.to_document() if i.contact else None]
            for i in data.unit_items or ()
        ],
        "notes": data.notes,
        "resellerReference": data.reseller_reference,
        "contact": data.contact.to_document() if data.contact else None,
        "currency": data.currency,
        "orderId": data.order_id,
    }
    # Under their own names, absent when not sent: fingerprints made before a capability's
    # fields existed still match.
    document.update(data.asked)
    sent = {key: fields for key, fields in data.extensions.items() if fields}
    if sent:  # a capability requested with nothing sent leaves the fingerprint as it was
        document["extensions"] = sent
    return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()
