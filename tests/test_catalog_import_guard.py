"""Catalogue imports through the admin API: a dry run answers what would change, and an import
that removes or shrinks what live bookings hold is refused unless forced (issue 18). On the
resources tests' catalogue (`tests.resources_helpers`), whose box office has seated three
parties on the harbour cruise on 2 June."""

from __future__ import annotations

from dataclasses import fields
from datetime import timedelta
from typing import Any

import httpx

from berth.container import Services
from berth.domain.catalog.document import catalog_to_yaml
from berth.domain.catalog_changes import HeldBooking
from berth.store import bookings_reads
from berth.store.bookings_reads import BookingFilter
from tests.bookings_helpers import SLOT, confirm, reservation, reserve
from tests.conftest import ADMIN, Clock, auth
from tests.resources_helpers import resources_catalog

STORED = catalog_to_yaml(resources_catalog())  # what the `seated` fixture stores
THAMES_CAPACITY = "      - '16:00'\n      capacity: 20"


def edited(*replacements: tuple[str, str]) -> str:
    text = STORED
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


async def put(client: httpx.AsyncClient, text: str, **params: str) -> httpx.Response:
    return await client.put("/admin/api/catalog", content=text.encode(), headers=ADMIN, params=params)


async def state(client: httpx.AsyncClient, seated: Services) -> tuple[str, int]:
    exported = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    return exported, (await seated.catalog.snapshot()).version


async def booked(client: httpx.AsyncClient, units: int, availability_id: str = SLOT) -> dict[str, Any]:
    held = await reserve(client, reservation(("adult",) * units, availability_id=availability_id))
    response = await confirm(client, held["uuid"])
    assert response.status_code == 200, response.text
    confirmed: dict[str, Any] = response.json()
    return confirmed


def places(booking: dict[str, Any]) -> dict[str, Any]:
    return {
        "supplierReference": booking["supplierReference"],
        "resellerReference": booking["resellerReference"],
        "status": booking["status"],
        "places": len(booking["unitItems"]),
    }


async def test_dry_run_answers_the_changes_and_stores_nothing(
    client: httpx.AsyncClient, seated: Services
) -> None:
    mine = await booked(client, 3)
    await booked(client, 1, "2026-06-12T10:00:00+01:00")
    before = await state(client, seated)
    text = edited(
        (THAMES_CAPACITY, THAMES_CAPACITY.replace("capacity: 20", "capacity: 10")),
        ("internalName: Tower Of Stories", "internalName: Tower of Tales"),
    )
    response = await put(client, text, dryRun="true")
    assert response.status_code == 200, response.text
    body = response.json()
    assert {k: body[k] for k in ("dryRun", "imported", "version", "products", "supplierChanged")} == {
        "dryRun": True,
        "imported": False,
        "version": None,
        "products": 5,
        "supplierChanged": False,
    }
    assert body["changes"] == [
        {"change": "changed", "kind": "option", "productId": "thames-sightseeing", "optionId": "DEFAULT",
         "unitId": None, "fields": ["schedules"], "values": ["schedules 1 capacity 20 -> 10"]},
        {"change": "changed", "kind": "product", "productId": "tower-of-stories", "optionId": None,
         "unitId": None, "fields": ["internalName"],
         "values": ["internalName Tower Of Stories -> Tower of Tales"]},
    ]  # fmt: skip
    # The last live booking (12 June) sets the horizon.
    assert body["departuresUntil"] == "2026-06-12"
    losing = [d for d in body["departures"] if d["availabilityId"] == SLOT]
    assert losing == [
        {"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityId": SLOT,
         "reason": "capacity lowered", "capacityBefore": 20, "capacityAfter": 10, "bookedPlaces": 3},
    ]  # fmt: skip
    assert len(body["departures"]) == 12 * 4  # 1 to 12 June, four departures a day
    assert body["conflicts"] == []
    assert await state(client, seated) == before
    assert mine["status"] == "CONFIRMED"


async def test_removing_a_product_with_live_bookings_is_refused_unless_forced(
    client: httpx.AsyncClient, seated: Services
) -> None:
    """The observed case: removing a product that has bookings imported silently. The box
    office has seated three parties on tomorrow's first harbour cruise."""
    without_cruise = (
        STORED[: STORED.index("- id: harbour-cruise")] + STORED[STORED.index("- id: river-rib") :]
    )
    catalog = (await seated.catalog.snapshot()).catalog
    parties = [
        d.booking
        for d in await seated.staff_bookings.find(catalog, BookingFilter(product_id="harbour-cruise"))
    ]
    assert len(parties) == 3
    before = await state(client, seated)

    refused = await put(client, without_cruise)
    assert refused.status_code == 400
    body = refused.json()
    assert body["error"] == "BAD_REQUEST"
    assert body["errorMessage"] == (
        "The catalogue would remove or shrink what 3 live booking(s) hold; nothing was "
        "imported (conflicts lists them; force=true imports anyway)"
    )
    assert body["changes"] == [
        {"change": "removed", "kind": "product", "productId": "harbour-cruise", "optionId": None,
         "unitId": None, "fields": [], "values": []},
    ]  # fmt: skip
    assert body["conflicts"] == [
        {
            "productId": "harbour-cruise",
            "optionId": "DEFAULT",
            "availabilityId": "2026-06-02T10:00:00+01:00",
            "reason": "product 'harbour-cruise' is removed",
            "bookings": [
                {"supplierReference": b.supplier_reference, "resellerReference": "BOX-OFFICE",
                 "status": "CONFIRMED", "places": b.pax}
                for b in parties
            ],
        }
    ]  # fmt: skip
    assert sorted(b.pax for b in parties) == [2, 3, 7]  # an infant on a lap takes no place
    assert await state(client, seated) == before

    forced = await put(client, without_cruise, force="true")
    assert forced.status_code == 200, forced.text
    assert forced.json()["imported"] is True and forced.json()["products"] == 4
    assert len(forced.json()["conflicts"]) == len(body["conflicts"])
    assert "harbour-cruise" not in (await client.get("/admin/api/catalog", headers=ADMIN)).text


