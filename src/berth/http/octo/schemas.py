"""Response shapes for the OpenAPI document. Routes return pre-encoded JSON built by
`berth.views`; these models describe it (capability fields are optional: they appear only
when their capability is requested)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from berth.domain.catalog import CategoryLabel


class OctoErrorBody(BaseModel):
    error: str = Field(description="Machine code, e.g. INVALID_PRODUCT_ID")
    errorMessage: str
    productId: str | None = None
    optionId: str | None = None
    unitId: str | None = None
    availabilityId: str | None = None
    uuid: str | None = None
    retryAfter: int | None = Field(
        default=None, description="TOO_MANY_REQUESTS, SERVICE_UNAVAILABLE: seconds to wait before repeating"
    )
    rentalDurationId: str | None = None
    pickupPointId: str | None = None
    questionId: str | None = None
    extraId: str | None = None
    giftCode: str | None = Field(default=None, description="octo/gifts: the code that cannot pay")


class SupplierContactOut(BaseModel):
    website: str | None
    email: str | None
    telephone: str | None
    address: str | None


class SupplierOut(BaseModel):
    id: str
    name: str
    endpoint: str
    contact: SupplierContactOut
    shortDescription: str | None = Field(default=None, description="octo/content")
    media: list[dict[str, Any]] | None = Field(default=None, description="octo/content")


class TaxOut(BaseModel):
    name: str
    retail: int
    original: int
    net: int | None


class DiscountTaxOut(BaseModel):
    name: str
    retail: int
    net: int
    shortDescription: str | None


class OfferDiscountOut(BaseModel):
    retail: int
    net: int
    includedTaxes: list[DiscountTaxOut]


class PricingOut(BaseModel):
    original: int
    retail: int
    net: int | None
    currency: str
    currencyPrecision: int
    includedTaxes: list[TaxOut]
    offerDiscount: OfferDiscountOut | None = Field(
        default=None, description="octo/offers: what the booking's offer took off"
    )


class OfferRestrictionsOut(BaseModel):
    minUnits: int | None
    maxUnits: int | None
    minTotal: int | None
    maxTotal: int | None
    unitIds: list[str]


class OfferOut(BaseModel):
    id: str
    title: str
    label: str
    code: str
    description: str | None
    netDiscount: str | None
    restrictions: OfferRestrictionsOut
    usable: bool
    unusableReason: str | None


class UnitRestrictionsOut(BaseModel):
    minAge: int
    maxAge: int
    idRequired: bool
    minQuantity: int | None
    maxQuantity: int | None
    paxCount: int
    accompaniedBy: list[str]


class ExtraRestrictionsOut(BaseModel):
    default: bool
    required: bool
    minQuantity: int
    maxQuantity: int | None


class ExtraOut(BaseModel):
    """octo/extras: an add-on booked per booking (on options) or per unit item (on units)."""

    id: str
    internalName: str | None
    title: str | None
    shortDescription: str | None
    description: str | None
    reference: str | None
    restrictions: ExtraRestrictionsOut
    pricingFrom: list[PricingOut] | None = Field(default=None, description="octo/pricing")


class ExtraItemOut(BaseModel):
    id: str
    extraId: str
    extra: ExtraOut
    pricing: PricingOut | None = Field(description="one piece, in the booking's currency")


class ExtraPricingOut(PricingOut):
    extraId: str


class SelectOptionOut(BaseModel):
    label: str
    value: str


class QuestionOut(BaseModel):
    """octo/questions: a question asked per booking (on options) or per unit item (on units)."""

    id: str
    label: str | None
    title: str | None
    shortDescription: str | None
    description: str | None
    internalName: str | None
    inputType: str = Field(description="radio, select or textArea")
    maxLength: int | None
    required: bool
    selectOptions: list[SelectOptionOut]
    coverImageUrl: str | None


class QuestionAnswerOut(BaseModel):
    questionId: str
    question: QuestionOut
    value: str | None


class UnitOut(BaseModel):
    id: str
    internalName: str
    reference: str | None
    type: str
    restrictions: UnitRestrictionsOut
    requiredContactFields: list[str]
    pricingFrom: list[PricingOut] | None = Field(default=None, description="octo/pricing, pricingPer UNIT")
    title: str | None = Field(default=None, description="octo/content")
    shortDescription: str | None = Field(default=None, description='octo/content: a string ("" if none)')
    features: list[dict[str, Any]] | None = Field(default=None, description="octo/content")
    questions: list[QuestionOut] | None = Field(
        default=None, description="octo/questions: asked per unit item"
    )


class RentalDurationOut(BaseModel):
    id: str
    title: str
    shortDescription: str | None
    durationAmount: float
    durationUnit: str = Field(description="minute, hour or day")
    pricingMultiplier: float = Field(description="Prices of this duration are the option's times this")


class OptionRestrictionsOut(BaseModel):
    minUnits: int | None
    maxUnits: int | None


class ContentFields(BaseModel):
    title: str | None = Field(default=None, description="octo/content")
    shortDescription: str | None = Field(default=None, description="octo/content")
    description: str | None = Field(default=None, description="octo/content")
    features: list[dict[str, Any]] | None = Field(default=None, description="octo/content")
    faqs: list[dict[str, Any]] | None = Field(default=None, description="octo/content")
    media: list[dict[str, Any]] | None = Field(default=None, description="octo/content")
    locations: list[dict[str, Any]] | None = Field(default=None, description="octo/content")
    categoryLabels: list[CategoryLabel] | None = Field(default=None, description="octo/content")
    durationMinutesFrom: int | None = Field(default=None, description="octo/content")
    durationMinutesTo: int | None = Field(default=None, description="octo/content")
    commentary: list[dict[str, Any]] | None = Field(default=None, description="octo/content")


class PickupPointOut(BaseModel):
    """octo/pickups: where guests are collected; the times are those of the departure named
    (null on an option)."""

    id: str
    name: str
    directions: str | None
    address: str | None
    latitude: float | None
    longitude: float | None
    localDateTime: str | None
    localDateTimeTo: str | None
    googlePlaceId: str | None
    street: str | None
    postalCode: str | None
    locality: str | None
    region: str | None
    state: str | None
    country: str | None


class OptionOut(ContentFields):
    id: str
    default: bool
    internalName: str
    reference: str | None
    availabilityLocalStartTimes: list[str]
    cancellationCutoff: str
    cancellationCutoffAmount: int
    cancellationCutoffUnit: str
    requiredContactFields: list[str]
    restrictions: OptionRestrictionsOut
    units: list[UnitOut]
    pricingFrom: list[PricingOut] | None = Field(default=None, description="octo/pricing, pricingPer BOOKING")
    rentalDurations: list[RentalDurationOut] | None = Field(default=None, description="octo/rentals")
    pickupAvailable: bool | None = Field(default=None, description="octo/pickups")
    pickupRequired: bool | None = Field(default=None, description="octo/pickups")
    pickupPoints: list[PickupPointOut] | None = Field(default=None, description="octo/pickups")
    questions: list[QuestionOut] | None = Field(default=None, description="octo/questions: asked per booking")
    extras: list[ExtraOut] | None = Field(default=None, description="octo/extras: booked per booking")


class ProductOut(ContentFields):
    id: str
    internalName: str
    reference: str | None
    locale: str
    timeZone: str
    allowFreesale: bool
    instantConfirmation: bool
    instantDelivery: bool
    availabilityRequired: bool
    availabilityType: str
    deliveryFormats: list[str]
    deliveryMethods: list[str]
    redemptionMethod: str
    options: list[OptionOut]
    defaultCurrency: str | None = Field(default=None, description="octo/pricing")
    availableCurrencies: list[str] | None = Field(default=None, description="octo/pricing")
    pricingPer: str | None = Field(default=None, description="octo/pricing")
    isRental: bool | None = Field(default=None, description="octo/rentals")


class CapabilityOut(BaseModel):
    id: str
    revision: int
    required: bool
    dependencies: list[str]
    docs: str | None


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": OctoErrorBody, "description": "An OCTO error (every error code but the internal one)"},
    429: {
        "model": OctoErrorBody,
        "description": "TOO_MANY_REQUESTS, with `retryAfter` seconds (and a Retry-After header)",
    },
    500: {"model": OctoErrorBody, "description": "INTERNAL_SERVER_ERROR"},
    503: {
        "model": OctoErrorBody,
        "description": "SERVICE_UNAVAILABLE: the database refuses connections; repeat after `retryAfter` "
        "seconds (and the Retry-After header)",
    },
}
# The admin API is not rate limited, and answers NOT_FOUND (404) for an unknown id.
ADMIN_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: ERROR_RESPONSES[400],
    403: {
        "model": OctoErrorBody,
        "description": "FORBIDDEN: the caller's staff role may not do this (or the admin API is off)",
    },
    404: {
        "model": OctoErrorBody,
        "description": "NOT_FOUND: no such booking, connection, webhook or delivery",
    },
    500: ERROR_RESPONSES[500],
    503: ERROR_RESPONSES[503],
}


class OpeningHoursOut(BaseModel):
    from_: str = Field(alias="from")
    to: str


class UnitPricingOut(PricingOut):
    unitId: str


class MappingOut(BaseModel):
    """A mapping row (vendor/mappings): the reseller's listing and the supplier's resolution."""

    resellerReference: str
    resellerStatus: str | None
    resellerProduct: str | None
    productId: str | None = Field(description="Set by the supplier; null until mapped")
    optionId: str | None = Field(description="Null until selected, or when optionRequired is false")
    unitId: str | None = Field(description="Null until selected, or when unitRequired is false")
    optionRequired: bool
    unitRequired: bool
    validityDays: int | None
    webhookUrl: str | None


class AvailabilityOut(BaseModel):
    id: str
    localDateTimeStart: str
    localDateTimeEnd: str
    utcCutoffAt: str
    allDay: bool
    available: bool
    status: str = Field(description="AVAILABLE, LIMITED, SOLD_OUT, FREESALE or CLOSED")
    vacancies: int | None
    capacity: int | None
    maxUnits: int | None
    openingHours: list[OpeningHoursOut]
    productId: str | None = Field(default=None, description="batch rows only")
    optionId: str | None = Field(default=None, description="batch rows only")
    unitPricing: list[UnitPricingOut] | None = Field(default=None, description="octo/pricing")
    pricing: PricingOut | None = Field(default=None, description="octo/pricing")
    mappings: list[MappingOut] | None = Field(default=None, description="vendor/mappings")
    hasResources: bool | None = Field(default=None, description="octo/resources")
    title: str | None = Field(default=None, description="octo/content: null (no title per departure)")
    shortDescription: str | None = Field(default=None, description='octo/content: ""')
    pickupAvailable: bool | None = Field(default=None, description="octo/pickups")
    pickupRequired: bool | None = Field(default=None, description="octo/pickups")
    pickupPoints: list[PickupPointOut] | None = Field(default=None, description="octo/pickups")


class CalendarDayOut(BaseModel):
    localDate: str
    available: bool
    status: str
    vacancies: int | None
    capacity: int | None
    openingHours: list[OpeningHoursOut]
    productId: str | None = Field(default=None, description="batch rows only")
    optionId: str | None = Field(default=None, description="batch rows only")
    unitPricingFrom: list[UnitPricingOut] | None = Field(default=None, description="octo/pricing")
    pricingFrom: PricingOut | None = Field(default=None, description="octo/pricing")


class ContactOut(BaseModel):
    fullName: str | None
    firstName: str | None
    lastName: str | None
    emailAddress: str | None
    phoneNumber: str | None
    postalCode: str | None
    country: str | None
    notes: str | None
    locales: list[str]
    allowMarketing: bool = Field(description="false unless the guest agreed")


class DeliveryOptionOut(BaseModel):
    deliveryFormat: str
    deliveryValue: str


class TicketOut(BaseModel):
    redemptionMethod: str
    utcRedeemedAt: str | None
    deliveryOptions: list[DeliveryOptionOut]


class CancellationOut(BaseModel):
    refund: str
    reason: str | None
    utcCancelledAt: str


class CustomerContactOut(BaseModel):
    """Ventrata's CustomerContact (a gift's buyer and recipient)."""

    fullName: str | None
    firstName: str | None
    lastName: str | None
    emailAddress: str | None
    phoneNumber: str | None
    locales: list[str]
    postalCode: str | None
    country: str | None
    notes: str | None
    taxId: str | None
    title: str | None
    streetAddress: str | None
    city: str | None
    state: str | None
    allowMarketing: bool
    company: str | None
    age: int | None
    birthdate: str | None


class GiftOut(BaseModel):
    """octo/gifts: a gift voucher (Ventrata's Gift); `amount` in minor units of `currency`. Its
    code is `voucher.deliveryOptions`' QRCODE value while it can be spent."""

    id: str
    uuid: str
    alias: str | None
    status: str = Field(description="ON_HOLD, CONFIRMED, CANCELLED or EXPIRED")
    testMode: bool | None
    supplierReference: str
    resellerReference: str | None
    amount: int
    currency: str
    updatable: bool
    confirmable: bool
    cancellable: bool
    cancellation: CancellationOut | None
    contact: CustomerContactOut | None
    recipient: CustomerContactOut | None
    message: str | None
    notes: str | None
    deliveryMethods: list[str]
    giftPayment: dict[str, Any] | None
    requiredContactFields: list[str]
    VisibleContactFields: list[str]
    settlementMethod: str
    agent: dict[str, Any] | None
    reseller: dict[str, Any] | None
    seller: dict[str, Any] | None
    user: dict[str, Any] | None
    utcCreatedAt: str
    utcUpdatedAt: str
    utcExpiresAt: str | None
    utcConfirmedAt: str | None
    utcRedeemedAt: str | None
    voucher: TicketOut
    pricing: PricingOut | None = Field(default=None, description="octo/pricing")


class UnitItemOut(BaseModel):
    uuid: str
    resellerReference: str | None
    supplierReference: str | None
    unitId: str
    unit: UnitOut | None = None
    status: str
    utcRedeemedAt: str | None
    contact: ContactOut
    ticket: TicketOut | None
    pricing: PricingOut | None = Field(default=None, description="octo/pricing, pricingPer UNIT")
    questionAnswers: list[QuestionAnswerOut] | None = Field(default=None, description="octo/questions")
    extraItems: list[ExtraItemOut] | None = Field(default=None, description="octo/extras")


class SeatPlaceOut(BaseModel):
    id: str
    title: str
    row: str
    column: str


class ResourceAllocationOut(BaseModel):
    resourceGroupId: str
    resourceGroup: dict[str, Any] = Field(description="id, title, split, required")
    resourceId: str
    resource: dict[str, Any] = Field(description="id, title, seating, driver, guide")
    seatIds: list[str]
    seats: list[SeatPlaceOut]
    paxCount: int


class BookingOut(BaseModel):
    id: str
    uuid: str
    testMode: bool
    resellerReference: str | None
    supplierReference: str | None
    status: str = Field(description="ON_HOLD, CONFIRMED, EXPIRED, CANCELLED, REDEEMED, PENDING or REJECTED")
    utcCreatedAt: str
    utcUpdatedAt: str | None
    utcExpiresAt: str | None
    utcRedeemedAt: str | None
    utcConfirmedAt: str | None
    productId: str
    product: ProductOut
    optionId: str
    option: OptionOut
    cancellable: bool
    cancellation: CancellationOut | None
    freesale: bool
    availabilityId: str | None
    availability: AvailabilityOut | None
    contact: ContactOut
    notes: str | None
    deliveryMethods: list[str]
    voucher: TicketOut | None
    unitItems: list[UnitItemOut]
    pricing: PricingOut | None = Field(default=None, description="octo/pricing")
    isRental: bool | None = Field(default=None, description="octo/rentals")
    rentalDurationId: str | None = Field(default=None, description="octo/rentals")
    rentalDuration: RentalDurationOut | None = Field(default=None, description="octo/rentals")
    mappings: list[MappingOut] | None = Field(default=None, description="vendor/mappings")
    resourceAllocations: list[ResourceAllocationOut] | None = Field(
        default=None, description="octo/resources"
    )
    orderId: str | None = Field(default=None, description="octo/cart")
    orderReference: str | None = Field(default=None, description="octo/cart")
    primary: bool | None = Field(default=None, description="octo/cart")
    pickupRequested: bool | None = Field(default=None, description="octo/pickups")
    pickupPointId: str | None = Field(default=None, description="octo/pickups")
    pickupPoint: PickupPointOut | None = Field(default=None, description="octo/pickups")
    pickupHotel: str | None = Field(default=None, description="octo/pickups")
    pickupHotelRoom: str | None = Field(default=None, description="octo/pickups")
    pickupRoom: str | None = Field(default=None, description="octo/pickups: the same as pickupHotelRoom")
    pickupNotes: str | None = Field(default=None, description="octo/pickups: always null")
    pickupDispatch: str | None = Field(default=None, description="octo/pickups: always null")
    dropoffDispatch: str | None = Field(default=None, description="octo/pickups: always null")
    questionAnswers: list[QuestionAnswerOut] | None = Field(default=None, description="octo/questions")
    extraItems: list[ExtraItemOut] | None = Field(default=None, description="octo/extras")
    extraPricing: list[ExtraPricingOut] | None = Field(
        default=None, description="octo/extras with octo/pricing"
    )
    offerCode: str | None = Field(default=None, description="octo/offers")
    offerTitle: str | None = Field(default=None, description="octo/offers")
    offerIsCombination: bool | None = Field(default=None, description="octo/offers: always false")
    offerComparisons: list[dict[str, object]] | None = Field(
        default=None, description="octo/offers: always empty"
    )
    offer: OfferOut | None = Field(default=None, description="octo/offers: the booking's offer")
    giftPayment: dict[str, object] | None = Field(
        default=None, description="octo/gifts: what a gift voucher paid (giftCode: its last characters)"
    )
    offers: list[OfferOut] | None = Field(
        default=None, description="octo/offers: the offers this booking's channel may use, usable or not"
    )


class OrderOut(BaseModel):
    id: str
    testMode: bool
    supplierReference: str
    settlementMethod: str
    settlementMethods: list[str]
    status: str = Field(description="ON_HOLD, CONFIRMED, PENDING, CANCELLED or EXPIRED")
    utcCreatedAt: str
    utcUpdatedAt: str | None
    utcExpiresAt: str | None
    utcConfirmedAt: str | None
    cancellable: bool
    confirmable: bool
    updatable: bool
    active: bool
    quote: bool
    emailReceipt: bool
    currency: str | None
    cancellation: CancellationOut | None
    contact: ContactOut
    visibleContactFields: list[str]
    requiredContactFields: list[str]
    voucher: TicketOut | None
    bookings: list[BookingOut]
    pricing: PricingOut | None = Field(default=None, description="octo/pricing")
    offerCombinations: list[dict[str, object]] | None = Field(
        default=None, description="octo/offers: always empty (no combinations are sold)"
    )
