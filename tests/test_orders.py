"""octo/cart: orders hold, confirm and cancel their bookings together, all or nothing.
Clock: 2026-06-01T08:00Z (09:00 in London)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx

from berth.capabilities.cart.orders import OrderInput
from berth.container import Services, build_services
from berth.settings import Settings
from tests.bookings_helpers import GUEST, SLOT, TOUR, booking_catalog, reservation, vacancies
from tests.builders import load
from tests.conftest import KEY_B, Clock, auth
from tests.receivers import receiver
from tests.test_webhooks import drain, subscribe

CART = "octo/cart"


def item(availability_id: str = SLOT, units: tuple[str, ...] = ("adult",), **extra: Any) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()), **TOUR, "availabilityId": availability_id,
        "unitItems": [{"unitId": u} for u in units], **extra,
    }  # fmt: skip


async def create(
    client: httpx.AsyncClient, *bookings: dict[str, Any], key: str = "demo-reseller-a", **fields: Any
) -> Any:
    response = await client.post(
        "/octo/orders", json={"bookings": list(bookings), **fields}, headers=auth(key, CART)
    )
    assert response.status_code == 200, response.text
    return response.json()


async def test_create_get_and_cart_fields(client: httpx.AsyncClient, bookable: Services) -> None:
    order = await create(
        client, item(units=("adult", "child")), item("2026-06-02T14:00:00+01:00"), contact=GUEST
    )
    assert order["status"] == "ON_HOLD" and order["utcExpiresAt"] == "2026-06-01T08:30:00Z"
    assert order["currency"] == "EUR" and order["confirmable"] is True and order["cancellable"] is True
    assert order["contact"]["firstName"] == "Ada"
    assert [b["status"] for b in order["bookings"]] == ["ON_HOLD", "ON_HOLD"]
    assert [b["primary"] for b in order["bookings"]] == [True, False]
    assert {b["orderId"] for b in order["bookings"]} == {order["id"]}
    assert {b["orderReference"] for b in order["bookings"]} == {order["supplierReference"]}
    assert {b["utcExpiresAt"] for b in order["bookings"]} == {order["utcExpiresAt"]}
    assert (await client.get(f"/octo/orders/{order['id']}", headers=auth(capabilities=CART))).json() == order
    plain = (await client.get(f"/octo/bookings/{order['bookings'][0]['uuid']}", headers=auth())).json()
    assert "orderId" not in plain and "primary" not in plain
    assert await vacancies(client) == 18


async def test_bookings_route_starts_or_joins_orders(client: httpx.AsyncClient, bookable: Services) -> None:
    first = (await client.post("/octo/bookings", json=reservation(), headers=auth(capabilities=CART))).json()
    assert first["primary"] is True and first["orderId"]
    joined = (
        await client.post(
            "/octo/bookings", json=reservation(orderId=first["orderId"]), headers=auth(capabilities=CART)
        )
    ).json()
    assert joined["orderId"] == first["orderId"] and joined["primary"] is False
    assert joined["utcExpiresAt"] == first["utcExpiresAt"]
    order = (await client.get(f"/octo/orders/{first['orderId']}", headers=auth())).json()
    assert [b["id"] for b in order["bookings"]] == [first["id"], joined["id"]]
    no_cart = (await client.post("/octo/bookings", json=reservation(), headers=auth())).json()
    assert "orderId" not in no_cart


async def test_confirm_the_whole_order(client: httpx.AsyncClient, bookable: Services) -> None:
    kayak = {
        **item(),
        "productId": "sunset-kayak",
        "availabilityId": "2026-06-06T18:00:00+01:00",
        "unitItems": [{"unitId": "paddler"}],
    }
    order = await create(client, item(), item("2026-06-03T10:00:00+01:00"))
    confirmed = (
        await client.post(
            f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(capabilities=CART)
        )
    ).json()
    assert confirmed["status"] == "CONFIRMED" and confirmed["utcExpiresAt"] is None
    assert confirmed["utcConfirmedAt"] == "2026-06-01T08:00:00Z"
    assert [b["status"] for b in confirmed["bookings"]] == ["CONFIRMED", "CONFIRMED"]
    assert confirmed["bookings"][0]["contact"]["emailAddress"] == "ada@example.com"
    again = (
        await client.post(
            f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(capabilities=CART)
        )
    ).json()
    assert again == confirmed
    mixed = await create(client, item(), kayak, contact={**GUEST, "phoneNumber": "+447700900123"})
    pending = (
        await client.post(f"/octo/orders/{mixed['id']}/confirm", headers=auth(capabilities=CART))
    ).json()
    assert pending["status"] == "PENDING"
    assert [b["status"] for b in pending["bookings"]] == ["CONFIRMED", "PENDING"]


async def test_confirm_is_all_or_nothing(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    soon = "2026-06-01T12:00:00+01:00"  # closes for sale at 11:45 London
    order = await create(client, item(), item(soon), item("2026-06-03T10:00:00+01:00"), expirationMinutes=300)
    clock.advance(hours=2, minutes=50)  # 11:50 London: the middle booking's departure is closed
    response = await client.post(
        f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(capabilities=CART)
    )
    body = response.json()
    middle = order["bookings"][1]
    assert body["error"] == "UNPROCESSABLE_ENTITY" and body["uuid"] == middle["uuid"]
    assert body["errorMessage"] == (
        f"Booking {middle['uuid']} ({middle['supplierReference']}) cannot be confirmed: Availability {soon} closed for "
        "sale at 2026-06-01T10:45:00Z. Nothing in the order was confirmed"
    )
    after = (await client.get(f"/octo/orders/{order['id']}", headers=auth(capabilities=CART))).json()
    assert after["status"] == "ON_HOLD" and [b["status"] for b in after["bookings"]] == ["ON_HOLD"] * 3


async def test_cancel_and_extend(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    order = await create(client, item(), item("2026-06-03T10:00:00+01:00"))
    clock.advance(minutes=10)
    extended = (
        await client.post(
            f"/octo/orders/{order['id']}/extend",
            json={"expirationMinutes": 60},
            headers=auth(capabilities=CART),
        )
    ).json()
    assert extended["utcExpiresAt"] == "2026-06-01T09:30:00Z"
    assert {b["utcExpiresAt"] for b in extended["bookings"]} == {"2026-06-01T09:30:00Z"}
    cancelled = (
        await client.post(
            f"/octo/orders/{order['id']}/cancel",
            json={"reason": "plans changed"},
            headers=auth(capabilities=CART),
        )
    ).json()
    assert cancelled["status"] == "CANCELLED" and cancelled["cancellation"]["reason"] == "plans changed"
    assert [b["status"] for b in cancelled["bookings"]] == ["CANCELLED", "CANCELLED"]
    assert await vacancies(client) == 20
    refused = await client.post(f"/octo/orders/{order['id']}/extend", headers=auth())
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert (await client.delete(f"/octo/orders/{order['id']}", headers=auth())).json()[
        "status"
    ] == "CANCELLED"


async def test_cancel_is_all_or_nothing(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    order = await create(client, item("2026-06-03T10:00:00+01:00"), item(), expirationMinutes=600)
    await client.post(f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth())
    clock.advance(hours=2)  # inside 24 h of the 2 June departure: that booking is past its cutoff
    response = await client.post(f"/octo/orders/{order['id']}/cancel", headers=auth())
    assert response.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "Nothing in the order was cancelled" in response.json()["errorMessage"]
    after = (await client.get(f"/octo/orders/{order['id']}", headers=auth())).json()
    assert [b["status"] for b in after["bookings"]] == ["CONFIRMED", "CONFIRMED"] and after[
        "cancellable"
    ] is False


async def test_order_expiry_releases_everything(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    order = await create(client, item(units=("adult",) * 3), item(units=("adult",) * 2), expirationMinutes=5)
    assert await vacancies(client) == 15
    clock.advance(minutes=6)
    expired = (await client.get(f"/octo/orders/{order['id']}", headers=auth())).json()
    assert expired["status"] == "EXPIRED" and [b["status"] for b in expired["bookings"]] == [
        "EXPIRED",
        "EXPIRED",
    ]
    assert await vacancies(client) == 20
    catalog = (await bookable.catalog.snapshot()).catalog
    assert await bookable.orders.expire_due(catalog) == 1
    joined = await client.post("/octo/bookings", json=reservation(orderId=order["id"]), headers=auth())
    assert joined.json()["error"] == "UNPROCESSABLE_ENTITY"
    confirm = await client.post(
        f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth()
    )
    assert confirm.json()["error"] == "UNPROCESSABLE_ENTITY"


async def test_bad_orders(client: httpx.AsyncClient, bookable: Services) -> None:
    missing = str(uuid.uuid4())
    response = await client.get(f"/octo/orders/{missing}", headers=auth())
    assert response.json() == {
        "error": "INVALID_ORDER_ID",
        "errorMessage": f"The order {missing!r} does not exist",
        "id": missing,
        "orderId": missing,
    }
    mine = await create(client, item())
    foreign = await client.get(f"/octo/orders/{mine['id']}", headers=auth(KEY_B))
    assert foreign.json()["error"] == "INVALID_ORDER_ID"
    join_foreign = await client.post(
        "/octo/bookings", json=reservation(orderId=mine["id"]), headers=auth(KEY_B)
    )
    assert join_foreign.json()["error"] == "INVALID_ORDER_ID"
    mixed = await client.post(
        "/octo/orders", json={"bookings": [item(), item(currency="GBP")]}, headers=auth()
    )
    assert mixed.json()["error"] == "BAD_REQUEST" and "one currency" in mixed.json()["errorMessage"]
    join_mixed = await client.post(
        "/octo/bookings", json=reservation(orderId=mine["id"], currency="GBP"), headers=auth()
    )
    assert join_mixed.json()["error"] == "BAD_REQUEST"
    sold_out = await client.post(
        "/octo/orders",
        json={"bookings": [item(), item(units=("adult",) * 12), item(units=("adult",) * 12)]},
        headers=auth(),
    )
    assert sold_out.json()["error"] == "UNPROCESSABLE_ENTITY" and sold_out.json()["errorMessage"].startswith(
        "bookings[2]: "
    )
    assert await vacancies(client) == 19  # only `mine` holds a place: the refused order held nothing
    empty = await create(client)
    nothing = await client.post(
        f"/octo/orders/{empty['id']}/confirm", json={"contact": GUEST}, headers=auth()
    )
    assert nothing.json()["error"] == "UNPROCESSABLE_ENTITY"


async def test_update_order(client: httpx.AsyncClient, bookable: Services) -> None:
    order = await create(client, item())
    updated = (
        await client.patch(
            f"/octo/orders/{order['id']}",
            json={"contact": {"firstName": "Grace"}, "expirationMinutes": 90, "emailReceipt": True},
            headers=auth(capabilities=CART),
        )
    ).json()
    assert updated["contact"]["firstName"] == "Grace" and updated["emailReceipt"] is True
    assert (
        updated["utcExpiresAt"] == "2026-06-01T09:30:00Z"
        and updated["bookings"][0]["utcExpiresAt"] == "2026-06-01T09:30:00Z"
    )
    currency = await client.patch(f"/octo/orders/{order['id']}", json={"currency": "GBP"}, headers=auth())
    assert currency.json()["error"] == "BAD_REQUEST"


async def test_order_pricing(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await client.post(
        "/octo/orders", json={"bookings": [item(units=("adult", "child")), item(units=("adult",))]},
        headers=auth(capabilities="octo/cart, octo/pricing"),
    )  # fmt: skip
    order = response.json()
    assert order["pricing"]["retail"] == 2500 + 1500 + 2500 and order["pricing"]["currency"] == "EUR"
    assert order["pricing"]["includedTaxes"] == [
        {"name": "VAT", "retail": 417 + 250 + 417, "original": 467 + 250 + 467, "net": 333 + 200 + 333}
    ]


async def test_order_update_webhook(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver() as target:
        hook = await subscribe(client, target.url, event="order_update")
        assert hook["capabilities"] == ["octo/cart"]
        order = await create(client, item())
        await client.post(f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth())
        await drain(bookable)
        (payload,) = target.payloads()
        assert payload["event"] == "order_update" and payload["order"]["status"] == "CONFIRMED"
        assert payload["order"]["bookings"][0]["orderId"] == order["id"]
        assert {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "CONFIRMED"} in payload["diff"]


async def test_two_orders_race_for_the_last_places(settings: Settings, clock: Clock) -> None:
    fleet = [build_services(settings, clock) for _ in range(4)]
    try:
        from berth.services.bookings.inputs import ReserveInput, UnitItemInput

        await load(fleet[0], booking_catalog())
        catalog = (await fleet[0].catalog.snapshot()).catalog
        connection = await fleet[0].connections.ensure("Racer", "order-racer")
        filler = ReserveInput(product_id="thames-sightseeing", option_id="DEFAULT", availability_id=SLOT,
                              unit_items=tuple(UnitItemInput("adult") for _ in range(12)))  # fmt: skip
        await fleet[0].bookings.reserve(catalog, connection.id, filler)  # 8 places left

        def order_for(n: int) -> OrderInput:
            return OrderInput(bookings=(
                ReserveInput(product_id="thames-sightseeing", option_id="DEFAULT", availability_id="2026-06-03T10:00:00+01:00",
                             unit_items=(UnitItemInput("adult"),)),
                ReserveInput(product_id="thames-sightseeing", option_id="DEFAULT", availability_id=SLOT,
                             unit_items=tuple(UnitItemInput("adult") for _ in range(n))),
            ))  # fmt: skip

        outcomes = await asyncio.gather(
            *(fleet[i % 4].orders.create(catalog, connection.id, order_for(5)) for i in range(8)),
            return_exceptions=True,
        )
        won = [o for o in outcomes if not isinstance(o, BaseException)]
        assert len(won) == 1, outcomes
        slot = await fleet[0].availability.check(catalog, _query(SLOT))
        other = await fleet[0].availability.check(catalog, _query("2026-06-03T10:00:00+01:00"))
        assert (
            slot[0].state.vacancies == 3 and other[0].state.vacancies == 19
        )  # the losers held nothing anywhere
    finally:
        for services in fleet:
            await services.close()


def _query(availability_id: str) -> Any:
    from berth.services.availability import AvailabilityQuery

    return AvailabilityQuery(
        product_id="thames-sightseeing", option_id="DEFAULT", availability_ids=(availability_id,)
    )


# --- issue 17: a booking uuid is the idempotency key with octo/cart too -------------------------


async def test_a_repeated_cart_reservation_answers_the_same_booking(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    before = await vacancies(client)
    body = reservation(resellerReference="RES-17")
    first = await client.post("/octo/bookings", json=body, headers=auth(capabilities=CART))
    again = await client.post("/octo/bookings", json=body, headers=auth(capabilities=CART))
    assert first.status_code == again.status_code == 200, again.text
    assert again.json() == first.json() and first.json()["orderId"]
    order = (
        await client.get(f"/octo/orders/{first.json()['orderId']}", headers=auth(capabilities=CART))
    ).json()
    assert [b["uuid"] for b in order["bookings"]] == [body["uuid"]]
    assert await vacancies(client) == before - 2
    changed = await client.post(
        "/octo/bookings", json={**body, "notes": "another request"}, headers=auth(capabilities=CART)
    )
    assert changed.status_code == 400
    assert changed.json() == {
        "error": "INVALID_BOOKING_UUID",
        "errorMessage": f"The uuid {body['uuid']!r} was already used for a different reservation",
        "uuid": body["uuid"],
    }
    # Errors speak of the booking sent, not of a `bookings[0]` the client never sent.
    for bad in (reservation(("pensioner",)), reservation(orderId=first.json()["orderId"], currency="GBP")):
        refused = await client.post("/octo/bookings", json=bad, headers=auth(capabilities=CART))
        assert refused.status_code == 400 and not refused.json()["errorMessage"].startswith("bookings["), (
            refused.text
        )
    # A booking joining an order is keyed the same way.
    joining = reservation(orderId=first.json()["orderId"])
    joined = await client.post("/octo/bookings", json=joining, headers=auth(capabilities=CART))
    rejoined = await client.post("/octo/bookings", json=joining, headers=auth(capabilities=CART))
    assert rejoined.json() == joined.json() and joined.json()["orderId"] == first.json()["orderId"]
    assert await vacancies(client) == before - 4


async def test_a_repeated_order_answers_the_same_order(client: httpx.AsyncClient, bookable: Services) -> None:
    before = await vacancies(client)
    first_item, second_item = item(units=("adult", "child")), item("2026-06-03T10:00:00+01:00")
    body = {"bookings": [first_item, second_item], "contact": GUEST, "emailReceipt": True}
    first = await client.post("/octo/orders", json=body, headers=auth(capabilities=CART))
    again = await client.post("/octo/orders", json=body, headers=auth(capabilities=CART))
    assert first.status_code == again.status_code == 200, again.text
    assert again.json() == first.json()
    assert await vacancies(client) == before - 2
    used = first_item["uuid"]
    others: tuple[dict[str, Any], ...] = (
        {**body, "bookings": [{**first_item, "notes": "x"}, second_item]},  # a booking differs
        {**body, "contact": {**GUEST, "firstName": "Grace"}},  # the order differs
        {**body, "bookings": [first_item]},  # fewer bookings
        {**body, "bookings": [second_item, first_item]},  # another sequence
        {**body, "bookings": [first_item, second_item, item()]},  # one more booking
    )
    for index, other in enumerate(others):
        refused = await client.post("/octo/orders", json=other, headers=auth(capabilities=CART))
        assert refused.status_code == 400, index
        expected = other["bookings"][0]["uuid"]
        assert refused.json() == {
            "error": "INVALID_BOOKING_UUID",
            "errorMessage": f"bookings[0]: the uuid {expected!r} was already used for a different reservation",
            "uuid": expected,
        }, index
    assert used == first_item["uuid"] and await vacancies(client) == before - 2  # the refused held nothing
    twice = await client.post("/octo/orders", json={"bookings": [(same := item()), same]}, headers=auth())
    assert twice.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": f"bookings[1].uuid {same['uuid']!r} repeats the uuid of bookings[0]",
    }
    plain = reservation()
    await client.post("/octo/bookings", json=plain, headers=auth())  # a booking of no order
    taken = await client.post("/octo/orders", json={"bookings": [item(), plain]}, headers=auth())
    assert taken.json()["error"] == "INVALID_BOOKING_UUID" and taken.json()["uuid"] == plain["uuid"]
    assert taken.json()["errorMessage"].startswith("bookings[1]: ")


async def test_racing_repeats_end_with_one_order(settings: Settings, clock: Clock) -> None:
    """Identical requests sent at once, through several processes, make one order."""
    from berth.app import create_app
    from berth.demo.loader import load_demo

    fleet = [build_services(settings, clock) for _ in range(4)]
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(services=s), raise_app_exceptions=False),
            base_url="http://berth.test",
        )
        for s in fleet
    ]
    try:
        await load_demo(fleet[0])
        before = await vacancies(clients[0])
        order = {"bookings": [item(units=("adult",) * 2), item("2026-06-03T10:00:00+01:00")]}
        booking = reservation()
        answers = await asyncio.gather(
            *(clients[i % 4].post("/octo/orders", json=order, headers=auth(capabilities=CART)) for i in range(8)),
            *(clients[i % 4].post("/octo/bookings", json=booking, headers=auth(capabilities=CART)) for i in range(8)),
        )  # fmt: skip
        assert [a.status_code for a in answers] == [200] * 16, [
            a.text for a in answers if a.status_code != 200
        ]
        assert len({a.json()["id"] for a in answers[:8]}) == 1
        assert len({(a.json()["id"], a.json()["orderId"]) for a in answers[8:]}) == 1
        assert await vacancies(clients[0]) == before - 4
    finally:
        for http in clients:
            await http.aclose()
        for services in fleet:
            await services.close()


async def test_a_held_order_past_the_cancellation_cutoff_can_be_released(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    before = await vacancies(client)
    order = await create(client, item(), item(), expirationMinutes=240)
    clock.advance(hours=2)  # inside 24 h of the 2 June 10:00 departure, still on sale
    held = (await client.get(f"/octo/orders/{order['id']}", headers=auth(capabilities=CART))).json()
    assert held["status"] == "ON_HOLD" and held["cancellable"] is True
    assert [b["cancellable"] for b in held["bookings"]] == [True, True]
    cancelled = await client.post(f"/octo/orders/{order['id']}/cancel", headers=auth(capabilities=CART))
    assert cancelled.json()["status"] == "CANCELLED", cancelled.text
    assert await vacancies(client) == before


async def test_an_extension_by_a_huge_number_of_minutes_is_the_longest_hold(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """Found by the fuzzer: 10^15 minutes overflowed the date (500); it is the longest hold."""
    order = await create(client, item())
    extended = await client.post(
        f"/octo/orders/{order['id']}/extend",
        json={"expirationMinutes": 10**15},
        headers=auth(capabilities=CART),
    )
    assert extended.status_code == 200, extended.text
    held = await client.post("/octo/bookings", json=reservation(), headers=auth())
    again = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/extend", json={"expirationMinutes": 10**15}, headers=auth()
    )
    assert again.status_code == 200, again.text
