"""Builders of test data: catalogues in the catalogue file's format, with defaults that make a
valid plain OCTO product, so a test names only what it depends on. A built catalogue goes
through the same rules as a catalogue import (`catalog`), and `load` puts it and the two
reseller connections into a test's real database.

    load(services, catalog(product("cruise", options=[option(schedules=[schedule(capacity=5)])])))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import catalog_to_yaml, parse_catalog
from tests.conftest import KEY_A, KEY_B

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


def catalog(*products: Document) -> Catalog:
    """The catalogue of `products`, checked by every rule an import applies."""
    document = {"supplier": {"id": "test-supplier", "name": "Test Supplier"}, "products": list(products)}
    return parse_catalog(catalog_to_yaml(Catalog.model_validate(document)), CATALOG_RULES)


async def load(services: Services, built: Catalog) -> Services:
    """Store `built` as the catalogue and create the two reseller connections (KEY_A, KEY_B)."""
    await services.catalog.replace(built)
    await services.connections.ensure("Reseller A", KEY_A)
    await services.connections.ensure("Reseller B", KEY_B)
    return services
