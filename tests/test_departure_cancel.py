"""Cancelling a departure (issue 21): a weather cancellation of a departure booked by two
resellers, each told through its own webhooks on a real loopback receiver; orders and packages
kept whole; all or nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, text

from berth.container import Services
from berth.store.tables import bookings, outbox
from tests.bookings_helpers import GUEST, SLOT, confirm, reservation, reserve
from tests.conftest import ADMIN, KEY_A, KEY_B, auth
from tests.departures_helpers import cancel_departure, departure_path
from tests.packages_helpers import PASS
from tests.receivers import receiver
from tests.test_orders import CART, create, item
from tests.test_packages import CRUISE_SLOT, package_body
from tests.test_webhooks import drain, subscribe

NOON = "2026-06-02T12:00:00+01:00"


async def booking(client: httpx.AsyncClient, uuid: str, key: str = KEY_A) -> Any:
    response = await client.get(f"/octo/bookings/{uuid}", headers=auth(key))
    assert response.status_code == 200, response.text
    return response.json()


async def connection_ids(client: httpx.AsyncClient) -> dict[str, str]:
    listed = (await client.get("/admin/api/connections", headers=ADMIN)).json()
    return {c["name"]: c["id"] for c in listed}


async def test_weather_cancellation_reaches_both_resellers(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async with (
        receiver() as a_bookings,
        receiver() as b_bookings,
        receiver() as b_orders,
        receiver() as a_slots,
    ):
        await subscribe(client, a_bookings.url)
        await subscribe(client, b_bookings.url, key=KEY_B)
        await subscribe(client, b_orders.url, event="order_update", key=KEY_B)
        await subscribe(client, a_slots.url, event="availability_update")
        a_confirmed = await reserve(client, reservation(resellerReference="A-1"))
        await confirm(client, a_confirmed["uuid"])
        a_held = await reserve(client, reservation(("adult",), resellerReference="A-2"))
        a_elsewhere = await reserve(client, reservation(availability_id=NOON))
        b_confirmed = await reserve(client, reservation(("adult", "child")), key=KEY_B)
        await confirm(client, b_confirmed["uuid"], key=KEY_B)
        order = await create(client, item(), item(NOON), key=KEY_B, contact=GUEST)
        confirmed_order = await client.post(
            f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(KEY_B, CART)
        )
        assert confirmed_order.json()["status"] == "CONFIRMED", confirmed_order.text
        already = await reserve(client, reservation(("adult",)))
        await client.post(
            f"/octo/bookings/{already['uuid']}/cancel", json={"reason": "changed mind"}, headers=auth()
        )
        await drain(bookable)
        for target in (a_bookings, b_bookings, b_orders, a_slots):
            target.requests.clear()

        affected = (await client.get(departure_path(suffix="/affected"), headers=ADMIN)).json()
        names = await connection_ids(client)
        both = sorted(names[n] for n in names)
        assert affected == {"bookings": 4, "connectionIds": both, "ticketsNotThrough": []}
        response = await cancel_departure(client, "Storm warning: the river is closed")
        assert response.status_code == 200, response.text
        done = response.json()
        on_slot = {a_confirmed["id"], a_held["id"], b_confirmed["id"], order["bookings"][0]["id"]}
        assert set(done["cancelledBookingIds"]) == on_slot and done["connectionIds"] == both
        departure = done["departure"]
        assert (departure["closed"], departure["status"], departure["placesHeld"]) == (True, "CLOSED", 0)
        await drain(bookable)

        reason = "Storm warning: the river is closed"
        seen_a = {p["booking"]["uuid"]: p["booking"] for p in a_bookings.payloads()}
        assert seen_a.keys() == {a_confirmed["uuid"], a_held["uuid"]}
        seen_b = {p["booking"]["uuid"]: p["booking"] for p in b_bookings.payloads()}
        assert seen_b.keys() == {b_confirmed["uuid"], order["bookings"][0]["uuid"]}
        for seen in (*seen_a.values(), *seen_b.values()):
            assert seen["status"] == "CANCELLED" and seen["cancellation"]["reason"] == reason
        (order_update,) = b_orders.payloads()
        assert order_update["order"]["id"] == order["id"]
        statuses = {b["id"]: b["status"] for b in order_update["order"]["bookings"]}
        assert statuses == {order["bookings"][0]["id"]: "CANCELLED", order["bookings"][1]["id"]: "CONFIRMED"}
        (slot_update,) = a_slots.payloads()
        assert slot_update["availability"]["id"] == SLOT
        assert (slot_update["availability"]["status"], slot_update["availability"]["available"]) == (
            "CLOSED",
            False,
        )

        # What was not on the departure, or was already over, is as it was.
        assert (await booking(client, a_elsewhere["uuid"]))["status"] == "ON_HOLD"
        assert (await booking(client, already["uuid"]))["cancellation"]["reason"] == "changed mind"
        history = (await client.get(f"/admin/api/bookings/{a_confirmed['id']}", headers=ADMIN)).json()[
            "history"
        ]
        assert (history[-1]["kind"], history[-1]["actor"], history[-1]["detail"]["reason"]) == (
            "cancelled",
            "supplier",
            reason,
        )
        refused = await client.post("/octo/bookings", json=reservation(), headers=auth())
        assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
        # Cancelling again finds nothing left to cancel.
        again = (await cancel_departure(client, reason)).json()
        assert again["cancelledBookingIds"] == [] and again["departure"]["closed"] is True


async def test_a_package_goes_whole(client: httpx.AsyncClient, packaged: Services) -> None:
    body = await package_body(client)
    held = await client.post("/octo/bookings", json=body, headers=auth())
    assert held.status_code == 200, held.text
    package = held.json()
    await confirm(client, package["uuid"])
    response = await cancel_departure(client, "High winds", availability_id=CRUISE_SLOT)
    assert response.status_code == 200, response.text
    shown = (
        await client.get(f"/octo/bookings/{package['uuid']}", headers=auth(capabilities="octo/packages"))
    ).json()
    assert shown["productId"] == PASS["productId"] and shown["status"] == "CANCELLED"
    assert {m["status"] for m in shown["packageBookings"]} == {"CANCELLED"}


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "reason"),
        ({"reason": ""}, "reason"),
        ({"reason": "   "}, "reason"),
        ({"reason": "x", "force": True}, "force"),
    ],
)
async def test_bad_cancellations_change_nothing(
    client: httpx.AsyncClient, bookable: Services, body: dict[str, Any], words: str
) -> None:
    kept = await reserve(client)
    response = await client.post(departure_path(suffix="/cancel"), json=body, headers=ADMIN)
    assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", response.text
    assert words in response.json()["errorMessage"]
    assert (await booking(client, kept["uuid"]))["status"] == "ON_HOLD"
    missing = await cancel_departure(client, "storm", availability_id="2026-06-02T11:00:00+01:00")
    assert missing.json()["error"] == "INVALID_AVAILABILITY_ID"


async def test_a_failure_part_way_leaves_everything_as_it_was(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """The departure is closed last, after its bookings are cancelled: a database that refuses
    that last write rolls back every cancellation and every message with it."""
    kept = await reserve(client)
    await confirm(client, kept["uuid"])
    async with receiver() as target:
        await subscribe(client, target.url)
        await drain(bookable)
        postgres = bookable.database.dialect == "postgresql"
        create = (
            [
                "CREATE OR REPLACE FUNCTION refuse_override() RETURNS trigger AS $$ "
                "BEGIN RAISE EXCEPTION 'the disk is on fire'; END $$ LANGUAGE plpgsql",
                "CREATE TRIGGER refuse_override BEFORE INSERT ON departure_overrides "
                "FOR EACH ROW EXECUTE FUNCTION refuse_override()",
            ]
            if postgres
            else [
                "CREATE TRIGGER refuse_override BEFORE INSERT ON departure_overrides "
                "BEGIN SELECT RAISE(ABORT, 'the disk is on fire'); END"
            ]
        )
        async with bookable.database.transaction(write=True) as conn:
            for statement in create:
                await conn.execute(text(statement))
        try:
            response = await cancel_departure(client, "Storm")
            assert response.status_code == 500 and response.json()["error"] == "INTERNAL_SERVER_ERROR"
        finally:
            async with bookable.database.transaction(write=True) as conn:
                await conn.execute(
                    text("DROP TRIGGER refuse_override" + (" ON departure_overrides" if postgres else ""))
                )
                if postgres:
                    await conn.execute(text("DROP FUNCTION refuse_override()"))
        assert (await booking(client, kept["uuid"]))["status"] == "CONFIRMED"
        async with bookable.database.transaction(write=False) as conn:
            assert await conn.scalar(select(func.count()).select_from(outbox)) == 0
            statuses = (await conn.execute(select(bookings.c.status))).scalars().all()
        assert statuses == ["CONFIRMED"]
        await drain(bookable)
        assert target.requests == []
        departure = (await client.get(departure_path(), headers=ADMIN)).json()
        assert departure["closed"] is False and departure["placesHeld"] == 2
