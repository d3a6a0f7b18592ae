"""Builders of test data: catalogues in the catalogue file's format, with defaults that make a
valid plain OCTO product, so a test names only what it depends on. A built catalogue goes
through the same rules as a catalogue import (`catalog`), `load` puts it and the two reseller
connections into a test's real database, and `confirmed_booking` books on it.

    load(services, catalog(product("cruise", options=[option(schedules=[schedule(capacity=5)])])))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.domain.bookings import Contact
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import catalog_to_yaml, parse_catalog
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from tests.conftest import KEY_A, KEY_B, SECRET_A, SECRET_B

Document = dict[str, Any]
EVERY_DAY = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


def price(
    retail: int,
    *,
    currency: str = "EUR",
    net: int | None = None,
    original: int | None = None,
    vat: int | None = None,
    vat_original: int | None = None,
) -> Document:
    """A price in minor units (net: four fifths of retail unless given); `vat` the VAT included
    in the retail price, `vat_original` in the original price (default: the same)."""
    found: Document = {"currency": currency, "retail": retail}
    if original is not None:
        found["original"] = original
    found["net"] = net if net is not None else retail * 4 // 5
    if vat is not None:
        found["includedTaxes"] = [
            {"name": "VAT", "retail": vat, "original": vat_original or vat, "net": vat * 4 // 5}
        ]
    return found


def unit(
    unit_id: str = "adult",
    unit_type: str = "ADULT",
    *,
    prices: Sequence[Document] = (),
    **restrictions: Any,
) -> Document:
    """A unit; `restrictions` in the file's keys (minAge=16, accompaniedBy=["adult"], paxCount=4)."""
    found: Document = {"id": unit_id, "internalName": unit_id.title(), "type": unit_type}
    if restrictions:
        found["restrictions"] = dict(restrictions)
    if prices:
        found["prices"] = list(prices)
    return found


def schedule(
    start_times: Sequence[str] = ("10:00",),
    *,
    capacity: int | None = 10,
    weekdays: Sequence[str] = EVERY_DAY,
    opening_hours: Sequence[tuple[str, str]] = (),
    valid_from: str | None = None,
    valid_until: str | None = None,
) -> Document:
    """Departures at `start_times` on `weekdays` (or, with `opening_hours`, a day open then),
    from `valid_from` until `valid_until` (ISO dates; None: always)."""
    found: Document = {"weekdays": list(weekdays), "capacity": capacity}
    if valid_from is not None:
        found["from"] = valid_from
    if valid_until is not None:
        found["until"] = valid_until
    if opening_hours:
        found["openingHours"] = [{"from": opens, "to": closes} for opens, closes in opening_hours]
    else:
        found["startTimes"] = list(start_times)
    return found


def option(
    option_id: str = "DEFAULT",
    *,
    units: Sequence[Document] = (),
    schedules: Sequence[Document] = (),
    cutoff_hours: int = 24,
    required_contact: Sequence[str] = ("firstName", "lastName", "emailAddress"),
    **extra: Any,
) -> Document:
    """An option; by default one adult unit and daily departures at 10:00 of 10 places."""
    found: Document = {
        "id": option_id,
        "default": option_id == "DEFAULT",
        "internalName": option_id,
        "durationMinutes": 60,
        "cancellationCutoffAmount": cutoff_hours,
        "cancellationCutoffUnit": "hour",
        "requiredContactFields": list(required_contact),
        "schedules": list(schedules) or [schedule()],
        "units": list(units) or [unit(prices=[price(2500)])],
        **extra,
    }
    return found


def seat_map(rows: int, columns: str = "ABCD", *, blocked: Sequence[str] = ()) -> Document:
    """Seats 1A, 1B, ... in `rows` rows of `columns`; `blocked` seats are never sold."""
    seats = [
        {"id": f"{row}{column}", "row": str(row), "column": column}
        for row in range(1, rows + 1)
        for column in columns
    ]
    found: Document = {"seats": seats}
    if blocked:
        found["blocked"] = list(blocked)
    return found


def resource(
    resource_id: str,
    title: str | None = None,
    *,
    capacity: int | None = None,
    seats: Document | None = None,
    start_times: Sequence[str] = (),
    **extra: Any,
) -> Document:
    """A resource of `capacity` places or with the `seats` of a `seat_map`; with `start_times`
    it serves only those departures. `extra`: guide, driver, ... in the file's keys."""
    found: Document = {"id": resource_id, "title": title or resource_id.title(), **extra}
    if capacity is not None:
        found["capacity"] = capacity
    if seats is not None:
        found["seatMap"] = seats
    if start_times:
        found["serves"] = [{"startTimes": list(start_times)}]
    return found


def resource_group(
    group_id: str, resources: Sequence[Document], *, title: str | None = None, split: bool = False
) -> Document:
    return {"id": group_id, "title": title or group_id.title(), "split": split, "resources": list(resources)}


def rental_duration(
    duration_id: str, amount: int, unit_name: str, *, multiplier: float | None = None, **extra: Any
) -> Document:
    """A rental duration of `amount` `unit_name`s (hour, day); `multiplier` prices it."""
    found: Document = {
        "id": duration_id,
        "title": duration_id.replace("-", " "),
        "durationAmount": amount,
        "durationUnit": unit_name,
        **extra,
    }
    if multiplier is not None:
        found["pricingMultiplier"] = multiplier
    return found


