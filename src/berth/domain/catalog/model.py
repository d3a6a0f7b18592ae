"""The catalogue document model: supplier, products, options, units, schedules, prices and the
declarations capabilities add (content, resources, rental durations, package includes).

These models are both the in-memory catalogue and the schema of the catalogue file that
`berth catalog import` reads (camelCase keys, unknown keys rejected).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from berth.domain.catalog.taxes import AMOUNT_KEYS, with_tax_amounts

ClockTime = Annotated[str, Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
CurrencyCode = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
Identifier = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:\-]+$")]
LanguageTag = Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")]
Amount = Annotated[int, Field(ge=0)]
# The largest amount Berth takes in, in minor units, wherever amounts enter (catalogue prices and
# taxes, a rental's price times its multiplier, contracts' nets): docs/decisions.md, "One
# maximum for every amount". Checked by the rules of an import or a save, not by the model, so
# documents stored before the maximum still load.
MAX_AMOUNT = 10**12


def amount_problem(amount: int | None) -> str | None:
    """Why `amount` is above the maximum (None: it is not)."""
    if amount is None or amount <= MAX_AMOUNT:
        return None
    return f"{amount} is above the maximum amount, {MAX_AMOUNT:,} minor units"


def price_amounts(price: Price) -> list[tuple[tuple[str | int, ...], int | None]]:
    """Every amount of `price`, each with its place in the price (`includedTaxes`, 0, `net`)."""
    found: list[tuple[tuple[str | int, ...], int | None]] = [
        (("retail",), price.retail),
        (("original",), price.original),
        (("net",), price.net),
    ]
    for index, tax in enumerate(price.included_taxes):
        found += [(("includedTaxes", index, key), getattr(tax, key)) for key in ("retail", "original", "net")]
    return found


class CatalogModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class AvailabilityType(StrEnum):
    START_TIME = "START_TIME"
    OPENING_HOURS = "OPENING_HOURS"


class UnitType(StrEnum):
    ADULT = "ADULT"
    YOUTH = "YOUTH"
    CHILD = "CHILD"
    INFANT = "INFANT"
    FAMILY = "FAMILY"
    SENIOR = "SENIOR"
    STUDENT = "STUDENT"
    MILITARY = "MILITARY"
    OTHER = "OTHER"


class DeliveryFormat(StrEnum):
    PDF_URL = "PDF_URL"
    QRCODE = "QRCODE"
    CODE128 = "CODE128"
    PKPASS_URL = "PKPASS_URL"
    AZTECCODE = "AZTECCODE"


# Formats Berth delivers with no set-up: the code itself, or the URL of a PDF ticket it renders.
# An Apple Wallet pass (PKPASS_URL) needs a pass certificate (a CatalogRule adds it then).
CORE_FORMATS = frozenset(
    {DeliveryFormat.PDF_URL, DeliveryFormat.QRCODE, DeliveryFormat.CODE128, DeliveryFormat.AZTECCODE}
)


class DeliveryMethod(StrEnum):
    VOUCHER = "VOUCHER"
    TICKET = "TICKET"


class RedemptionMethod(StrEnum):
    DIGITAL = "DIGITAL"
    PRINT = "PRINT"
    MANIFEST = "MANIFEST"


class ContactField(StrEnum):
    firstName = "firstName"
    lastName = "lastName"
    emailAddress = "emailAddress"
    phoneNumber = "phoneNumber"
    country = "country"
    notes = "notes"
    locales = "locales"
    allowMarketing = "allowMarketing"
    postalCode = "postalCode"


class DurationUnit(StrEnum):
    minute = "minute"
    hour = "hour"
    day = "day"


class PricingPer(StrEnum):
    BOOKING = "BOOKING"
    UNIT = "UNIT"


class Weekday(StrEnum):
    MON = "MON"
    TUE = "TUE"
    WED = "WED"
    THU = "THU"
    FRI = "FRI"
    SAT = "SAT"
    SUN = "SUN"


WEEKDAYS: tuple[Weekday, ...] = tuple(Weekday)


class FeatureType(StrEnum):
    INCLUSION = "INCLUSION"
    EXCLUSION = "EXCLUSION"
    HIGHLIGHT = "HIGHLIGHT"
    PREBOOKING_INFORMATION = "PREBOOKING_INFORMATION"
    PREARRIVAL_INFORMATION = "PREARRIVAL_INFORMATION"
    REDEMPTION_INSTRUCTION = "REDEMPTION_INSTRUCTION"
    ACCESSIBILITY_INFORMATION = "ACCESSIBILITY_INFORMATION"
    ADDITIONAL_INFORMATION = "ADDITIONAL_INFORMATION"
    BOOKING_TERM = "BOOKING_TERM"
    CANCELLATION_TERM = "CANCELLATION_TERM"


class MediaType(StrEnum):
    JPEG = "image/jpeg"
    PNG = "image/png"
    MP4 = "video/mp4"
    AVI = "video/avi"
    YOUTUBE = "external/youtube"
    VIMEO = "external/vimeo"


class MediaRel(StrEnum):
    LOGO = "LOGO"
    COVER = "COVER"
    GALLERY = "GALLERY"


class LocationType(StrEnum):
    START = "START"
    ITINERARY_ITEM = "ITINERARY_ITEM"
    POINT_OF_INTEREST = "POINT_OF_INTEREST"
    ADMISSION_INCLUDED = "ADMISSION_INCLUDED"
    END = "END"
    REDEMPTION = "REDEMPTION"


class CommentaryFormat(StrEnum):
    IN_PERSON = "IN_PERSON"
    RECORDED_AUDIO = "RECORDED_AUDIO"
    WRITTEN = "WRITTEN"
    OTHER = "OTHER"


class CategoryLabel(StrEnum):
    """OCTO core `CategoryLabel`, in the order of the core document."""

    MULTI_DAY = "multi-day"
    CITY_CARDS = "city-cards"
    ADULTS_ONLY = "adults-only"
    ANIMALS = "animals"
    AUDIO_GUIDE = "audio-guide"
    BEACHES = "beaches"
    BIKE_TOURS = "bike-tours"
    BOAT_TOURS = "boat-tours"
    CLASSES = "classes"
    DAY_TRIPS = "day-trips"
    FAMILY_FRIENDLY = "family-friendly"
    FAST_TRACK = "fast-track"
    FOOD = "food"
    GUIDED_TOURS = "guided-tours"
    HISTORY = "history"
    HOP_ON_HOP_OFF = "hop-on-hop-off"
    LITERATURE = "literature"
    LIVE_MUSIC = "live-music"
    MUSEUMS = "museums"
    NIGHTLIFE = "nightlife"
    OUTDOORS = "outdoors"
    PRIVATE_TOURS = "private-tours"
    ROMANTIC = "romantic"
    RECURRING_EVENTS = "recurring-events"
    SELF_GUIDED = "self-guided"
    SMALL_GROUP_TOURS = "small-group-tours"
    SPORTS = "sports"
    THEME_PARKS = "theme-parks"
    WALKING_TOURS = "walking-tours"
    WHEELCHAIR_ACCESSIBLE = "wheelchair-accessible"
    ACCOMMODATION_INCLUDED = "accommodation-included"
    TRIP_DIFFICULTY_EASY = "trip-difficulty-easy"
    TRIP_DIFFICULTY_MEDIUM = "trip-difficulty-medium"
    TRIP_DIFFICULTY_HARD = "trip-difficulty-hard"


CATEGORY_LABELS = frozenset(CategoryLabel)


def _category_label(value: object) -> object:
    """A label outside the core list is refused naming every allowed value (pydantic's enum
    message does not say which value was wrong)."""
    if isinstance(value, str) and value not in CATEGORY_LABELS:
        raise PydanticCustomError(
            "category_label",
            "'{label}' is not an OCTO category label; use one of: {allowed}",
            {"label": value, "allowed": ", ".join(CategoryLabel)},
        )
    return value


CategoryLabelValue = Annotated[CategoryLabel, BeforeValidator(_category_label)]


# --- content (octo/content), per language --------------------------------------------------


class Feature(CatalogModel):
    short_description: str | None = None
    type: FeatureType


class Faq(CatalogModel):
    question: str
    answer: str


class Media(CatalogModel):
    src: Annotated[str, Field(pattern=r"^https?://\S+$")]
    type: MediaType
    rel: MediaRel
    title: str | None = None
    caption: str | None = None
    copyright: str | None = None


class PostalAddress(CatalogModel):
    street_address: str | None = None
    address_locality: str | None = None
    address_region: str | None = None
    postal_code: str | None = None
    address_country: str | None = None
    post_office_box_number: str | None = None


class PlaceIdentifiers(CatalogModel):
    google_place_id: str | None = None
    apple_place_id: str | None = None
    tripadvisor_location_id: str | None = None
    yelp_place_id: str | None = None
    facebook_place_id: str | None = None
    foursquare_place_id: str | None = None
    baidu_place_id: str | None = None
    amap_place_id: str | None = None


class Place(CatalogModel):
    latitude: Annotated[float, Field(ge=-90, le=90)]
    longitude: Annotated[float, Field(ge=-180, le=180)]
    postal_address: PostalAddress = PostalAddress()
    identifiers: PlaceIdentifiers = PlaceIdentifiers()
    same_as: tuple[str, ...] = ()


class Location(CatalogModel):
    title: str | None = None
    short_description: str | None = None
    types: tuple[LocationType, ...] = ()
    minutes_to: Annotated[int, Field(ge=0)] | None = None
    minutes_at: Annotated[int, Field(ge=0)] | None = None
    place: Place


class Commentary(CatalogModel):
    format: CommentaryFormat
    language: LanguageTag


class Content(CatalogModel):
    """Marketing content of a product or option in one language."""

    title: str | None = None
    short_description: str | None = None
    description: str | None = None
    features: tuple[Feature, ...] = ()
    faqs: tuple[Faq, ...] = ()
    media: tuple[Media, ...] = ()
    locations: tuple[Location, ...] = ()
    category_labels: tuple[CategoryLabelValue, ...] = ()
    commentary: tuple[Commentary, ...] = ()


class UnitContent(CatalogModel):
    title: str | None = None
    short_description: str | None = None
    features: tuple[Feature, ...] = ()


class SupplierContent(CatalogModel):
    short_description: str | None = None
    media: tuple[Media, ...] = ()


# --- prices (octo/pricing) -----------------------------------------------------------------


def _rate_written(rate: Decimal) -> int | float:
    """A rate as the file writes it: `20`, `5.5` (at most 4 decimals: the float is exact in text)."""
    return int(rate) if rate == rate.to_integral_value() else float(rate)


TaxRate = Annotated[
    Decimal, Field(gt=0, le=100, decimal_places=4), PlainSerializer(_rate_written, when_used="json")
]


class Tax(CatalogModel):
    """A tax included in a price: its amounts in minor units, or its `rate` in percent (`rate:
    20` for VAT 20 % included) and no amounts. A rate's amounts are worked out when the
    catalogue is loaded, for the price's `retail`, `original` (or retail) and `net` (when the
    price has one): price x rate / (100 + rate), rounded half up to the minor unit (20 % of a
    price of 2500 is 417, of 2700 it is 450). So a new price carries its new tax."""

    name: Annotated[str, Field(min_length=1)]
    rate: TaxRate | None = None
    retail: Amount
    original: Amount
    net: Amount | None = None

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """A tax given by rate is written back as its rate: the amounts follow the price."""
        written: dict[str, object] = handler(self)
        if self.rate is not None:
            for key in AMOUNT_KEYS:
                written.pop(key, None)
        return written


class Price(CatalogModel):
    """A price in one currency, in minor units; `from`/`until` limit it to travel dates. Every
    amount (retail, original, net, and those of included taxes) is at most 1,000,000,000,000
    (`MAX_AMOUNT`), a rental's once multiplied by its durations' `pricingMultiplier` too."""

    currency: CurrencyCode
    retail: Amount
    original: Amount | None = None
    net: Amount | None = None
    currency_precision: Annotated[int, Field(ge=0, le=4)] = 2
    included_taxes: tuple[Tax, ...] = ()
    valid_from: date | None = Field(default=None, alias="from")
    valid_until: date | None = Field(default=None, alias="until")

    @model_validator(mode="before")
    @classmethod
    def _tax_amounts(cls, data: object) -> object:
        return with_tax_amounts(data) if isinstance(data, dict) else data

    @property
    def original_or_retail(self) -> int:
        return self.retail if self.original is None else self.original

    def applies_on(self, day: date) -> bool:
        return (self.valid_from is None or self.valid_from <= day) and (
            self.valid_until is None or day <= self.valid_until
        )


# --- resources (octo/resources): vehicles, boats, rooms, guides, seat maps ------------------


def _label(value: object) -> object:
    """Seat ids, rows and columns are strings; YAML reads `row: 1` as a number."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


