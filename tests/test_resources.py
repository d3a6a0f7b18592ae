"""octo/resources through the OCTO routes, on the resources tests' own catalogue
(`tests.resources_helpers`): allocation on every booking write (rules 1 to 5 of requirements
§2.1), `resourceAllocations` on every booking, `hasResources` where the requirements put it,
the resources route, and bad input.

The clock stands at 2026-06-01T08:00Z. The harbour cruise has two seated boats (one per party)
and two coaches (a party may be split); on 2 June at 10:00 the box office has three parties on
it. The RIB ride's two boats (6 and 8 places) never split a party."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import httpx
from sqlalchemy import func, select

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.store.tables import booking_seats, bookings
from tests.bookings_helpers import GUEST
from tests.conftest import ADMIN, Clock, auth
from tests.resources_helpers import BOOKED_TEN, CRUISE, RIB
from tests.test_catalog_import import MINIMAL, problems_of

R = "octo/resources"
TEN = "2026-06-03T10:00:00+01:00"  # Wednesday: Kingfisher (15 seats) and Heron (12 seats)
ONE = "2026-06-03T13:00:00+01:00"  # Heron does not do the 13:00 trip
RIB_ELEVEN = "2026-06-03T11:00:00+01:00"


def body(
    units: tuple[str, ...], availability_id: str = TEN, product: dict[str, str] = CRUISE, **extra: Any
) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": u} for u in units],
        **extra,
    }


def picks(*resource_ids: str) -> list[dict[str, str]]:
    return [{"resourceId": r} for r in resource_ids]


async def book(
    client: httpx.AsyncClient, data: dict[str, Any], capabilities: str | None = R, **headers: str
) -> httpx.Response:
    return await client.post("/octo/bookings", json=data, headers=auth(capabilities=capabilities, **headers))


async def booked(
    client: httpx.AsyncClient, data: dict[str, Any], capabilities: str | None = R, **headers: str
) -> dict[str, Any]:
    response = await book(client, data, capabilities, **headers)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def summary(booking: dict[str, Any]) -> list[tuple[str, str, int, list[str]]]:
    return [
        (a["resourceGroupId"], a["resourceId"], a["paxCount"], a["seatIds"])
        for a in booking["resourceAllocations"]
    ]


async def slot_groups(
    client: httpx.AsyncClient,
    availability_id: str = TEN,
    product: Mapping[str, str] = CRUISE,
    params: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    response = await client.get(
        "/octo/availability/resources", params={**product, "availabilityId": availability_id, **(params or {})},
        headers=auth(capabilities=R),
    )  # fmt: skip
    assert response.status_code == 200, response.text
    return {g["resourceGroupId"]: g for g in response.json()}


def free_seats(groups: dict[str, dict[str, Any]], resource_id: str) -> list[str]:
    for group in groups.values():
        for resource in group["resources"]:
            if resource["resourceId"] == resource_id:
                return [s["id"] for s in resource["availableSeats"]]
    raise AssertionError(f"{resource_id} is not listed")


async def check(
    client: httpx.AsyncClient, data: dict[str, Any], capabilities: str | None = R
) -> list[dict[str, Any]]:
    response = await client.post("/octo/availability", json=data, headers=auth(capabilities=capabilities))
    assert response.status_code == 200, response.text
    result: list[dict[str, Any]] = response.json()
    return result


async def count_bookings(services: Services) -> int:
    async with services.database.transaction(write=False) as conn:
        return int(await conn.scalar(select(func.count()).select_from(bookings)) or 0)


# --- automatic allocation and the booking fields -------------------------------------------------


async def test_reservation_is_allocated_automatically(client: httpx.AsyncClient, seated: Services) -> None:
    booking = await booked(client, body(("adult", "adult", "child", "infant")))
    # Heron (12 free) fits more tightly than Kingfisher (15); Coach 2 (12) than Coach 1 (16).
    # The infant has paxCount 0: three seats, side by side at the front.
    assert summary(booking) == [("boats", "heron", 3, ["1A", "1B", "1C"]), ("coaches", "coach-2", 3, [])]
    boat = booking["resourceAllocations"][0]
    assert boat["resourceGroup"] == {"id": "boats", "title": "Boats", "split": False, "required": True}
    assert boat["resource"]["title"] == "MV Heron" and boat["resource"]["seating"] is True
    assert boat["resource"]["guide"]["name"] == "Tom Reyes" and boat["resource"]["driver"] is None
    assert boat["seats"][0] == {"id": "1A", "title": "1A", "row": "1", "column": "A"}
    coach = booking["resourceAllocations"][1]
    assert coach["resource"]["driver"]["name"] == "Ada Nwosu" and coach["seats"] == []
    assert booking["availability"]["hasResources"] is True
    assert booking["availability"]["vacancies"] == 24 and booking["availability"]["capacity"] == 27
    # Without the capability: the same booking, with neither field.
    plain = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert "resourceAllocations" not in plain and "hasResources" not in plain["availability"]
    assert plain["availability"]["vacancies"] == 24


async def test_every_booking_route_carries_allocations(client: httpx.AsyncClient, seated: Services) -> None:
    booking = await booked(client, body(("adult", "adult")))
    expected = summary(booking)
    uuid_ = booking["uuid"]
    headers = auth(capabilities=R)
    answers = [
        await client.get(f"/octo/bookings/{uuid_}", headers=headers),
        await client.get("/octo/bookings", params={"localDate": "2026-06-03"}, headers=headers),
        await client.patch(f"/octo/bookings/{uuid_}", json={"notes": "window"}, headers=headers),
        await client.post(f"/octo/bookings/{uuid_}/extend", json={"expirationMinutes": 20}, headers=headers),
        await client.post(f"/octo/bookings/{uuid_}/confirm", json={"contact": GUEST}, headers=headers),
    ]
    for answer in answers:
        assert answer.status_code == 200, answer.text
        found = answer.json()
        found = found[0] if isinstance(found, list) else found
        assert summary(found) == expected
        assert found["availability"]["hasResources"] is True
    cancelled = await client.post(f"/octo/bookings/{uuid_}/cancel", headers=headers)
    assert cancelled.json()["status"] == "CANCELLED"
    assert cancelled.json()["resourceAllocations"] == []  # released with the places
    staff = (await client.get(f"/admin/api/bookings/{booking['id']}", headers=ADMIN)).json()["booking"]
    assert staff["resourceAllocations"] == []


async def test_the_capability_gates_fields_and_selection(client: httpx.AsyncClient, seated: Services) -> None:
    # Without octo/resources a selection is not read: the booking is allocated automatically.
    data = body(("adult",), resourceAllocations=picks("kingfisher", "coach-1"))
    plain = await booked(client, data, capabilities=None)
    assert "resourceAllocations" not in plain
    seen = (await client.get(f"/octo/bookings/{plain['uuid']}", headers=auth(capabilities=R))).json()
    assert [a["resourceId"] for a in seen["resourceAllocations"]] == ["heron", "coach-2"]


# --- hasResources -----------------------------------------------------------------------------


async def test_has_resources_exactly_where_the_requirements_say(
    client: httpx.AsyncClient, seated: Services
) -> None:
    cruise = await check(client, {**CRUISE, "localDate": "2026-06-03"})
    assert [s["hasResources"] for s in cruise] == [True, True, True]
    tour = await check(
        client, {"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": "2026-06-03"}
    )
    assert {s["hasResources"] for s in tour} == {False}
    assert all(
        "hasResources" not in s for s in await check(client, {**CRUISE, "localDate": "2026-06-03"}, None)
    )
    rows = await client.post(
        "/octo/availability/batch", json=[{**CRUISE, "localDate": "2026-06-03"}], headers=auth(capabilities=R)
    )
    assert [r["hasResources"] for r in rows.json()] == [True, True, True]
    calendar_body = {**CRUISE, "localDateStart": "2026-06-03", "localDateEnd": "2026-06-04"}
    calendar = await client.post(
        "/octo/availability/calendar", json=calendar_body, headers=auth(capabilities=R)
    )
    batch = await client.post(
        "/octo/availability/calendar/batch", json=[calendar_body], headers=auth(capabilities=R)
    )
    for day in [*calendar.json(), *batch.json()]:
        assert "hasResources" not in day
    assert calendar.json()[0]["capacity"] == 27  # Heron and Kingfisher


# --- availability from resources ----------------------------------------------------------------


async def test_capacity_comes_from_the_resources_serving_the_slot(
    client: httpx.AsyncClient, seated: Services
) -> None:
    slots = await check(client, {**CRUISE, "localDate": "2026-06-03"})
    assert [(s["capacity"], s["vacancies"]) for s in slots] == [(27, 27), (15, 15), (27, 27)]
    booked_day = await check(client, {**CRUISE, "availabilityIds": [BOOKED_TEN]})
    # The box office filled Heron (12): 15 left on Kingfisher; both boats' coaches have room.
    assert (booked_day[0]["vacancies"], booked_day[0]["status"]) == (15, "AVAILABLE")
    party_of_10 = {**CRUISE, "availabilityIds": [BOOKED_TEN, TEN], "units": [{"id": "adult", "quantity": 10}]}
    assert [s["status"] for s in await check(client, party_of_10)] == ["AVAILABLE", "AVAILABLE"]


async def test_rule_5_a_party_too_big_for_any_one_boat(client: httpx.AsyncClient, seated: Services) -> None:
    """RIBs take 6 and 8: a party of 9 never fits, though 14 places are free."""
    nine = {**RIB, "availabilityIds": [RIB_ELEVEN], "units": [{"id": "rider", "quantity": 9}]}
    (slot,) = await check(client, nine)
    assert (slot["status"], slot["available"], slot["vacancies"], slot["capacity"]) == (
        "SOLD_OUT",
        False,
        14,
        14,
    )
    calendar = await client.post(
        "/octo/availability/calendar",
        json={**RIB, "localDateStart": "2026-06-03", "localDateEnd": "2026-06-03", "units": nine["units"]},
        headers=auth(),
    )
    assert calendar.json()[0]["status"] == "SOLD_OUT"
    refused = await book(client, body(("rider",) * 9, RIB_ELEVEN, RIB))
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert refused.json()["errorMessage"] == (
        "Resource group 'ribs' (RIBs) does not split and none of its resources has 9 free places for "
        "this booking (the most in one resource is 8)"
    )
    # Three on Falcon (the tighter fit), three chosen onto Osprey: 3 + 5 = 8 free in all.
    first = await booked(client, body(("rider",) * 3, RIB_ELEVEN, RIB))
    second = await booked(client, body(("rider",) * 3, RIB_ELEVEN, RIB, resourceAllocations=picks("osprey")))
    assert [a["resourceId"] for a in first["resourceAllocations"] + second["resourceAllocations"]] == [
        "falcon",
        "osprey",
    ]
    six = {**RIB, "availabilityIds": [RIB_ELEVEN], "units": [{"id": "rider", "quantity": 6}]}
    assert [(s["status"], s["vacancies"]) for s in await check(client, six)] == [("SOLD_OUT", 8)]
    five = {**six, "units": [{"id": "rider", "quantity": 5}]}
    assert [(s["status"], s["vacancies"]) for s in await check(client, five)] == [("AVAILABLE", 8)]
    assert (await book(client, body(("rider",) * 6, RIB_ELEVEN, RIB))).json()[
        "error"
    ] == "UNPROCESSABLE_ENTITY"
    assert len(summary(await booked(client, body(("rider",) * 5, RIB_ELEVEN, RIB)))) == 1


async def test_rule_5_a_selection_may_not_split_a_non_split_group(
    client: httpx.AsyncClient, seated: Services
) -> None:
    before = await count_bookings(seated)
    refused = await book(
        client, body(("adult", "adult"), resourceAllocations=picks("kingfisher", "heron", "coach-1"))
    )
    assert refused.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Resource group 'boats' (Boats) does not split: select one of its resources for "
        "the whole booking, not 2",
    }
    full = await book(client, body(("adult",) * 2, BOOKED_TEN, resourceAllocations=picks("heron", "coach-1")))
    assert full.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "'heron' (MV Heron) has 0 free places; the booking needs 2" in full.json()["errorMessage"]
    assert await count_bookings(seated) == before


async def test_rule_4_every_required_group(client: httpx.AsyncClient, seated: Services) -> None:
    # Automatic allocation covers both groups; so does a selection that names one of them
    # (the other is allocated automatically, tests/test_resources_partial.py).
    assert [a["resourceGroupId"] for a in (await booked(client, body(("adult",))))["resourceAllocations"]] == [
        "boats", "coaches",
    ]  # fmt: skip
    partial = await booked(client, body(("adult", "adult"), resourceAllocations=picks("kingfisher")))
    assert [a["resourceGroupId"] for a in partial["resourceAllocations"]] == ["boats", "coaches"]


async def test_a_split_group_spreads_a_party_over_its_selection(
    client: httpx.AsyncClient, seated: Services
) -> None:
    ten = await booked(client, body(("adult",) * 10))  # Heron, and Coach 2 (12): 2 left on it
    assert summary(ten)[1] == ("coaches", "coach-2", 10, [])
    chosen = await booked(
        client, body(("adult",) * 5, resourceAllocations=picks("kingfisher", "coach-2", "coach-1"))
    )
    assert [(a["resourceId"], a["paxCount"]) for a in chosen["resourceAllocations"]] == [
        ("kingfisher", 5), ("coach-2", 2), ("coach-1", 3),
    ]  # fmt: skip
    groups = await slot_groups(client)
    assert groups["coaches"]["vacancies"] == 28 - 15


async def test_rule_1_pax_and_seats_are_the_servers(client: httpx.AsyncClient, seated: Services) -> None:
    sent = [
        {"resourceId": "kingfisher", "paxCount": 99, "seatIds": ["4D"]},
        {"resourceId": "coach-1", "paxCount": "lots", "seatIds": "none"},
    ]
    booking = await booked(client, body(("adult", "child"), resourceAllocations=sent))
    # Kingfisher's 1A is the guide's: 1B-1D is the tightest run for two.
    assert summary(booking) == [("boats", "kingfisher", 2, ["1B", "1C"]), ("coaches", "coach-1", 2, [])]


async def test_rule_2_a_list_replaces_the_allocations(client: httpx.AsyncClient, seated: Services) -> None:
    booking = await booked(client, body(("adult", "adult", "adult")))
    assert [a["resourceId"] for a in booking["resourceAllocations"]] == ["heron", "coach-2"]
    moved = await client.patch(
        f"/octo/bookings/{booking['uuid']}", json={"resourceAllocations": picks("kingfisher", "coach-1")},
        headers=auth(capabilities=R),
    )  # fmt: skip
    assert summary(moved.json()) == [
        ("boats", "kingfisher", 3, ["1B", "1C", "1D"]),
        ("coaches", "coach-1", 3, []),
    ]
    groups = await slot_groups(client)
    assert len(free_seats(groups, "heron")) == 12  # Heron's seats are free again
    assert len(free_seats(groups, "kingfisher")) == 12
    # Confirm can choose again too.
    confirmed = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm",
        json={"contact": GUEST, "resourceAllocations": picks("heron", "coach-1")}, headers=auth(capabilities=R),
    )  # fmt: skip
    assert confirmed.json()["status"] == "CONFIRMED"
    assert summary(confirmed.json()) == [
        ("boats", "heron", 3, ["1A", "1B", "1C"]),
        ("coaches", "coach-1", 3, []),
    ]


async def test_rule_3_an_empty_list_or_none_keeps_them(client: httpx.AsyncClient, seated: Services) -> None:
    booking = await booked(
        client, body(("adult", "adult"), resourceAllocations=picks("kingfisher", "coach-1"))
    )
    before = summary(booking)
    path = f"/octo/bookings/{booking['uuid']}"
    for change in ({"resourceAllocations": [], "notes": "kept"}, {"notes": "kept again"}):
        answer = await client.patch(path, json=change, headers=auth(capabilities=R))
        assert summary(answer.json()) == before
    # A changed party is re-allocated, on the resources it had while they fit (rule 3 keeps
    # the choice; pax and seats are the server's, rule 1).
    items = booking["unitItems"] + [{"unitId": "adult"}]
    grown = await client.patch(
        path, json={"unitItems": items, "resourceAllocations": []}, headers=auth(capabilities=R)
    )
    assert summary(grown.json()) == [
        ("boats", "kingfisher", 3, ["1B", "1C", "1D"]),
        ("coaches", "coach-1", 3, []),
    ]
    shrunk = await client.patch(path, json={"unitItems": items[:1]}, headers=auth(capabilities=R))
    assert summary(shrunk.json()) == [("boats", "kingfisher", 1, ["1B"]), ("coaches", "coach-1", 1, [])]


async def test_moving_a_booking_reallocates(client: httpx.AsyncClient, seated: Services) -> None:
    booking = await booked(client, body(("adult", "adult")))
    assert booking["resourceAllocations"][0]["resourceId"] == "heron"
    moved = await client.patch(
        f"/octo/bookings/{booking['uuid']}", json={"availabilityId": ONE}, headers=auth(capabilities=R)
    )
    # Heron does not sail at 13:00: Kingfisher takes the party.
    assert summary(moved.json()) == [("boats", "kingfisher", 2, ["1B", "1C"]), ("coaches", "coach-2", 2, [])]
    assert len(free_seats(await slot_groups(client), "heron")) == 12
    assert (await slot_groups(client, ONE))["boats"]["vacancies"] == 13
    # To a product without resources: nothing allocated, and the boat's seats come free.
    away = await client.patch(
        f"/octo/bookings/{booking['uuid']}",
        json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityId": TEN},
        headers=auth(capabilities=R),
    )
    assert away.status_code == 200 and away.json()["resourceAllocations"] == []
    assert away.json()["availability"]["hasResources"] is False
    assert (await slot_groups(client, ONE))["boats"]["vacancies"] == 15


async def test_cancel_and_expiry_free_the_seats(
    client: httpx.AsyncClient, seated: Services, clock: Clock
) -> None:
    held = await booked(client, body(("adult", "adult"), expirationMinutes=5))
    seats = summary(held)[0][3]
    kept = await booked(client, body(("adult",)))
    cancelled = await client.post(f"/octo/bookings/{kept['uuid']}/cancel", headers=auth(capabilities=R))
    assert cancelled.json()["resourceAllocations"] == []
    clock.advance(minutes=6)
    expired = (await client.get(f"/octo/bookings/{held['uuid']}", headers=auth(capabilities=R))).json()
    assert expired["status"] == "EXPIRED" and expired["resourceAllocations"] == []
    assert len(free_seats(await slot_groups(client), "heron")) == 12
    # Not swept yet: its seat rows are still there, and a new party gets the same seats.
    again = await booked(client, body(("adult", "adult")))
    assert summary(again)[0][3] == seats
    await seated.expiry.expire_due()
    async with seated.database.transaction(write=False) as conn:
        rows = (await conn.execute(select(booking_seats.c.booking_id))).all()
    assert held["id"] not in {row[0] for row in rows} and kept["id"] not in {row[0] for row in rows}


async def test_test_bookings_show_allocations_but_hold_nothing(
    client: httpx.AsyncClient, seated: Services
) -> None:
    trial = await booked(client, body(("adult",) * 4), **{"Octo-Env": "test"})
    assert trial["testMode"] is True and summary(trial)[0][:3] == ("boats", "heron", 4)
    assert (await slot_groups(client))["boats"]["vacancies"] == 27


async def test_unknown_and_foreign_resources_are_bad_requests(
    client: httpx.AsyncClient, seated: Services
) -> None:
    before = await count_bookings(seated)
    unknown = await book(client, body(("adult",), resourceAllocations=picks("submarine")))
    assert unknown.json() == {
        "error": "BAD_REQUEST", "errorMessage": "The resource 'submarine' does not exist", "resourceId": "submarine",
    }  # fmt: skip
    foreign = await book(client, body(("adult",), resourceAllocations=picks("falcon", "coach-1")))
    assert foreign.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "The resource 'falcon' belongs to option 'DEFAULT' of product 'river-rib', not to "
        "option 'DEFAULT' of product 'harbour-cruise'",
        "resourceId": "falcon",
    }
    missing_id = await book(client, body(("adult",), resourceAllocations=[{"paxCount": 1}]))
    assert missing_id.json()["error"] == "BAD_REQUEST"
    assert await count_bookings(seated) == before
    booking = await booked(client, body(("adult",)))
    for method, path, extra in (
        ("PATCH", f"/octo/bookings/{booking['uuid']}", {}),
        ("POST", f"/octo/bookings/{booking['uuid']}/confirm", {"contact": GUEST}),
    ):
        answer = await client.request(
            method, path, json={**extra, "resourceAllocations": picks("osprey")}, headers=auth(capabilities=R)
        )
        assert answer.json()["error"] == "BAD_REQUEST" and answer.json()["resourceId"] == "osprey"
    unchanged = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=R))).json()
    assert unchanged["status"] == "ON_HOLD" and summary(unchanged) == summary(booking)


async def test_idempotent_reservation_includes_the_selection(
    client: httpx.AsyncClient, seated: Services
) -> None:
    data = body(("adult",), resourceAllocations=picks("kingfisher", "coach-1"))
    first = await booked(client, data)
    assert (await booked(client, data))["id"] == first["id"]
    other = await book(client, {**data, "resourceAllocations": picks("heron", "coach-1")})
    assert other.json()["error"] == "INVALID_BOOKING_UUID"


async def test_orders_and_webhooks_carry_allocations(client: httpx.AsyncClient, seated: Services) -> None:
    from tests.receivers import receiver
    from tests.test_webhooks import drain, subscribe

    async with receiver() as target:
        await subscribe(client, target.url, capabilities=R)
        headers = auth(capabilities=f"octo/cart, {R}")
        created = await client.post(
            "/octo/orders",
            json={"bookings": [body(("adult", "adult"), resourceAllocations=picks("kingfisher", "coach-1"))]},
            headers=headers,
        )
        assert created.status_code == 200, created.text
        order = created.json()
        assert summary(order["bookings"][0])[0] == ("boats", "kingfisher", 2, ["1B", "1C"])
        uuid_ = order["bookings"][0]["uuid"]
        await client.post(f"/octo/bookings/{uuid_}/cancel", headers=headers)
        await drain(seated)
        (payload,) = target.payloads()
        assert payload["booking"]["resourceAllocations"] == []
        (change,) = [d for d in payload["diff"] if d["path"] == "/resourceAllocations"]
        assert change["op"] == "replace" and change["value"] == [] and len(change["was"]) == 2


# --- GET and POST /availability/resources ----------------------------------------------------


async def test_resources_route(client: httpx.AsyncClient, seated: Services) -> None:
    groups = await slot_groups(client, BOOKED_TEN)
    boats = groups["boats"]
    assert boats["resourceGroup"] == {"id": "boats", "title": "Boats", "split": False, "required": True}
    assert (boats["capacity"], boats["vacancies"], boats["status"]) == (27, 15, "AVAILABLE")
    heron = next(r for r in boats["resources"] if r["resourceId"] == "heron")
    assert (heron["status"], heron["available"], heron["vacancies"], heron["availableSeats"]) == (
        "SOLD_OUT",
        False,
        0,
        [],
    )
    kingfisher = next(r for r in boats["resources"] if r["resourceId"] == "kingfisher")
    assert len(kingfisher["resource"]["seats"]) == 16  # the whole map, the guide's seat too
    assert (
        "1A" not in [s["id"] for s in kingfisher["availableSeats"]]
        and len(kingfisher["availableSeats"]) == 15
    )
    assert boats["availableSeats"][0] == {
        "id": "1B",
        "title": "1B",
        "row": "1",
        "column": "B",
        "resourceId": "kingfisher",
    }
    assert boats["selectedSeats"] == [] and kingfisher["selectedSeats"] == []  # no party, no preview
    assert groups["coaches"]["resources"][0]["resource"]["seats"] == []
    # Heron does not sail at 13:00: not listed.
    assert [r["resourceId"] for r in (await slot_groups(client, ONE))["boats"]["resources"]] == ["kingfisher"]


async def test_resources_route_previews_a_party(client: httpx.AsyncClient, seated: Services) -> None:
    by_index = await slot_groups(client, TEN, params={"units[0][id]": "adult", "units[0][quantity]": "2"})
    as_json = await slot_groups(client, TEN, params={"units": '[{"id": "adult", "quantity": 2}]'})
    assert by_index == as_json
    heron = next(r for r in by_index["boats"]["resources"] if r["resourceId"] == "heron")
    assert [s["id"] for s in heron["selectedSeats"]] == ["1A", "1B"] and heron["paxCount"] == 2
    assert [s["id"] for s in by_index["boats"]["selectedSeats"]] == ["1A", "1B"]
    chosen = await client.post(
        "/octo/availability/resources",
        json={**CRUISE, "availabilityId": TEN, "units": [{"id": "adult", "quantity": 3}],
              "resourceAllocations": picks("kingfisher", "coach-1")},
        headers=auth(capabilities=R),
    )  # fmt: skip
    groups = {g["resourceGroupId"]: g for g in chosen.json()}
    assert [(s["id"], s["resourceId"]) for s in groups["boats"]["selectedSeats"]] == [
        ("1B", "kingfisher"), ("1C", "kingfisher"), ("1D", "kingfisher"),
    ]  # fmt: skip
    # Previewing takes nothing.
    assert (await slot_groups(client))["boats"]["vacancies"] == 27
    twelve = await slot_groups(
        client, BOOKED_TEN, params={"units[0][id]": "adult", "units[0][quantity]": "10"}
    )
    heron = next(r for r in twelve["boats"]["resources"] if r["resourceId"] == "heron")
    assert heron["status"] == "SOLD_OUT" and twelve["boats"]["status"] == "AVAILABLE"


async def test_resources_route_errors(client: httpx.AsyncClient, seated: Services) -> None:
    async def get(**params: str) -> dict[str, Any]:
        response = await client.get(
            "/octo/availability/resources", params=params, headers=auth(capabilities=R)
        )
        assert response.status_code == 400
        result: dict[str, Any] = response.json()
        return result

    assert (await get(**CRUISE))["error"] == "INVALID_AVAILABILITY_ID"
    assert (await get(**CRUISE, availabilityId="2026-06-03T11:00:00+01:00"))[
        "error"
    ] == "INVALID_AVAILABILITY_ID"
    assert (await get(productId="nope", optionId="DEFAULT", availabilityId=TEN))[
        "error"
    ] == "INVALID_PRODUCT_ID"
    assert (await get(**CRUISE, availabilityId=TEN, units="not json"))["error"] == "BAD_REQUEST"
    bad_quantity = await get(
        **CRUISE, availabilityId=TEN, **{"units[0][id]": "adult", "units[0][quantity]": "x"}
    )
    assert bad_quantity["error"] == "BAD_REQUEST" and "units[0].quantity" in bad_quantity["errorMessage"]
    unit = await get(**CRUISE, availabilityId=TEN, **{"units[0][id]": "rider", "units[0][quantity]": "1"})
    assert unit["error"] == "INVALID_UNIT_ID"
    foreign = await get(**CRUISE, availabilityId=TEN, **{"resourceAllocations[0][resourceId]": "falcon"})
    assert foreign["error"] == "BAD_REQUEST" and foreign["resourceId"] == "falcon"
    split = await client.post(
        "/octo/availability/resources",
        json={**CRUISE, "availabilityId": TEN, "units": [{"id": "adult", "quantity": 1}],
              "resourceAllocations": picks("kingfisher", "heron", "coach-1")},
        headers=auth(),
    )  # fmt: skip
    assert (
        split.json()["error"] == "UNPROCESSABLE_ENTITY"
        and "'boats' (Boats) does not split" in split.json()["errorMessage"]
    )
    tour = await client.get(
        "/octo/availability/resources",
        params={
            "productId": "thames-sightseeing",
            "optionId": "DEFAULT",
            "availabilityId": "2026-06-03T10:00:00+01:00",
        },
        headers=auth(),
    )
    assert tour.status_code == 200 and tour.json() == []


# --- catalogue and admin ------------------------------------------------------------------------

SEATED = MINIMAL.replace(
    "            capacity: 12\n",
    """            capacity: null
        resourceGroups:
          - id: boats
            title: Boats
            resources:
              - id: boat
                title: Boat
                seatMap:
                  seats:
                    - {id: 1A, row: 1, column: A}
                    - {id: 1B, row: 1, column: B}
                  blocked: [1B]
