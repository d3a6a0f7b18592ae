"""octo/packages: package fields, package availability serialized like top-level availability,
and package bookings that hold, confirm and release every include together.
Clock: 2026-06-01T08:00Z (Monday; 09:00 in London). The packages tests' harbour-city-pass
(`tests.packages_helpers`) bundles the Thames cruise (timed), the Tower of Stories (opening
hours) and, optionally, the kayak trip."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from berth.capabilities.registry import CATALOG_RULES, asked_fields
from berth.container import Services, build_services
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import CatalogFileError, catalog_to_yaml, parse_catalog
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.settings import Settings
from tests.bookings_helpers import GUEST, vacancies
from tests.builders import Document, catalog, load
from tests.conftest import ADMIN, Clock, auth
from tests.packages_helpers import PASS, packages_catalog, packages_products

PACKAGES = "octo/packages"
MUSEUM = {"productId": "tower-of-stories", "optionId": "DEFAULT"}
CRUISE = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
DAY = "2026-06-02"
CRUISE_SLOT = "2026-06-02T10:00:00+01:00"


async def availability(
    client: httpx.AsyncClient, product: dict[str, str], capabilities: str | None = None
) -> Any:
    response = await client.post(
        "/octo/availability", json={**product, "localDate": DAY}, headers=auth(capabilities=capabilities)
    )
    assert response.status_code == 200, response.text
    return response.json()


async def pass_slot(client: httpx.AsyncClient) -> str:
    slot: str = (await availability(client, PASS))[0]["id"]
    return slot


async def museum_slot(client: httpx.AsyncClient) -> str:
    slot: str = (await availability(client, MUSEUM))[0]["id"]
    return slot


async def package_body(
    client: httpx.AsyncClient, units: tuple[str, ...] = ("adult", "child"), **extra: Any
) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()), **PASS, "availabilityId": await pass_slot(client),
        "unitItems": [{"unitId": u} for u in units],
        "packageBookings": [
            {"includeId": "cruise", "availabilityId": CRUISE_SLOT},
            {"includeId": "museum", "availabilityId": await museum_slot(client)},
        ],
        **extra,
    }  # fmt: skip


async def test_package_fields_only_with_the_capability(client: httpx.AsyncClient, packaged: Services) -> None:
    plain = (await client.get("/octo/products/harbour-city-pass", headers=auth())).json()
    assert "isPackage" not in plain and "packageIncludes" not in plain["options"][0]
    assert "packageAvailabilities" not in (await availability(client, PASS))[0]
    product = (
        await client.get("/octo/products/harbour-city-pass", headers=auth(capabilities=PACKAGES))
    ).json()
    assert product["isPackage"] is True and product["packageProduct"] is True
    assert product["packageBookingAvailabilityRequired"] is True
    groups = product["options"][0]["packageIncludes"]
    assert [g["id"] for g in groups] == ["sights", "extras"]
    cruise = groups[0]["includes"][0]
    assert cruise == {
        "id": "cruise", "required": True, "limit": 1, "validityDays": None, "availabilityRequired": True,
        "productId": "thames-sightseeing", "product": None, "optionId": "DEFAULT", "option": None,
    }  # fmt: skip
    tour = (await client.get("/octo/products/thames-sightseeing", headers=auth(capabilities=PACKAGES))).json()
    assert tour["isPackage"] is False and tour["options"][0]["packageIncludes"] == []


async def test_package_availabilities_are_availability_objects(
    client: httpx.AsyncClient, packaged: Services
) -> None:
    caps = f"{PACKAGES}, vendor/mappings"
    row = {"resellerReference": "RA-THAMES", "webhookUrl": "https://reseller-a.example/mappings"}
    assert (await client.put("/octo/mappings", json=[row], headers=auth())).status_code == 200
    (stored,) = (await client.get("/admin/api/mappings", headers=ADMIN)).json()["mappings"]
    mapped = await client.patch(f"/admin/api/mappings/{stored['id']}", json=CRUISE, headers=ADMIN)
    assert mapped.status_code == 200, mapped.text
    (item,) = await availability(client, PASS, caps)
    included = item["packageAvailabilities"]
    cruise_items = [a for a in included if a["id"] == CRUISE_SLOT]
    assert len(cruise_items) == 1
    # exactly what POST /availability answers for the cruise itself, capability fields included
    top = {a["id"]: a for a in await availability(client, CRUISE, caps)}
    assert cruise_items[0] == top[CRUISE_SLOT]
    assert cruise_items[0]["mappings"] and cruise_items[0]["mappings"][0]["productId"] == "thames-sightseeing"
    assert {a["id"] for a in included} >= set(top) | {await museum_slot(client)}
    assert all(a["packageAvailabilities"] == [] for a in included)
    # the calendar is unchanged
    calendar = await client.post(
        "/octo/availability/calendar",
        json={**PASS, "localDateStart": DAY, "localDateEnd": DAY},
        headers=auth(capabilities=caps),
    )
    assert "packageAvailabilities" not in calendar.json()[0]


async def test_package_is_sold_out_when_a_required_include_is(settings: Settings, clock: Clock) -> None:
    services = build_services(settings, clock)
    try:
        catalog: Catalog = _closed_museum_catalog()
        from berth.services.availability import AvailabilityQuery

        (item,) = await services.availability.check(
            catalog, AvailabilityQuery("harbour-city-pass", "DEFAULT", local_date=_date(DAY))
        )
        assert item.state.available is False and item.state.status == "SOLD_OUT"
        assert {i.state.status for i in item.includes if i.product.id == "tower-of-stories"} == {"CLOSED"}
    finally:
        await services.close()


def _date(text: str) -> Any:
    from datetime import date

    return date.fromisoformat(text)


def _closed_museum_products() -> tuple[Document, ...]:
    products = packages_products()
    (museum,) = [p for p in products if p["id"] == MUSEUM["productId"]]
    museum["options"][0]["closedDates"].insert(0, DAY)
    return products


def _closed_museum_catalog() -> Catalog:
    return catalog(*_closed_museum_products())


async def test_package_booking_holds_confirms_and_releases_every_include(
    client: httpx.AsyncClient, packaged: Services
) -> None:
    museum = await museum_slot(client)
    before = (await vacancies(client), await vacancies(client, museum, MUSEUM))
    response = await client.post(
        "/octo/bookings", json=await package_body(client), headers=auth(capabilities=PACKAGES)
    )
    assert response.status_code == 200, response.text
    booking = response.json()
    members = booking["packageBookings"]
    assert [(m["productId"], m["status"]) for m in members] == [
        ("thames-sightseeing", "ON_HOLD"), ("tower-of-stories", "ON_HOLD"),
    ]  # fmt: skip
    assert [m["availabilityId"] for m in members] == [CRUISE_SLOT, museum]
    assert {m["utcExpiresAt"] for m in members} == {booking["utcExpiresAt"]}
    assert [u["unitId"] for u in members[1]["unitItems"]] == ["adult", "child"]
    assert (await vacancies(client), await vacancies(client, museum, MUSEUM)) == (
        before[0] - 2,
        before[1] - 2,
    )
    plain = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert "packageBookings" not in plain
    # an included booking is changed through its package only
    alone = await client.post(f"/octo/bookings/{members[0]['uuid']}/cancel", json={}, headers=auth())
    assert alone.status_code == 400 and "package" in alone.json()["errorMessage"]
    confirmed = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm",
        json={"contact": GUEST},
        headers=auth(capabilities=PACKAGES),
    )
    assert confirmed.status_code == 200, confirmed.text
    assert [m["status"] for m in confirmed.json()["packageBookings"]] == ["CONFIRMED", "CONFIRMED"]
    cancelled = await client.post(
        f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth(capabilities=PACKAGES)
    )
    assert cancelled.status_code == 200, cancelled.text
    assert [m["status"] for m in cancelled.json()["packageBookings"]] == ["CANCELLED", "CANCELLED"]
    assert (await vacancies(client), await vacancies(client, museum, MUSEUM)) == before


async def test_staff_cancel_of_a_package_releases_every_include(
    client: httpx.AsyncClient, packaged: Services
) -> None:
    museum = await museum_slot(client)
    before = (await vacancies(client), await vacancies(client, museum, MUSEUM))
    booking = (
        await client.post(
            "/octo/bookings", json=await package_body(client), headers=auth(capabilities=PACKAGES)
        )
    ).json()
    cancelled = await client.post(
        f"/admin/api/bookings/{booking['id']}/cancel", json={"force": True}, headers=ADMIN
    )
    assert cancelled.json()["status"] == "CANCELLED"
    assert (await vacancies(client), await vacancies(client, museum, MUSEUM)) == before
    members = (
        await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=PACKAGES))
    ).json()
    assert [m["status"] for m in members["packageBookings"]] == ["CANCELLED", "CANCELLED"]


async def test_expiry_releases_every_include(
    client: httpx.AsyncClient, packaged: Services, clock: Clock
) -> None:
    museum = await museum_slot(client)
    before = (await vacancies(client), await vacancies(client, museum, MUSEUM))
    booking = (await client.post("/octo/bookings", json=await package_body(client), headers=auth())).json()
    clock.advance(minutes=31)
    await packaged.expiry.expire_due()
    assert (await vacancies(client), await vacancies(client, museum, MUSEUM)) == before
    shown = (
        await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=PACKAGES))
    ).json()
    assert shown["status"] == "EXPIRED" and {m["status"] for m in shown["packageBookings"]} == {"EXPIRED"}


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        (lambda b: b["packageBookings"].pop(1), "UNPROCESSABLE_ENTITY", "required include 'museum'"),
        (
            lambda b: b["packageBookings"][0].update(availabilityId="2026-06-02T11:00:00+01:00"),
            "INVALID_AVAILABILITY_ID",
            "cruise",
        ),
        (lambda b: b["packageBookings"][0].pop("availabilityId"), "INVALID_AVAILABILITY_ID", "cruise"),
        (lambda b: b["packageBookings"].append({"includeId": "spa"}), "UNPROCESSABLE_ENTITY", "spa"),
    ],
)
async def test_bad_package_requests_hold_nothing(
    client: httpx.AsyncClient, packaged: Services, change: Any, code: str, words: str
) -> None:
    museum = await museum_slot(client)
    before = (await vacancies(client), await vacancies(client, museum, MUSEUM))
    body = await package_body(client)
    change(body)
    response = await client.post("/octo/bookings", json=body, headers=auth())
    assert response.status_code == 400 and response.json()["error"] == code, response.text
    assert words in response.json()["errorMessage"]
    assert (await vacancies(client), await vacancies(client, museum, MUSEUM)) == before


async def test_a_core_only_reseller_is_told_to_request_octo_packages(
    client: httpx.AsyncClient, packaged: Services
) -> None:
    """A client without octo/packages cannot see a package's includes; booking the pass without
    packageBookings says which capability to request, as pickups and questions do."""
    before = await vacancies(client)
    body = await package_body(client)
    del body["packageBookings"]
    response = await client.post("/octo/bookings", json=body, headers=auth())
    assert response.status_code == 400 and response.json()["error"] == "UNPROCESSABLE_ENTITY", response.text
    message = response.json()["errorMessage"]
    assert "request the octo/packages capability (Octo-Capabilities)" in message, message
    assert "'cruise'" in message and "'museum'" in message and "packageBookings" in message
    assert await vacancies(client) == before


async def test_sold_out_include_holds_nothing(client: httpx.AsyncClient, packaged: Services) -> None:
    museum = await museum_slot(client)
    for count in (12, await vacancies(client) - 13):
        filler = {"uuid": str(uuid.uuid4()), **CRUISE, "availabilityId": CRUISE_SLOT,
                  "unitItems": [{"unitId": "adult"}] * count}  # fmt: skip
        assert (await client.post("/octo/bookings", json=filler, headers=auth())).status_code == 200
    museum_before = await vacancies(client, museum, MUSEUM)
    response = await client.post("/octo/bookings", json=await package_body(client), headers=auth())
    assert response.status_code == 400 and response.json()["error"] == "UNPROCESSABLE_ENTITY", response.text
    assert "cruise" in response.json()["errorMessage"] and "sold out" in response.json()["errorMessage"]
    assert await vacancies(client) == 1 and await vacancies(client, museum, MUSEUM) == museum_before


async def test_two_packages_race_for_an_includes_last_place(settings: Settings, clock: Clock) -> None:
    fleet = [build_services(settings, clock) for _ in range(4)]
    try:
        await load(fleet[0], packages_catalog())
        catalog = (await fleet[0].catalog.snapshot()).catalog
        connection = await fleet[0].connections.ensure("Racer", "package-racer")
        for count in (12, 7):
            filler = ReserveInput(product_id="thames-sightseeing", option_id="DEFAULT", availability_id=CRUISE_SLOT,
                                  unit_items=tuple(UnitItemInput("adult") for _ in range(count)))  # fmt: skip
            await fleet[0].bookings.reserve(catalog, connection.id, filler)  # 1 place left on the cruise
        from berth.services.availability import AvailabilityQuery

        (pass_item,) = await fleet[0].availability.check(
            catalog, AvailabilityQuery(PASS["productId"], PASS["optionId"], local_date=_date(DAY))
        )
        (museum_item,) = await fleet[0].availability.check(
            catalog, AvailabilityQuery(MUSEUM["productId"], MUSEUM["optionId"], local_date=_date(DAY))
        )
        pass_slot_id, museum_slot_id = pass_item.slot.id, museum_item.slot.id
        museum_before = museum_item.state.vacancies

        def package() -> ReserveInput:
            return ReserveInput(
                product_id="harbour-city-pass", option_id="DEFAULT", availability_id=pass_slot_id,
                unit_items=(UnitItemInput("adult"),),
                asked=asked_fields(package_bookings=(("cruise", CRUISE_SLOT), ("museum", museum_slot_id))),
            )  # fmt: skip

        outcomes = await asyncio.gather(
            *(fleet[i % 4].bookings.reserve(catalog, connection.id, package()) for i in range(8)),
            return_exceptions=True,
        )
        won = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(won) == 1, outcomes
        (cruise,) = await fleet[0].availability.check(
            catalog,
            AvailabilityQuery(CRUISE["productId"], CRUISE["optionId"], availability_ids=(CRUISE_SLOT,)),
        )
        (museum,) = await fleet[0].availability.check(
            catalog,
            AvailabilityQuery(MUSEUM["productId"], MUSEUM["optionId"], availability_ids=(museum_slot_id,)),
        )
        assert cruise.state.vacancies == 0
        assert museum.state.vacancies == (museum_before or 0) - 1  # the losers held nothing anywhere
    finally:
        for services in fleet:
            await services.close()


def test_catalogue_rules_and_round_trip() -> None:
    built = _closed_museum_catalog()
    assert parse_catalog(catalog_to_yaml(built), CATALOG_RULES) == built
    products = _closed_museum_products()
    (sights, extras) = products[-1]["options"][0]["packageIncludes"]
    sights["includes"][1]["optionId"] = "LATE"
    extras["includes"][0]["productId"] = PASS["productId"]
    with pytest.raises(CatalogFileError) as raised:
        catalog(*products)
    messages = [p.message for p in raised.value.problems]
    assert any("has no option 'LATE'" in m for m in messages)
    assert any("packages cannot include packages" in m for m in messages)