SeatLabel = Annotated[str, BeforeValidator(_label), Field(min_length=1, max_length=20)]
SeatId = Annotated[
    str, BeforeValidator(_label), Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.:\-]+$")
]


class CountBy(StrEnum):
    """How a booking uses a resource's capacity."""

    PAX = "PAX"  # every person takes a place (units' paxCount; an infant with paxCount 0 none)
    UNITS = "UNITS"  # every unit item takes a place, whatever its paxCount
    BOOKING = "BOOKING"  # a booking takes a whole resource (private hire); capacity caps its size


class Seat(CatalogModel):
    id: SeatId
    title: str | None = None  # shown to guests; the id when not given
    row: SeatLabel
    column: SeatLabel

    @property
    def label(self) -> str:
        return self.title or self.id


class SeatMap(CatalogModel):
    """The seats of a resource, and those never sold (crew seats, broken ones)."""

    seats: Annotated[tuple[Seat, ...], Field(min_length=1)]
    blocked: tuple[SeatId, ...] = ()


class Seller(CatalogModel):
    """A driver or guide (OCTO `Seller`)."""

    id: Identifier
    name: Annotated[str, Field(min_length=1)]
    reference: str | None = None
    tags: tuple[str, ...] = ()
    email_address: str | None = None
    phone_number: str | None = None