def pickup_point(point_id: str, name: str, minutes_before: int, *, window: int = 0, **extra: Any) -> Document:
    """octo/pickups: a pickup point collecting guests `minutes_before` the departure for
    `window` minutes; `extra` in the file's keys (directions, street, latitude, googlePlaceId)."""
    return {"id": point_id, "name": name, "minutesBefore": minutes_before, "windowMinutes": window, **extra}


def question(
    question_id: str, title: str, *, input_type: str = "textArea", options: Sequence[str] = (), **extra: Any
) -> Document:
    """octo/questions: a question; `options` the values of a radio or select question (labels
    their title case); `extra` in the file's keys (required=True, perUnit=True, format="date")."""
    found: Document = {"id": question_id, "title": title, "inputType": input_type, **extra}
    if options:
        found["selectOptions"] = [{"label": value.title(), "value": value} for value in options]
    return found


def extra(extra_id: str, prices: Sequence[Document] = (), **extra_fields: Any) -> Document:
    """octo/extras: an extra of an option; `extra_fields` in the file's keys (perUnit=True,
    stock=5, maxQuantity=1)."""
    found: Document = {"id": extra_id, "internalName": extra_id.replace("-", " ").title(), **extra_fields}
    if prices:
        found["prices"] = list(prices)
    return found


def included(
    include_id: str, product_id: str, option_id: str = "DEFAULT", *, required: bool = True, **extra: Any
) -> Document:
    """One include of a package group; `extra`: availabilityRequired, validityDays, ..."""
    return {"id": include_id, "productId": product_id, "optionId": option_id, "required": required, **extra}


def include_group(group_id: str, includes: Sequence[Document], **extra: Any) -> Document:
    """A group of a package's `packageIncludes`; `extra`: title, count, ..."""
    return {"id": group_id, "title": group_id.title(), "includes": list(includes), **extra}


def product(
    product_id: str,
    *,
    options: Sequence[Document] = (),
    availability_type: str = "START_TIME",
    time_zone: str = "Europe/London",
    currency: str | None = "EUR",
    **extra: Any,
) -> Document:
    found: Document = {
        "id": product_id,
        "internalName": product_id.replace("-", " ").title(),
        "locale": "en-GB",
        "timeZone": time_zone,
        "availabilityType": availability_type,
        "deliveryFormats": ["QRCODE"],
        "deliveryMethods": ["TICKET", "VOUCHER"],
        "redemptionMethod": "DIGITAL",
        "pricingPer": "UNIT",
        "options": list(options) or [option()],
        **extra,
    }
    if currency is not None:
        found.setdefault("defaultCurrency", currency)
    return found


def supplier(supplier_id: str = "test-supplier", name: str = "Test Supplier", **extra: Any) -> Document:
    """The supplier; by default with a reference, a website and a short description."""
    return {
        "id": supplier_id,
        "name": name,
        "reference": "TEST",
        "contact": {"website": "https://supplier.test", "email": "bookings@supplier.test"},
        "content": {"en-GB": {"shortDescription": f"{name}, for tests."}},
        **extra,
    }


def catalog(*products: Document, owner: Document | None = None) -> Catalog:
    """The catalogue of `products` sold by `owner` (default: `supplier()`), checked by every
    rule an import applies."""
    model = Catalog.model_validate({"supplier": owner or supplier(), "products": list(products)})
    key = model.model_dump_json()
    if key not in _CHECKED:
        _CHECKED[key] = parse_catalog(catalog_to_yaml(model), CATALOG_RULES)
    return _CHECKED[key]


# The catalogues `catalog` built, by their every field: writing and reading one depends on it
# alone and a Catalog is immutable, so each is written and read once a test process. The
# fixtures build the same few for hundreds of tests (the every-capability one took 40 ms of a
# back-office test's setup). One that fails the rules raises every time.
_CHECKED: dict[str, Catalog] = {}


async def load(services: Services, built: Catalog) -> Services:
    """Store `built` as the catalogue and create the two reseller connections (KEY_A, KEY_B,
    signing webhooks with SECRET_A, SECRET_B)."""
    await services.catalog.replace(built)
    await services.connections.ensure("Reseller A", KEY_A, SECRET_A)
    await services.connections.ensure("Reseller B", KEY_B, SECRET_B)
    return services


async def confirmed_booking(
    services: Services,
    connection: tuple[str, str],
    product_id: str,
    availability_id: str,
    units: Sequence[str],
    contact: Mapping[str, str],
    *,
    option_id: str = "DEFAULT",
    reseller_reference: str | None = None,
) -> BookingDetails:
    """A booking reserved and confirmed by `connection` (name, API key), created if missing."""
    built = (await services.catalog.snapshot()).catalog
    booker = await services.connections.ensure(*connection)
    reservation = ReserveInput(
        product_id=product_id,
        option_id=option_id,
        availability_id=availability_id,
        unit_items=tuple(UnitItemInput(unit_id) for unit_id in units),
        reseller_reference=reseller_reference,
    )
    held = await services.bookings.reserve(built, booker.id, reservation)
    return await services.bookings.confirm(
        built, booker.id, held.booking.uuid, ConfirmInput(Contact(values=dict(contact)))
    )