""",
)


def test_resource_catalogue_problems() -> None:
    from berth.domain.catalog.document import catalog_to_yaml, parse_catalog

    catalog = parse_catalog(SEATED, CATALOG_RULES)
    resource = catalog.products[0].options[0].resource_groups[0].resources[0]
    assert resource.places == 1 and resource.seat_map is not None and resource.seat_map.seats[0].row == "1"
    assert parse_catalog(catalog_to_yaml(catalog), CATALOG_RULES) == catalog
    broken = (
        SEATED.replace("blocked: [1B]", "blocked: [1B, 9Z]")
        .replace("- {id: 1B, row: 1, column: B}", "- {id: 1A, row: 1, column: A}")
        .replace(
            "              - id: boat\n",
            "              - id: boat\n                serves: [{startTimes: ['11:00']}]\n",
        )
    )
    where = "products[0].options[0].resourceGroups[0].resources[0]"
    assert problems_of(broken) == [
        f"line 22: {where}.serves[0].startTimes[0]: option 'DEFAULT' has no departure at 11:00",
        f"line 27: {where}.seatMap.seats[1]: two seats in row '1', column 'A'",
        f"line 27: {where}.seatMap.seats[1].id: duplicate seat id '1A'",
        f"line 28: {where}.seatMap.blocked[0]: '1B' is not a seat of this map",
        f"line 28: {where}.seatMap.blocked[1]: '9Z' is not a seat of this map",
    ]
    no_capacity = SEATED.replace(
        """                seatMap:
                  seats:
                    - {id: 1A, row: 1, column: A}
                    - {id: 1B, row: 1, column: B}
                  blocked: [1B]