class ServiceRule(CatalogModel):
    """Slots a resource serves: those on the listed dates (or weekdays, within from/until) at
    the listed start times. An empty field does not restrict."""

    valid_from: date | None = Field(default=None, alias="from")
    valid_until: date | None = Field(default=None, alias="until")
    weekdays: tuple[Weekday, ...] = WEEKDAYS
    dates: tuple[date, ...] = ()
    start_times: tuple[ClockTime, ...] = ()

    def matches(self, day: date, clock: str | None) -> bool:
        return (
            (self.valid_from is None or self.valid_from <= day)
            and (self.valid_until is None or day <= self.valid_until)
            and WEEKDAYS[day.weekday()] in self.weekdays
            and (not self.dates or day in self.dates)
            and (not self.start_times or clock in self.start_times)
        )


class Resource(CatalogModel):
    """One vehicle, boat, room or guide. Its capacity is `capacity`, or with a seat map the
    seats that are not blocked. `serves` limits which slots it works (default: all of the
    option's slots); `closedDates` takes it out of service on those dates."""

    id: Identifier
    title: Annotated[str, Field(min_length=1)]
    capacity: Annotated[int, Field(ge=1)] | None = None
    seat_map: SeatMap | None = None
    serves: tuple[ServiceRule, ...] = ()
    closed_dates: tuple[date, ...] = ()
    driver: Seller | None = None
    guide: Seller | None = None

    @property
    def places(self) -> int:
        if self.capacity is not None:
            return self.capacity
        if self.seat_map is None:
            return 0
        blocked = set(self.seat_map.blocked)
        return sum(1 for seat in self.seat_map.seats if seat.id not in blocked)

    def serves_on(self, day: date, clock: str | None) -> bool:
        if day in self.closed_dates:
            return False
        return not self.serves or any(rule.matches(day, clock) for rule in self.serves)