async def test_capacity_below_the_places_booked_is_refused_naming_the_bookings(
    client: httpx.AsyncClient, seated: Services
) -> None:
    six, four = await booked(client, 6), await booked(client, 4)
    lowered = edited((THAMES_CAPACITY, THAMES_CAPACITY.replace("capacity: 20", "capacity: 8")))
    refused = await put(client, lowered)
    assert refused.status_code == 400
    (conflict,) = refused.json()["conflicts"]
    assert {k: v for k, v in conflict.items() if k != "bookings"} == {
        "productId": "thames-sightseeing",
        "optionId": "DEFAULT",
        "availabilityId": SLOT,
        "reason": "capacity 8 is below the 10 places booked",
    }
    assert sorted(conflict["bookings"], key=str) == sorted([places(six), places(four)], key=str)
    # Down to exactly the places booked is fine: the departure is sold out.
    exactly = edited((THAMES_CAPACITY, THAMES_CAPACITY.replace("capacity: 20", "capacity: 10")))
    response = await put(client, exactly)
    assert response.status_code == 200, response.text
    assert response.json()["imported"] is True and response.json()["conflicts"] == []


async def test_expired_holds_and_cancelled_bookings_are_not_in_the_way(
    client: httpx.AsyncClient, seated: Services, clock: Clock
) -> None:
    await reserve(client, reservation(("adult",) * 6))  # a hold of 30 minutes
    cancelled = await booked(client, 4)
    response = await client.post(f"/octo/bookings/{cancelled['uuid']}/cancel", json={}, headers=auth())
    assert response.status_code == 200, response.text
    lowered = edited((THAMES_CAPACITY, THAMES_CAPACITY.replace("capacity: 20", "capacity: 2")))
    assert (await put(client, lowered, dryRun="true")).json()["conflicts"][0]["bookings"][0][
        "status"
    ] == "ON_HOLD"
    clock.advance(minutes=31)
    response = await put(client, lowered)
    assert response.status_code == 200, response.text


async def test_a_file_with_problems_answers_them_all_even_on_a_dry_run(
    client: httpx.AsyncClient, seated: Services
) -> None:
    before = await state(client, seated)
    broken = edited(("internalName: Tower Of Stories", "internalName: Tower of Tales\n  colour: red"))
    broken = broken.replace("- id: river-rib", "- id: harbour-cruise", 1)
    response = await put(client, broken, dryRun="true")
    assert response.status_code == 400
    assert [(p["path"], p["message"]) for p in response.json()["problems"]] == [
        ("products[2].colour", "is not a known field"),
        ("products[4].id", "duplicate product id 'harbour-cruise'"),
    ]
    assert await state(client, seated) == before


async def test_dry_run_and_force_take_true_or_false(client: httpx.AsyncClient, seated: Services) -> None:
    response = await put(client, STORED, dryRun="maybe")
    assert response.status_code == 400
    assert response.json()["error"] == "BAD_REQUEST" and "dryRun" in response.json()["errorMessage"]
    unchanged = await put(client, STORED, dryRun="false")
    assert unchanged.status_code == 200 and unchanged.json()["changes"] == []


async def test_the_check_reads_each_live_booking_as_its_record_has_it(
    client: httpx.AsyncClient, seated: Services, clock: Clock
) -> None:
    """An import's check reads only the columns it needs (`holding_places_since`, issue 41): each
    booking that holds places as its whole record has it (units, seats and allocations
    included), and none that does not."""
    on_hold = await reserve(client, reservation(("adult", "adult")))
    cancelled = await booked(client, 1)
    response = await client.post(f"/octo/bookings/{cancelled['uuid']}/cancel", json={}, headers=auth())
    assert response.status_code == 200, response.text
    now = clock()
    async with seated.database.transaction(write=False) as conn:
        records, _ = await bookings_reads.find_bookings(conn, BookingFilter())
        read = await bookings_reads.holding_places_since(conn, now - timedelta(days=2), now)
    same = [
        field.name for field in fields(HeldBooking) if field.name != "unit_ids"
    ]  # as the record names them
    expected = [
        HeldBooking(
            **{name: getattr(record, name) for name in same},
            unit_ids=tuple(item.unit_id for item in record.unit_items),
        )
        for record in records
        if record.holds_places(now)
    ]
    assert sorted(read, key=lambda b: b.supplier_reference) == sorted(
        expected, key=lambda b: b.supplier_reference
    )
    references = {b.supplier_reference for b in read}
    assert on_hold["supplierReference"] in references
    assert cancelled["supplierReference"] not in references
    assert len(read) == 4  # the three seated parties and the hold
    assert all(
        b.resource_allocations and b.resource_allocations[0].seat_ids
        for b in read
        if b.product_id == "harbour-cruise"
    )
