"""octo/pickups through the OCTO routes and the admin API, on the pickups tests' coach tour
(`tests.pickups_helpers`). Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import GUEST, SLOT, TOUR, reservation
from tests.builders import load
from tests.conftest import ADMIN, auth
from tests.pickups_helpers import BRIDGE, COACH, DEPARTURE, GRAND, MEET, STATION, pickups_catalog
from tests.receivers import receiver
from tests.test_bookings import count_bookings
from tests.test_webhooks import drain, subscribe

PICKUPS = "octo/pickups"
BOOKING_FIELDS = {
    "pickupRequested", "pickupPointId", "pickupPoint", "pickupHotel", "pickupHotelRoom", "pickupRoom",
    "pickupNotes", "pickupDispatch", "dropoffDispatch",
}  # fmt: skip
OPTION_FIELDS = {"pickupAvailable", "pickupRequired", "pickupPoints"}


@pytest.fixture
async def coach(services: Services) -> Services:
    return await load(services, pickups_catalog())


def coach_booking(units: int = 2, product: dict[str, str] = COACH, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": DEPARTURE,
        "unitItems": [{"unitId": "adult"}] * units,
        **extra,
    }


async def send(
    client: httpx.AsyncClient, method: str, path: str, body: Any, capabilities: str | None = PICKUPS
) -> httpx.Response:
    return await client.request(method, path, json=body, headers=auth(capabilities=capabilities))


async def reserved(
    client: httpx.AsyncClient, body: dict[str, Any], capabilities: str | None = PICKUPS
) -> Any:
    response = await send(client, "POST", "/octo/bookings", body, capabilities)
    assert response.status_code == 200, response.text
    return response.json()


async def confirm(
    client: httpx.AsyncClient, booking_uuid: str, capabilities: str | None = PICKUPS, **extra: Any
) -> httpx.Response:
    body = {"contact": GUEST, **extra}
    return await send(client, "POST", f"/octo/bookings/{booking_uuid}/confirm", body, capabilities)


# --- fields ----------------------------------------------------------------------------------


async def test_fields_absent_without_the_capability(client: httpx.AsyncClient, coach: Services) -> None:
    product = (await client.get("/octo/products/highland-coach", headers=auth())).json()
    assert not OPTION_FIELDS & set(product) and not OPTION_FIELDS & set(product["options"][0])
    slots = (
        await send(client, "POST", "/octo/availability", {**COACH, "localDate": "2026-06-02"}, None)
    ).json()
    assert not OPTION_FIELDS & set(slots[0])
    booking = await reserved(client, coach_booking(product=MEET, pickupPointId=GRAND), None)
    assert not BOOKING_FIELDS & set(booking) and not OPTION_FIELDS & set(booking["option"])
    assert "octo/pickups" not in (
        await client.get("/octo/products/highland-coach", headers=auth())
    ).headers.get("Octo-Capabilities", "")


async def test_options_and_availability_list_the_points(client: httpx.AsyncClient, coach: Services) -> None:
    response = await client.get("/octo/products/highland-coach", headers=auth(capabilities=PICKUPS))
    assert response.headers["Octo-Capabilities"] == PICKUPS
    product = response.json()
    assert not OPTION_FIELDS & set(product)  # the schema places them on options and availability only
    required, meet = product["options"]
    assert (required["pickupAvailable"], required["pickupRequired"]) == (True, True)
    assert (meet["pickupAvailable"], meet["pickupRequired"]) == (True, False)
    assert [p["id"] for p in required["pickupPoints"]] == [GRAND, STATION, BRIDGE]
    assert required["pickupPoints"][0] == {
        "id": GRAND, "name": "Grand Hotel", "directions": "Wait at the main entrance",
        "address": "1 Princes Street, EH2 2EQ, Edinburgh, GB", "latitude": 55.9533, "longitude": -3.1883,
        "localDateTime": None, "localDateTimeTo": None, "googlePlaceId": "ChIJ-grand",
        "street": "1 Princes Street", "postalCode": "EH2 2EQ", "locality": "Edinburgh", "region": None,
        "state": None, "country": "GB",
    }  # fmt: skip
    assert required["pickupPoints"][1]["address"] == "Waverley Bridge, Edinburgh"

    plain = (await client.get("/octo/products/thames-sightseeing", headers=auth(capabilities=PICKUPS))).json()
    assert (plain["options"][0]["pickupAvailable"], plain["options"][0]["pickupPoints"]) == (False, [])

    slots = (await send(client, "POST", "/octo/availability", {**COACH, "localDate": "2026-06-02"})).json()
    assert (slots[0]["pickupAvailable"], slots[0]["pickupRequired"]) == (True, True)
    times = [(p["localDateTime"], p["localDateTimeTo"]) for p in slots[0]["pickupPoints"]]
    assert times == [
        ("2026-06-02T09:15:00+01:00", "2026-06-02T09:30:00+01:00"),
        ("2026-06-02T09:30:00+01:00", "2026-06-02T09:30:00+01:00"),
        ("2026-06-02T09:40:00+01:00", "2026-06-02T09:45:00+01:00"),
    ]


# --- reserve, update, confirm ------------------------------------------------------------------


async def test_a_chosen_point_is_echoed_with_its_times(client: httpx.AsyncClient, coach: Services) -> None:
    booking = await reserved(client, coach_booking(pickupPointId=STATION))
    assert booking["pickupRequested"] is True  # a point asks for pickup
    assert booking["pickupPointId"] == STATION
    assert booking["pickupPoint"]["name"] == "Waverley Station"
    assert booking["pickupPoint"]["localDateTime"] == "2026-06-02T09:30:00+01:00"
    assert (booking["pickupHotel"], booking["pickupHotelRoom"], booking["pickupDispatch"]) == (
        None,
        None,
        None,
    )
    assert booking["option"]["pickupRequired"] is True

    confirmed = await confirm(client, booking["uuid"])
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "CONFIRMED" and confirmed.json()["pickupPointId"] == STATION
    again = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=PICKUPS))).json()
    assert again["pickupPoint"] == booking["pickupPoint"]


async def test_an_unknown_point_is_refused_and_nothing_is_written(
    client: httpx.AsyncClient, coach: Services
) -> None:
    before = await count_bookings(coach)
    response = await send(client, "POST", "/octo/bookings", coach_booking(pickupPointId="nowhere"))
    assert response.status_code == 400
    error = response.json()
    assert error["error"] == "BAD_REQUEST" and error["pickupPointId"] == "nowhere"
    assert "'nowhere' is not a pickup point of option 'DEFAULT'" in error["errorMessage"]
    assert GRAND in error["errorMessage"]
    # Another option's point is not this option's.
    other = await send(client, "POST", "/octo/bookings", coach_booking(product=MEET, pickupPointId=STATION))
    assert other.status_code == 400 and "option 'meet'" in other.json()["errorMessage"]
    assert await count_bookings(coach) == before


async def test_pickup_on_an_option_without_pickup_is_refused(
    client: httpx.AsyncClient, coach: Services
) -> None:
    response = await send(client, "POST", "/octo/bookings", reservation(pickupHotel="The Savoy"))
    assert response.status_code == 400
    assert response.json()["errorMessage"] == (
        "Option 'DEFAULT' of product 'thames-sightseeing' offers no pickup: "
        "pickupRequested, pickupPointId and pickupHotel are not accepted"
    )
    # Not asking for one is fine.
    assert (await reserved(client, reservation(pickupRequested=False)))["pickupRequested"] is False


async def test_a_required_pickup_is_needed_to_confirm(client: httpx.AsyncClient, coach: Services) -> None:
    booking = await reserved(client, coach_booking())  # a hold may be made before choosing
    assert (booking["pickupRequested"], booking["pickupPointId"]) == (False, None)
    refused = await confirm(client, booking["uuid"])
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert refused.json()["errorMessage"].startswith("Option 'DEFAULT' requires pickup")
    held = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert held["status"] == "ON_HOLD"

    # Requested without a place: still refused.
    asked = await confirm(client, booking["uuid"], pickupRequested=True)
    assert asked.status_code == 400
    assert asked.json()["errorMessage"] == (
        "Pickup was requested without a place: send a pickupPointId or a pickupHotel"
    )
    # Chosen at confirm.
    done = await confirm(client, booking["uuid"], pickupPointId=BRIDGE)
    assert done.status_code == 200, done.text
    assert (done.json()["status"], done.json()["pickupPoint"]["name"]) == ("CONFIRMED", "North Bridge")


async def test_a_client_without_the_capability_cannot_hold_a_required_pickup(
    client: httpx.AsyncClient, coach: Services
) -> None:
    """Such a hold could never be confirmed, and would keep its places until it expired (issue
    32): refused at POST /bookings and in an order, naming the capability, nothing held."""
    expected = (
        "Option 'DEFAULT' of product 'highland-coach' requires pickup, which only octo/pickups can "
        "choose: request the octo/pickups capability (Octo-Capabilities), else the booking could never "
        "be confirmed"
    )
    # Its pickup fields are not read at all: an unknown point is no error, and no choice.
    alone = await send(client, "POST", "/octo/bookings", coach_booking(pickupPointId="nowhere"), None)
    assert alone.status_code == 400 and alone.json()["error"] == "UNPROCESSABLE_ENTITY", alone.text
    assert alone.json()["errorMessage"] == expected
    order = {"bookings": [coach_booking(product=MEET), coach_booking()]}
    in_order = await client.post("/octo/orders", json=order, headers=auth(capabilities="octo/cart"))
    assert in_order.status_code == 400 and in_order.json()["error"] == "UNPROCESSABLE_ENTITY", in_order.text
    assert expected in in_order.json()["errorMessage"]
    assert await count_bookings(coach) == 0
    # With the capability, a hold may wait for its pickup; confirmed without the capability, it
    # is still refused.
    booking = await reserved(client, coach_booking())
    refused = await confirm(client, booking["uuid"], None, pickupPointId=GRAND)
    assert refused.status_code == 400 and "request octo/pickups" in refused.json()["errorMessage"]
    # The option that does not require pickup is held and confirmed without the capability.
    optional = await reserved(client, coach_booking(product=MEET), None)
    assert (await confirm(client, optional["uuid"], None)).status_code == 200


async def test_hotel_pickup_and_room(client: httpx.AsyncClient, coach: Services) -> None:
    booking = await reserved(client, coach_booking(product=MEET))
    done = await confirm(client, booking["uuid"], pickupHotel="The Balmoral", pickupHotelRoom="405")
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["pickupRequested"], body["pickupHotel"], body["pickupHotelRoom"], body["pickupRoom"]) == (
        True, "The Balmoral", "405", "405",
    )  # fmt: skip
    assert (body["pickupPointId"], body["pickupPoint"]) == (None, None)

    lonely = await send(client, "POST", "/octo/bookings", coach_booking(product=MEET, pickupHotelRoom="12"))
    assert lonely.status_code == 400
    assert (
        lonely.json()["errorMessage"]
        == "pickupHotelRoom needs a pickupHotel: the room is in the pickup hotel"
    )


async def test_requested_false_with_a_place_is_refused(client: httpx.AsyncClient, coach: Services) -> None:
    response = await send(
        client, "POST", "/octo/bookings", coach_booking(pickupRequested=False, pickupPointId=GRAND)
    )
    assert response.status_code == 400
    assert response.json()["errorMessage"] == (
        "pickupRequested is false but pickupPointId was sent: leave it out, or request pickup"
    )


async def test_patch_changes_and_clears_the_pickup(client: httpx.AsyncClient, coach: Services) -> None:
    booking = await reserved(client, coach_booking(product=MEET, pickupPointId=GRAND))
    path = f"/octo/bookings/{booking['uuid']}"
    hotel = await send(client, "PATCH", path, {"pickupPointId": None, "pickupHotel": "The Balmoral"})
    assert hotel.status_code == 200, hotel.text
    assert (hotel.json()["pickupPointId"], hotel.json()["pickupHotel"]) == (None, "The Balmoral")
    # Fields left out are kept.
    notes = (await send(client, "PATCH", path, {"notes": "window seat"})).json()
    assert (notes["pickupRequested"], notes["pickupHotel"]) == (True, "The Balmoral")
    dropped = (await send(client, "PATCH", path, {"pickupRequested": False})).json()
    assert (dropped["pickupRequested"], dropped["pickupHotel"], dropped["pickupHotelRoom"]) == (
        False,
        None,
        None,
    )
    unknown = await send(client, "PATCH", path, {"pickupPointId": STATION})
    assert unknown.status_code == 400 and unknown.json()["pickupPointId"] == STATION


async def test_moving_to_an_option_keeps_only_its_points(client: httpx.AsyncClient, coach: Services) -> None:
    booking = await reserved(client, coach_booking(pickupPointId=STATION))
    path = f"/octo/bookings/{booking['uuid']}"
    moved = await send(client, "PATCH", path, {"optionId": "meet"})
    assert moved.status_code == 400 and "not a pickup point of option 'meet'" in moved.json()["errorMessage"]
    with_point = await send(client, "PATCH", path, {"optionId": "meet", "pickupPointId": GRAND})
    assert with_point.status_code == 200, with_point.text
    assert with_point.json()["optionId"] == "meet"


async def test_a_confirmed_booking_keeps_its_required_pickup(
    client: httpx.AsyncClient, coach: Services
) -> None:
    booking = await reserved(client, coach_booking(pickupPointId=GRAND))
    assert (await confirm(client, booking["uuid"])).status_code == 200
    path = f"/octo/bookings/{booking['uuid']}"
    refused = await send(client, "PATCH", path, {"pickupRequested": False})
    assert refused.status_code == 400 and refused.json()["errorMessage"].startswith(
        "Option 'DEFAULT' requires"
    )
    changed = await send(client, "PATCH", path, {"pickupPointId": STATION})
    assert changed.status_code == 200 and changed.json()["pickupPoint"]["name"] == "Waverley Station"


async def test_same_uuid_with_another_pickup_is_another_request(
    client: httpx.AsyncClient, coach: Services
) -> None:
    body = coach_booking(pickupPointId=GRAND)
    first = await reserved(client, body)
    assert (await reserved(client, body))["id"] == first["id"]
    clash = await send(client, "POST", "/octo/bookings", {**body, "pickupPointId": STATION})
    assert clash.status_code == 400 and clash.json()["error"] == "INVALID_BOOKING_UUID"


async def test_cart_bookings_take_a_pickup(client: httpx.AsyncClient, coach: Services) -> None:
    body = {"bookings": [coach_booking(product=MEET, pickupPointId=GRAND)]}
    response = await send(client, "POST", "/octo/orders", body, "octo/cart, octo/pickups")
    assert response.status_code == 200, response.text
    assert response.json()["bookings"][0]["pickupPoint"]["id"] == GRAND


async def test_webhook_payloads_carry_the_pickup(client: httpx.AsyncClient, coach: Services) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, capabilities=PICKUPS)
        booking = await reserved(client, coach_booking(pickupPointId=GRAND))
        assert (await confirm(client, booking["uuid"])).status_code == 200
        await drain(coach)
        payloads = [p for p in target.payloads() if p["booking"]["uuid"] == booking["uuid"]]
        assert payloads and payloads[-1]["booking"]["pickupPoint"]["id"] == GRAND


# --- the driver's pickup list ---------------------------------------------------------------------


async def test_the_pickup_list_is_ordered_by_pickup_time(client: httpx.AsyncClient, coach: Services) -> None:
    guests = [("Grace", "Hopper", BRIDGE), ("Alan", "Turing", GRAND), ("Ada", "Lovelace", STATION)]
    for first, last, point in guests:  # picked up at 09:40, 09:15 and 09:30
        booking = await reserved(client, coach_booking(pickupPointId=point))
        contact = {**GUEST, "firstName": first, "lastName": last, "phoneNumber": "+447700900001"}
        assert (await confirm(client, booking["uuid"], contact=contact)).status_code == 200
    hotel = await reserved(client, coach_booking(units=1, product=MEET))
    assert (
        await confirm(client, hotel["uuid"], pickupHotel="The Balmoral", pickupHotelRoom="7")
    ).status_code == 200
    await reserved(client, coach_booking(units=3, product=MEET))  # no pickup: not on the list
    expired = await reserved(client, coach_booking(pickupPointId=GRAND))
    await client.post(f"/octo/bookings/{expired['uuid']}/cancel", headers=auth())

    response = await client.get(f"/admin/api/slots/highland-coach/DEFAULT/{DEPARTURE}/pickups", headers=ADMIN)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert (
        'filename="pickups-highland-coach-DEFAULT-20260602T1000.csv"'
        in response.headers["content-disposition"]
    )
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [(r["pickupFrom"], r["pickupPoint"], r["leadGuest"], r["guests"]) for r in rows] == [
        ("2026-06-02T09:15:00+01:00", "Grand Hotel", "Alan Turing", "2"),
        ("2026-06-02T09:30:00+01:00", "Waverley Station", "Ada Lovelace", "2"),
        ("2026-06-02T09:40:00+01:00", "North Bridge", "Grace Hopper", "2"),
    ]
    grand = rows[0]
    assert (grand["pickupTo"], grand["address"], grand["directions"], grand["phoneNumber"], grand["status"]) == (
        "2026-06-02T09:30:00+01:00", "1 Princes Street, EH2 2EQ, Edinburgh, GB", "Wait at the main entrance",
        "'+447700900001", "CONFIRMED",  # guarded: a spreadsheet would read it as a formula
    )  # fmt: skip

    meet = await client.get(f"/admin/api/slots/highland-coach/meet/{DEPARTURE}/pickups", headers=ADMIN)
    [only] = list(csv.DictReader(io.StringIO(meet.content.decode("utf-8-sig"))))
    assert (only["pickupFrom"], only["hotel"], only["hotelRoom"], only["guests"]) == (
        "",
        "The Balmoral",
        "7",
        "1",
    )


async def test_the_pickup_list_of_an_unknown_departure(client: httpx.AsyncClient, coach: Services) -> None:
    response = await client.get(f"/admin/api/slots/highland-coach/DEFAULT/{SLOT[:11]}09:00:00+01:00/pickups",
                                headers=ADMIN)  # fmt: skip
    assert response.status_code == 400 and response.json()["error"] == "INVALID_AVAILABILITY_ID"
    nobody = await client.get(f"/admin/api/slots/{TOUR['productId']}/DEFAULT/{SLOT}/pickups", headers=ADMIN)
    assert nobody.status_code == 200 and nobody.text.count("\r\n") == 1  # the header row only