class ResourceGroup(CatalogModel):
    """Resources of one kind for an option (the boats, the coaches). Every booking takes
    resources of each `required` group; with `split: false` a single resource must take the
    whole party (OCTO resources rules 4 and 5)."""

    id: Identifier
    title: Annotated[str, Field(min_length=1)]
    split: bool = False
    required: bool = True
    count_by: CountBy = CountBy.PAX
    resources: Annotated[tuple[Resource, ...], Field(min_length=1)]

    def resource(self, resource_id: str) -> Resource | None:
        return next((r for r in self.resources if r.id == resource_id), None)


# --- pickups (octo/pickups) ------------------------------------------------------------------


class PickupPoint(CatalogModel):
    """A hotel or meeting point where an option's guests are collected. Guests are picked up
    from `minutesBefore` minutes before the departure until `windowMinutes` later (0: at
    that very time); the window closes at the departure at the latest."""

    id: Identifier
    name: Annotated[str, Field(min_length=1, max_length=200)]
    directions: str | None = None
    address: str | None = None
    street: str | None = None
    postal_code: str | None = None
    locality: str | None = None
    region: str | None = None
    state: str | None = None
    country: str | None = None
    latitude: Annotated[float, Field(ge=-90, le=90)] | None = None
    longitude: Annotated[float, Field(ge=-180, le=180)] | None = None
    google_place_id: str | None = None
    minutes_before: Annotated[int, Field(ge=0, le=24 * 60)]
    window_minutes: Annotated[int, Field(ge=0, le=24 * 60)] = 0


