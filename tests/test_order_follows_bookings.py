"""octo/cart: an order follows its bookings when they change on their own (booking routes, the
supplier's steps, expiry), and says so with an order_update. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

from typing import Any

import httpx

from berth.container import Services
from tests.bookings_helpers import GUEST, vacancies
from tests.conftest import ADMIN, Clock, auth
from tests.receivers import Receiver, receiver
from tests.test_orders import CART, create, item
from tests.test_webhooks import drain, subscribe

KAYAK = {
    "productId": "sunset-kayak",
    "availabilityId": "2026-06-06T18:00:00+01:00",
    "unitItems": [{"unitId": "paddler"}],
}
PADDLER = {**GUEST, "phoneNumber": "+447700900123"}


async def order_of(client: httpx.AsyncClient, order_id: str) -> Any:
    response = await client.get(f"/octo/orders/{order_id}", headers=auth(capabilities=CART))
    assert response.status_code == 200, response.text
    return response.json()


async def updates(services: Services, target: Receiver) -> list[Any]:
    """The order_update payloads delivered since the last call."""
    await drain(services)
    payloads = target.payloads()
    target.requests.clear()
    assert {p["event"] for p in payloads} <= {"order_update"}
    return payloads


async def sweep(services: Services) -> None:
    catalog = (await services.catalog.snapshot()).catalog
    await services.orders.expire_due(catalog)
    await services.expiry.expire_due()


async def test_confirming_the_only_booking_confirms_the_order(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="order_update")
        order = await create(client, item())
        (booking,) = order["bookings"]
        confirmed = await client.post(
            f"/octo/bookings/{booking['uuid']}/confirm", json={"contact": GUEST}, headers=auth()
        )
        assert confirmed.json()["status"] == "CONFIRMED"
        after = await order_of(client, order["id"])
        assert after["status"] == "CONFIRMED" and after["utcExpiresAt"] is None
        assert after["utcConfirmedAt"] == "2026-06-01T08:00:00Z" and after["confirmable"] is False
        assert after["cancellable"] is True and [b["status"] for b in after["bookings"]] == ["CONFIRMED"]
        (payload,) = await updates(bookable, target)
        assert payload["order"] == after
        assert {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "CONFIRMED"} in payload["diff"]
        assert {
            "op": "replace", "path": "/bookings/0/status", "was": "ON_HOLD", "value": "CONFIRMED"
        } in payload["diff"]  # fmt: skip
        clock.advance(minutes=31)  # past the order's first hold
        assert (await order_of(client, order["id"]))["status"] == "CONFIRMED"
        await sweep(bookable)
        assert await order_of(client, order["id"]) == after
        assert await updates(bookable, target) == []
        again = await client.post(
            f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(capabilities=CART)
        )
        assert again.json() == after


async def test_cancelling_the_only_booking_cancels_the_order(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="order_update")
        order = await create(client, item())
        (booking,) = order["bookings"]
        cancelled = await client.request(
            "DELETE", f"/octo/bookings/{booking['uuid']}", json={"reason": "plans changed"}, headers=auth()
        )
        assert cancelled.json()["status"] == "CANCELLED"
        after = await order_of(client, order["id"])
        assert after["status"] == "CANCELLED" and after["utcExpiresAt"] is None
        assert after["cancellation"] == {
            "refund": "FULL", "reason": "plans changed", "utcCancelledAt": "2026-06-01T08:00:00Z"
        }  # fmt: skip
        assert after["cancellable"] is False and after["confirmable"] is False
        (payload,) = await updates(bookable, target)
        assert payload["order"] == after
        assert {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "CANCELLED"} in payload["diff"]
        refused = await client.post("/octo/bookings", json={**item(), "orderId": order["id"]}, headers=auth())
        assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"  # a cancelled order takes no bookings


async def test_an_order_with_a_confirmed_booking_never_expires(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="order_update")
        before = await vacancies(client)
        order = await create(client, item(units=("adult", "adult")), item(units=("adult",)))
        first, _ = order["bookings"]
        await client.post(f"/octo/bookings/{first['uuid']}/confirm", json={"contact": GUEST}, headers=auth())
        mixed = await order_of(client, order["id"])
        # Still a hold: the rest of the order can be confirmed (or left to expire).
        assert mixed["status"] == "ON_HOLD" and mixed["utcExpiresAt"] == "2026-06-01T08:30:00Z"
        assert mixed["confirmable"] is True and mixed["utcConfirmedAt"] is None
        assert [b["status"] for b in mixed["bookings"]] == ["CONFIRMED", "ON_HOLD"]
        (payload,) = await updates(bookable, target)
        assert payload["order"] == mixed
        clock.advance(minutes=30)
        expired = await order_of(client, order["id"])
        assert expired["status"] == "CONFIRMED" and expired["utcExpiresAt"] is None
        assert expired["utcConfirmedAt"] == "2026-06-01T08:30:00Z"  # when its last hold ran out
        assert expired["cancellation"] is None
        assert [b["status"] for b in expired["bookings"]] == ["CONFIRMED", "EXPIRED"]
        assert await vacancies(client) == before - 2
        await sweep(bookable)
        assert await order_of(client, order["id"]) == expired
        (payload,) = await updates(bookable, target)
        assert payload["order"] == expired
        assert {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "CONFIRMED"} in payload["diff"]
        await sweep(bookable)
        assert await updates(bookable, target) == []


async def test_the_order_confirms_what_its_bookings_left(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    order = await create(client, item(), item("2026-06-03T10:00:00+01:00"))
    first, _ = order["bookings"]
    await client.post(f"/octo/bookings/{first['uuid']}/confirm", json={"contact": GUEST}, headers=auth())
    confirmed = await client.post(
        f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(capabilities=CART)
    )
    assert confirmed.json()["status"] == "CONFIRMED", confirmed.text
    assert [b["status"] for b in confirmed.json()["bookings"]] == ["CONFIRMED", "CONFIRMED"]
    assert confirmed.json() == await order_of(client, order["id"])
    # Cancelling one booking of several leaves the order to the others.
    other = await create(client, item(), item("2026-06-03T10:00:00+01:00"))
    await client.post(f"/octo/bookings/{other['bookings'][0]['uuid']}/cancel", headers=auth())
    left = await order_of(client, other["id"])
    assert left["status"] == "ON_HOLD" and left["confirmable"] is True and left["cancellable"] is True
    assert [b["status"] for b in left["bookings"]] == ["CANCELLED", "ON_HOLD"]


async def test_a_booking_hold_change_moves_the_order_hold(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="order_update")
        order = await create(client, item(), item("2026-06-03T10:00:00+01:00"))
        first, second = order["bookings"]
        clock.advance(minutes=10)
        extended = await client.post(
            f"/octo/bookings/{first['uuid']}/extend", json={"expirationMinutes": 60}, headers=auth()
        )
        assert extended.json()["utcExpiresAt"] == "2026-06-01T09:30:00Z"
        after = await order_of(client, order["id"])
        assert after["utcExpiresAt"] == "2026-06-01T09:30:00Z" and after["status"] == "ON_HOLD"
        assert [b["utcExpiresAt"] for b in after["bookings"]] == ["2026-06-01T09:30:00Z"] * 2
        (payload,) = await updates(bookable, target)
        assert {
            "op": "replace", "path": "/utcExpiresAt", "was": "2026-06-01T08:30:00Z", "value": "2026-06-01T09:30:00Z"
        } in payload["diff"]  # fmt: skip
        patched = await client.patch(
            f"/octo/bookings/{second['uuid']}",
            json={"expirationMinutes": 5, "notes": "by the window"},
            headers=auth(),
        )
        assert patched.json()["utcExpiresAt"] == "2026-06-01T08:15:00Z"
        after = await order_of(client, order["id"])
        assert after["utcExpiresAt"] == "2026-06-01T08:15:00Z"
        assert [b["utcExpiresAt"] for b in after["bookings"]] == ["2026-06-01T08:15:00Z"] * 2
        (payload,) = await updates(bookable, target)
        assert {
            "op": "replace",
            "path": "/bookings/1/notes",
            "was": None,
            "value": "by the window",
        } in payload["diff"]
        clock.advance(minutes=5)
        assert (await order_of(client, order["id"]))["status"] == "EXPIRED"


async def test_supplier_steps_move_the_order(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="order_update")
        kayak = await create(client, {**item(), **KAYAK})
        (paddle,) = kayak["bookings"]
        await client.post(
            f"/octo/bookings/{paddle['uuid']}/confirm", json={"contact": PADDLER}, headers=auth()
        )
        assert (await order_of(client, kayak["id"]))["status"] == "PENDING"
        accepted = await client.post(f"/admin/api/bookings/{paddle['id']}/accept", headers=ADMIN)
        assert accepted.json()["status"] == "CONFIRMED"
        assert (await order_of(client, kayak["id"]))["status"] == "CONFIRMED"
        redeemed = await client.post(f"/admin/api/bookings/{paddle['id']}/redeem", headers=ADMIN)
        assert redeemed.json()["status"] == "REDEEMED"
        done = await order_of(client, kayak["id"])
        assert done["status"] == "CONFIRMED" and done["cancellable"] is False
        statuses = [p["order"]["status"] for p in await updates(bookable, target)]
        assert statuses == ["PENDING", "CONFIRMED", "CONFIRMED"]
        assert (await updates(bookable, target)) == []

        refused = await create(client, {**item(), **KAYAK})
        (paddle,) = refused["bookings"]
        await client.post(
            f"/octo/bookings/{paddle['uuid']}/confirm", json={"contact": PADDLER}, headers=auth()
        )
        await client.post(
            f"/admin/api/bookings/{paddle['id']}/reject", json={"reason": "storm"}, headers=ADMIN
        )
        rejected = await order_of(client, refused["id"])
        assert rejected["status"] == "CANCELLED" and rejected["cancellation"]["reason"] == "storm"
        assert [p["order"]["status"] for p in await updates(bookable, target)] == ["PENDING", "CANCELLED"]

        tour = await create(client, item())
        (seat,) = tour["bookings"]
        await client.post(f"/octo/bookings/{seat['uuid']}/confirm", json={"contact": GUEST}, headers=auth())
        clock.advance(hours=2)  # past the 24-hour cancellation cutoff
        forced = await client.post(
            f"/admin/api/bookings/{seat['id']}/cancel",
            json={"force": True, "reason": "engine"},
            headers=ADMIN,
        )
        assert forced.json()["status"] == "CANCELLED"
        cancelled = await order_of(client, tour["id"])
        assert cancelled["status"] == "CANCELLED" and cancelled["cancellation"]["reason"] == "engine"
        assert [p["order"]["status"] for p in await updates(bookable, target)] == ["CONFIRMED", "CANCELLED"]