""",
        "",
    )
    assert problems_of(no_capacity) == [f"line 21: {where}: a resource needs a capacity or a seat map"]
    assert (
        "capacity 5 differs from the 1 seats"
        in problems_of(SEATED.replace("title: Boat\n", "title: Boat\n                capacity: 5\n"))[0]
    )


def test_an_option_is_a_rental_or_has_resources_not_both() -> None:
    """An option gets one capacity policy: resource groups on a rental option are refused."""
    both = SEATED.replace(
        "        resourceGroups:\n",
        "        rentalDurations:\n          - {id: day, title: A day, durationAmount: 1, durationUnit: day}\n"
        "        resourceGroups:\n",
    )
    problems = problems_of(both)
    assert any(
        "products[0].options[0].resourceGroups: option 'DEFAULT' has rentalDurations: "
        "a rental option cannot have resource groups" in problem
        for problem in problems
    ), problems


async def test_admin_reads_resources(client: httpx.AsyncClient, seated: Services) -> None:
    everything = (await client.get("/admin/api/resources", headers=ADMIN)).json()
    assert [(r["productId"], [g["id"] for g in r["resourceGroups"]]) for r in everything] == [
        ("harbour-cruise", ["boats", "coaches"]), ("river-rib", ["ribs"]),
    ]  # fmt: skip
    kingfisher = everything[0]["resourceGroups"][0]["resources"][0]
    assert kingfisher["seatMap"]["blocked"] == ["1A"] and kingfisher["guide"]["name"] == "Ines Okafor"
    product = (await client.get("/admin/api/resources/river-rib", headers=ADMIN)).json()
    assert product[0]["resourceGroups"][0]["split"] is False
    slot = (
        await client.get(f"/admin/api/slots/harbour-cruise/DEFAULT/{BOOKED_TEN}/resources", headers=ADMIN)
    ).json()
    heron = next(r for r in slot["resourceGroups"][0]["resources"] if r["resourceId"] == "heron")
    assert sorted(a["leadName"] for a in heron["allocations"]) == [
        "Alan Turing",
        "Grace Hopper",
        "Mary Somerville",
    ]
    assert sum(a["paxCount"] for a in heron["allocations"]) == 12
    seats = [s for a in heron["allocations"] for s in a["seatIds"]]
    assert len(seats) == len(set(seats)) == 12
    assert (await client.get("/admin/api/resources/nope", headers=ADMIN)).json()[
        "error"
    ] == "INVALID_PRODUCT_ID"