# --- questions (octo/questions) -------------------------------------------------------------


class QuestionInputType(StrEnum):
    """OCTO `QuestionInputType`: how the reseller asks (the schema's list)."""

    radio = "radio"
    select = "select"
    textArea = "textArea"


class AnswerFormat(StrEnum):
    """What a free-text (`textArea`) answer must be; Berth checks it."""

    text = "text"
    date = "date"  # an ISO date, YYYY-MM-DD
    number = "number"
    email = "email"


class SelectOption(CatalogModel):
    label: Annotated[str, Field(min_length=1, max_length=200)]
    value: Annotated[str, Field(min_length=1, max_length=200)]


class Question(CatalogModel):
    """A question guests answer at booking (octo/questions). A product's or option's question
    is asked once per booking, or with `perUnit` once per unit item; a unit's questions are
    asked for each unit item of that unit. `radio` and `select` are answered with the `value` of
    one of their `selectOptions`; `textArea` with text in `format`, at most `maxLength` long."""

    id: Identifier
    title: Annotated[str, Field(min_length=1, max_length=500)]
    short_description: str | None = None
    description: str | None = None
    internal_name: str | None = None
    input_type: QuestionInputType = QuestionInputType.textArea
    format: AnswerFormat = AnswerFormat.text
    max_length: Annotated[int, Field(ge=1, le=1000)] | None = None
    required: bool = False
    select_options: tuple[SelectOption, ...] = ()
    per_unit: bool | None = None
    cover_image_url: Annotated[str, Field(pattern=r"^https?://\S+$")] | None = None


# --- extras (octo/extras) -------------------------------------------------------------------


class Extra(CatalogModel):
    """An add-on sold with an option's bookings (lunch, a photo package), priced per piece.
    Booked per booking, or with `perUnit` per unit item; `minQuantity`/`maxQuantity` bound the
    pieces per booking (or per unit item). `stock`: the pieces one departure can sell (None: no
    limit)."""

    id: Identifier
    internal_name: Annotated[str, Field(min_length=1)]
    title: str | None = None
    short_description: str | None = None
    description: str | None = None
    reference: str | None = None
    per_unit: bool = False
    default: bool = False
    min_quantity: Annotated[int, Field(ge=0, le=100)] = 0
    max_quantity: Annotated[int, Field(ge=1, le=100)] | None = None
    prices: tuple[Price, ...] = ()
    stock: Annotated[int, Field(ge=0)] | None = None


# --- units, options, schedules, products ---------------------------------------------------


class UnitRestrictions(CatalogModel):
    min_age: Annotated[int, Field(ge=0)] = 0
    max_age: Annotated[int, Field(ge=0)] = 100
    id_required: bool = False
    min_quantity: Annotated[int, Field(ge=0)] | None = None
    max_quantity: Annotated[int, Field(ge=1)] | None = None
    pax_count: Annotated[int, Field(ge=0)] = 1
    accompanied_by: tuple[Identifier, ...] = ()
    min_height: int | None = None
    max_height: int | None = None
    height_unit: str | None = None
    min_weight: int | None = None
    max_weight: int | None = None
    weight_unit: str | None = None


