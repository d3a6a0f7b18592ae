"""Request bodies of the OCTO routes. Unknown fields are ignored (clients send extras);
wrong types are BAD_REQUEST, naming the field."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from berth.capabilities.registry import active, asked_fields
from berth.domain import lengths
from berth.domain.bookings import CONTACT_KEYS, Contact
from berth.http.types import Flag, IsoDate, Whole
from berth.services.availability import AvailabilityQuery
from berth.services.bookings.inputs import (
    ConfirmInput,
    ExtensionFields,
    ReserveInput,
    UnitItemInput,
    UpdateInput,
)

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
Text = Annotated[str, Field(max_length=lengths.TEXT)]
Identifier = Annotated[str, Field(max_length=lengths.IDENTIFIER)]
Currency = Annotated[str, Field(max_length=lengths.CURRENCY)]


def is_uuid(value: str) -> bool:
    return bool(_UUID.match(value))


def _must_be_uuid(value: str) -> str:
    if not is_uuid(value):
        raise ValueError("must be a UUID")
    return value


ClientUuid = Annotated[str, Field(max_length=lengths.CLIENT_UUID), AfterValidator(_must_be_uuid)]


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


def rental_duration(duration_id: str | None, active: bool) -> str | None:
    """The rentalDurationId sent, or None when octo/rentals is not requested (a capability's
    behaviour applies only when it is requested): a rental is then sold at its default duration."""
    return duration_id if active else None


class UnitQuantity(Lenient):
    id: Identifier
    quantity: Annotated[Whole, Field(ge=0, le=1000)]


OfferCode = Annotated[str, Field(max_length=64)]


class AvailabilityBody(Lenient):
    productId: Identifier | None = None
    optionId: Identifier | None = None
    localDate: IsoDate | None = None
    localDateStart: IsoDate | None = None
    localDateEnd: IsoDate | None = None
    availabilityIds: Annotated[list[Identifier], Field(max_length=500)] | None = None
    units: Annotated[list[UnitQuantity], Field(max_length=100)] | None = None
    currency: Currency | None = None
    rentalDurationId: Identifier | None = None  # octo/rentals
    offerCode: OfferCode | None = None  # octo/offers

    def query(self, rentals: bool = False) -> AvailabilityQuery:
        return AvailabilityQuery(
            product_id=self.productId,
            option_id=self.optionId,
            local_date=self.localDate,
            local_date_start=self.localDateStart,
            local_date_end=self.localDateEnd,
            availability_ids=tuple(self.availabilityIds) if self.availabilityIds is not None else None,
            units=tuple((u.id, u.quantity) for u in self.units) if self.units is not None else None,
            currency=self.currency,
            rental_duration_id=rental_duration(self.rentalDurationId, rentals),
        )


class CalendarBody(Lenient):
    productId: Identifier | None = None
    optionId: Identifier | None = None
    localDateStart: IsoDate | None = None
    localDateEnd: IsoDate | None = None
    units: Annotated[list[UnitQuantity], Field(max_length=100)] | None = None
    currency: Currency | None = None
    rentalDurationId: Identifier | None = None  # octo/rentals
    offerCode: OfferCode | None = None  # octo/offers

    def query(self, rentals: bool = False) -> AvailabilityQuery:
        return AvailabilityQuery(
            product_id=self.productId,
            option_id=self.optionId,
            local_date_start=self.localDateStart,
            local_date_end=self.localDateEnd,
            units=tuple((u.id, u.quantity) for u in self.units) if self.units is not None else None,
            currency=self.currency,
            rental_duration_id=rental_duration(self.rentalDurationId, rentals),
        )


class ContactBody(Lenient):
    fullName: Text | None = None
    firstName: Text | None = None
    lastName: Text | None = None
    emailAddress: Text | None = None
    phoneNumber: Text | None = None
    postalCode: Text | None = None
    country: Text | None = None
    notes: Text | None = None
    locales: (
        Annotated[list[Annotated[str, Field(max_length=lengths.LOCALE)]], Field(max_length=20)] | None
    ) = None
    allowMarketing: Flag | None = None

    def contact(self) -> Contact:
        sent = self.model_fields_set
        return Contact(
            values={key: getattr(self, key) for key in CONTACT_KEYS if key in sent},
            locales=tuple(self.locales or ()),
            allow_marketing=self.allowMarketing,
        )


def _contact(body: ContactBody | None) -> Contact | None:
    return body.contact() if body is not None else None


class QuestionAnswerBody(Lenient):
    """octo/questions: an answer; `question` (as the answers show it) is not read."""

    questionId: Identifier
    value: Text | None = None


QuestionAnswers = Annotated[list[QuestionAnswerBody], Field(max_length=200)]


class ExtraItemBody(Lenient):
    """octo/extras: one piece of an extra; the rest of an `ExtraItem` is not read."""

    extraId: Identifier


ExtraItems = Annotated[list[ExtraItemBody], Field(max_length=200)]


class UnitItemBody(Lenient):
    unitId: Identifier
    uuid: ClientUuid | None = None
    resellerReference: Text | None = None
    contact: ContactBody | None = None
    questionAnswers: QuestionAnswers | None = None  # octo/questions
    extraItems: ExtraItems | None = None  # octo/extras

    def item(self) -> UnitItemInput:
        return UnitItemInput(
            unit_id=self.unitId,
            uuid=self.uuid,
            reseller_reference=self.resellerReference,
            contact=_contact(self.contact),
        )


UnitItems = Annotated[list[UnitItemBody], Field(max_length=200)]


def _items(items: list[UnitItemBody] | None) -> tuple[UnitItemInput, ...] | None:
    return tuple(i.item() for i in items) if items is not None else None


class ResourceAllocationBody(Lenient):
    """octo/resources: a resource the client chooses. `paxCount` and `seatIds` are computed by
    the server and ignored here (rule 1), so they are not even read."""

    resourceId: Identifier


ResourceAllocations = Annotated[list[ResourceAllocationBody], Field(max_length=100)]


def resource_selection(
    allocations: list[ResourceAllocationBody] | None, active: bool
) -> tuple[str, ...] | None:
    """The chosen resource ids, or None when not sent or octo/resources is not requested (a
    capability's behaviour applies only when it is requested)."""
    if allocations is None or not active:
        return None
    return tuple(a.resourceId for a in allocations)


def extension_fields(
    body: BaseModel, items: list[UnitItemBody] | None, capabilities: frozenset[str]
) -> ExtensionFields:
    """The fields each requested capability's booking extension reads (Capability
    `booking_request_fields`, `unit_item_request_fields`), as sent: what was left out is absent,
    a unit item's under "unitItems" in the order of the items. Every requested capability that
    reads request fields has an entry, empty when nothing was sent for it: an extension tells a
    capability not requested (no entry) from one requested with nothing sent."""
    found: dict[str, dict[str, Any]] = {}
    for capability in active(capabilities):
        if not (capability.booking_request_fields or capability.unit_item_request_fields):
            continue
        names = capability.booking_request_fields
        fields = body.model_dump(mode="json", include=set(names), exclude_unset=True) if names else {}
        if capability.unit_item_request_fields and items is not None:
            per_item = [
                i.model_dump(
                    mode="json", include=set(capability.unit_item_request_fields), exclude_unset=True
                )
                for i in items
            ]
            if any(per_item):
                fields["unitItems"] = per_item
        found[capability.id] = fields
    return found


class GiftPaymentBody(Lenient):
    giftCode: Annotated[str, Field(max_length=64)]
    amount: Annotated[int, Field(ge=1, le=1_000_000_000_000)]
    currency: Currency


class _ExtensionFields(Lenient):
    """What a reservation, an update and a confirmation carry for booking extensions (read by
    `extension_fields` for the capabilities requested)."""

    # octo/pickups
    pickupRequested: Flag | None = None
    pickupPointId: Identifier | None = None
    pickupHotel: Text | None = None
    pickupHotelRoom: Text | None = None
    questionAnswers: QuestionAnswers | None = None  # octo/questions
    extraItems: ExtraItems | None = None  # octo/extras
    offerCode: OfferCode | None = None  # octo/offers
    giftPayment: GiftPaymentBody | None = None  # octo/gifts, on a confirmation


class _BookingFields(_ExtensionFields):
    """What a reservation and an update both carry."""

    productId: Identifier | None = None
    optionId: Identifier | None = None
    availabilityId: Identifier | None = None
    expirationMinutes: Whole | None = None
    unitItems: UnitItems | None = None
    notes: Text | None = None
    resellerReference: Text | None = None
    contact: ContactBody | None = None
    rentalDurationId: Identifier | None = None  # octo/rentals
    resourceAllocations: ResourceAllocations | None = None


class PackageBookingBody(Lenient):
    """octo/packages: one include of a package booking and the availability to book it at."""

    includeId: Identifier | None = None
    availabilityId: Identifier | None = None

    def selection(self) -> tuple[str | None, str | None]:
        return self.includeId, self.availabilityId


class ReserveBody(_BookingFields):
    uuid: ClientUuid | None = None
    currency: Currency | None = None
    orderId: Identifier | None = None
    packageBookings: Annotated[list[PackageBookingBody], Field(max_length=100)] | None = None

    def reservation(
        self, resources: bool = False, rentals: bool = False, capabilities: frozenset[str] = frozenset()
    ) -> ReserveInput:
        return ReserveInput(
            product_id=self.productId,
            option_id=self.optionId,
            unit_items=_items(self.unitItems),
            uuid=self.uuid,
            availability_id=self.availabilityId,
            expiration_minutes=self.expirationMinutes,
            notes=self.notes,
            reseller_reference=self.resellerReference,
            contact=_contact(self.contact),
            currency=self.currency,
            order_id=self.orderId,
            asked=asked_fields(
                rental_duration(self.rentalDurationId, rentals),
                resource_selection(self.resourceAllocations, resources),
                tuple(p.selection() for p in self.packageBookings)
                if self.packageBookings is not None
                else None,
            ),
            extensions=extension_fields(self, self.unitItems, capabilities),
        )


class UpdateBody(_BookingFields):
    emailReceipt: Flag | None = None

    def update(
        self, resources: bool = False, rentals: bool = False, capabilities: frozenset[str] = frozenset()
    ) -> UpdateInput:
        duration_id = rental_duration(self.rentalDurationId, rentals)
        # A null rentalDurationId is the same as leaving it out: the booking keeps its duration.
        ignored = set() if duration_id is not None else {"rentalDurationId"}
        return UpdateInput(
            product_id=self.productId,
            option_id=self.optionId,
            availability_id=self.availabilityId,
            unit_items=_items(self.unitItems),
            expiration_minutes=self.expirationMinutes,
            notes=self.notes,
            reseller_reference=self.resellerReference,
            contact=_contact(self.contact),
            sent=frozenset(self.model_fields_set - ignored),
            asked=asked_fields(duration_id, resource_selection(self.resourceAllocations, resources)),
            extensions=extension_fields(self, self.unitItems, capabilities),
        )


class ConfirmBody(_ExtensionFields):
    # Absent: the contact given at reservation; the option's required contact fields are
    # checked either way (the same rule, and the same error, as an order's confirm).
    contact: ContactBody | None = None
    resellerReference: Text | None = None
    unitItems: UnitItems | None = None
    emailReceipt: Flag | None = None
    notes: Text | None = None
    rentalDurationId: Identifier | None = None  # octo/rentals: a new duration for the rental
    resourceAllocations: ResourceAllocations | None = None

    def confirmation(
        self, resources: bool = False, rentals: bool = False, capabilities: frozenset[str] = frozenset()
    ) -> ConfirmInput:
        return ConfirmInput(
            contact=_contact(self.contact),
            reseller_reference=self.resellerReference,
            unit_items=_items(self.unitItems) if self.unitItems else None,
            notes=self.notes,
            asked=asked_fields(
                rental_duration(self.rentalDurationId, rentals),
                resource_selection(self.resourceAllocations, resources),
            ),
            extensions=extension_fields(self, self.unitItems, capabilities),
            email_receipt=bool(self.emailReceipt),
        )


class ExtendBody(Lenient):
    expirationMinutes: Whole | None = None


class CancelBody(Lenient):
    reason: Text | None = None
    force: Flag | None = None