class Unit(CatalogModel):
    id: Identifier
    internal_name: Annotated[str, Field(min_length=1)]
    reference: str | None = None
    type: UnitType
    restrictions: UnitRestrictions = UnitRestrictions()
    required_contact_fields: tuple[ContactField, ...] = ()
    prices: tuple[Price, ...] = ()
    content: dict[LanguageTag, UnitContent] = {}
    questions: tuple[Question, ...] = ()  # octo/questions: asked for each unit item of the unit


class OptionRestrictions(CatalogModel):
    min_units: Annotated[int, Field(ge=0)] | None = None
    max_units: Annotated[int, Field(ge=1)] | None = None


class OpeningHours(CatalogModel):
    opens: ClockTime = Field(alias="from")
    closes: ClockTime = Field(alias="to")


class Schedule(CatalogModel):
    """When an option operates: weekdays within a date range, with start times or opening hours.

    `capacity` is the number of places per slot (in pax); `null` means freesale (no limit).
    """

    valid_from: date | None = Field(default=None, alias="from")
    valid_until: date | None = Field(default=None, alias="until")
    weekdays: tuple[Weekday, ...] = WEEKDAYS
    start_times: tuple[ClockTime, ...] = ()
    opening_hours: tuple[OpeningHours, ...] = ()
    capacity: Annotated[int, Field(ge=0)] | None

    def in_season(self, day: date) -> bool:
        """`day` is within the schedule's date range (whatever its weekday)."""
        return (self.valid_from is None or self.valid_from <= day) and (
            self.valid_until is None or day <= self.valid_until
        )

    def applies_on(self, day: date) -> bool:
        return self.in_season(day) and WEEKDAYS[day.weekday()] in self.weekdays


class RentalDuration(CatalogModel):
    """One way to rent an item of a rental option (octo/rentals): how long it is out, and the
    price factor. `durationAmount` days are calendar days in the product's time zone (an item
    picked up at 10:00 is due back at 10:00); hours and minutes are elapsed time. Prices of
    the option (unit or booking prices) are multiplied by `pricingMultiplier`."""

    id: Identifier
    title: Annotated[str, Field(min_length=1, max_length=200)]
    short_description: str | None = None
    duration_amount: Annotated[int | float, Field(gt=0)]
    duration_unit: DurationUnit
    pricing_multiplier: Annotated[int | float, Field(gt=0, le=10_000)] = 1


class CapacityOverride(CatalogModel):
    """A different capacity for one date (all its slots, or the one at `startTime`)."""

    date: date
    start_time: ClockTime | None = None
    capacity: Annotated[int, Field(ge=0)] | None


class PackageInclude(CatalogModel):
    """One product/option a package includes (octo/packages). `required`: every package booking
    books it; `limit`: how many times one package booking may book it (Berth books it once);
    `availabilityRequired`: the package booking names the include's availability."""

    id: Identifier
    product_id: Identifier
    option_id: Identifier
    required: bool = True
    limit: Annotated[int, Field(ge=1)] = 1
    validity_days: Annotated[int, Field(ge=0)] | None = None
    availability_required: bool = True


class PackageIncludeGroup(CatalogModel):
    """A group of includes; `count` is how many of them one package booking may book at most
    (None: no limit). Required includes always count."""

    id: Identifier
    title: str | None = None
    count: Annotated[int, Field(ge=1)] | None = None
    includes: Annotated[tuple[PackageInclude, ...], Field(min_length=1)]


class Option(CatalogModel):
    id: Identifier
    default: bool = False
    internal_name: Annotated[str, Field(min_length=1)]
    reference: str | None = None
    duration_minutes: Annotated[int, Field(ge=1, le=60 * 24 * 31)] = 60
    cancellation_cutoff_amount: Annotated[int, Field(ge=0)] = 0
    cancellation_cutoff_unit: DurationUnit = DurationUnit.hour
    sales_cutoff_minutes: Annotated[int, Field(ge=0)] = 0
    required_contact_fields: tuple[ContactField, ...] = ()
    restrictions: OptionRestrictions = OptionRestrictions()
    units: Annotated[tuple[Unit, ...], Field(min_length=1)]
    booking_prices: tuple[Price, ...] = ()
    schedules: tuple[Schedule, ...] = ()
    closed_dates: tuple[date, ...] = ()
    capacity_overrides: tuple[CapacityOverride, ...] = ()
    # octo/rentals: an option with rental durations lends a stock of items (its schedules'
    # capacity) for the duration the guest picks; a request that names none (and every
    # request without octo/rentals) gets the default one: this, or the first listed.
    rental_durations: tuple[RentalDuration, ...] = ()
    default_rental_duration_id: Identifier | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    content: dict[LanguageTag, Content] = {}
    package_includes: tuple[PackageIncludeGroup, ...] = ()
    # octo/pickups: where guests may be collected, and whether every booking must be.
    pickup_points: tuple[PickupPoint, ...] = ()
    pickup_required: bool = False
    questions: tuple[Question, ...] = ()  # octo/questions
    extras: tuple[Extra, ...] = ()  # octo/extras

    def extra(self, extra_id: str) -> Extra | None:
        return next((e for e in self.extras if e.id == extra_id), None)

    def pickup_point(self, point_id: str) -> PickupPoint | None:
        return next((p for p in self.pickup_points if p.id == point_id), None)

    @property
    def includes(self) -> list[PackageInclude]:
        """Every include of every group, in order (octo/packages)."""
        return [include for group in self.package_includes for include in group.includes]

    def unit(self, unit_id: str) -> Unit | None:
        return next((u for u in self.units if u.id == unit_id), None)

    def resource_group(self, group_id: str) -> ResourceGroup | None:
        return next((g for g in self.resource_groups if g.id == group_id), None)

    def find_resource(self, resource_id: str) -> tuple[ResourceGroup, Resource] | None:
        for group in self.resource_groups:
            resource = group.resource(resource_id)
            if resource is not None:
                return group, resource
        return None

    @property
    def is_rental(self) -> bool:
        return bool(self.rental_durations)

    def rental_duration(self, duration_id: str) -> RentalDuration | None:
        return next((d for d in self.rental_durations if d.id == duration_id), None)

    @property
    def default_rental_duration(self) -> RentalDuration | None:
        """The duration a rental is sold at when none is named (None: not a rental option)."""
        if self.default_rental_duration_id is not None:
            declared = self.rental_duration(self.default_rental_duration_id)
            if declared is not None:
                return declared
        return self.rental_durations[0] if self.rental_durations else None

    @property
    def local_start_times(self) -> list[str]:
        return sorted({t for s in self.schedules for t in s.start_times})


class Product(CatalogModel):
    id: Identifier
    internal_name: Annotated[str, Field(min_length=1)]
    reference: str | None = None
    locale: LanguageTag = "en-GB"
    time_zone: str
    allow_freesale: bool = False
    instant_confirmation: bool = True
    instant_delivery: bool = True
    availability_required: bool = True
    availability_type: AvailabilityType
    delivery_formats: Annotated[tuple[DeliveryFormat, ...], Field(min_length=1)]
    delivery_methods: Annotated[tuple[DeliveryMethod, ...], Field(min_length=1)]
    redemption_method: RedemptionMethod = RedemptionMethod.DIGITAL
    pricing_per: PricingPer = PricingPer.UNIT
    default_currency: CurrencyCode | None = None
    options: Annotated[tuple[Option, ...], Field(min_length=1)]
    content: dict[LanguageTag, Content] = {}
    package_booking_availability_required: bool = True
    questions: tuple[Question, ...] = ()  # octo/questions: asked on every option

    @property
    def is_package(self) -> bool:
        return any(option.package_includes for option in self.options)

    @field_validator("time_zone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA time zone {value!r}") from None
        return value

    def option(self, option_id: str) -> Option | None:
        return next((o for o in self.options if o.id == option_id), None)

    @property
    def default_option(self) -> Option:
        return next((o for o in self.options if o.default), self.options[0])

    @property
    def is_rental(self) -> bool:
        return any(o.is_rental for o in self.options)

    @property
    def currencies(self) -> list[str]:
        """Every currency the product is priced in, the default one first."""
        found: list[str] = []
        for option in self.options:
            for price in option.booking_prices:
                if price.currency not in found:
                    found.append(price.currency)
            for unit in option.units:
                for price in unit.prices:
                    if price.currency not in found:
                        found.append(price.currency)
        if self.default_currency:
            found = [self.default_currency] + [c for c in found if c != self.default_currency]
        return found

    @property
    def currency(self) -> str | None:
        currencies = self.currencies
        return currencies[0] if currencies else None

    @property
    def languages(self) -> list[str]:
        found = [self.locale]
        for tag in self.content:
            if tag not in found:
                found.append(tag)
        return found


class SupplierContact(CatalogModel):
    website: str | None = None
    email: str | None = None
    telephone: str | None = None
    address: str | None = None


class Supplier(CatalogModel):
    id: Identifier
    name: Annotated[str, Field(min_length=1)]
    reference: str | None = None
    contact: SupplierContact = SupplierContact()
    content: dict[LanguageTag, SupplierContent] = {}


class Catalog(CatalogModel):
    supplier: Supplier
    products: tuple[Product, ...] = ()
    # Why this catalogue, as a connection's contract sells it, has nothing on sale (the contract
    # is not in force: domain.contracts); not part of the document.
    _unsold: str | None = PrivateAttr(default=None)
    # A contract's catalogue: the product a booking made under the contract is on, by product
    # and option id, whether or not the contract still sells them (domain.contracts); None: the
    # catalogue's own products.
    _booked: Callable[[str, str], Product | None] | None = PrivateAttr(default=None)

    @property
    def unsold(self) -> str | None:
        return self._unsold

    def unsold_because(self, reason: str) -> Catalog:
        """This catalogue with nothing on sale, saying why."""
        empty = self.model_copy(update={"products": ()})
        empty._unsold = reason
        return empty

    def with_bookings_on(self, booked: Callable[[str, str], Product | None]) -> Catalog:
        """This catalogue, finding the products of bookings made earlier with `booked`."""
        found = self.model_copy()
        found._booked = booked
        return found

    def product(self, product_id: str) -> Product | None:
        return next((p for p in self.products if p.id == product_id), None)

    def sells(self, product_id: str, option_id: str) -> bool:
        product = self.product(product_id)
        return product is not None and product.option(option_id) is not None

    def booked(self, product_id: str, option_id: str) -> Product | None:
        """The product a booking on its option `option_id` is on, with that option: as this
        catalogue sells it, else as the contract it was made under sees it now that it sells it
        no longer (a booking's product and option are its own). None: not in the catalogue."""
        product = self.product(product_id)
        if product is not None and product.option(option_id) is not None:
            return product
        return self._booked(product_id, option_id) if self._booked is not None else None

    @property
    def languages(self) -> list[str]:
        found: list[str] = []
        for product in self.products:
            for tag in product.languages:
                if tag not in found:
                    found.append(tag)
        for tag in self.supplier.content:
            if tag not in found:
                found.append(tag)
        return found


def include_unit(include_option: Option, unit: Unit) -> Unit | None:
    """The include option's unit a package unit is booked as: same id, else same type."""
    return include_option.unit(unit.id) or next(
        (u for u in include_option.units if u.type is unit.type), None
    )


# The longest rental: a year of 366 days.
MAX_RENTAL_MINUTES = 366 * 24 * 60
_UNIT_MINUTES = {DurationUnit.minute: 1, DurationUnit.hour: 60, DurationUnit.day: 24 * 60}


def rental_minutes(duration: RentalDuration) -> Decimal:
    """The duration in minutes, exactly (a day counted as 24 hours)."""
    return duration_minutes(duration.duration_amount, duration.duration_unit)


def duration_minutes(amount: int | float, unit: DurationUnit) -> Decimal:
    return Decimal(str(amount)) * _UNIT_MINUTES[unit]
