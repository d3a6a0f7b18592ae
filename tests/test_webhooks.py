"""octo/webhooks end to end: real receivers on loopback, the real worker code driven step by
step with the test clock (no sleeping, no timing assertions), on the booking tests' own
catalogue (`tests.bookings_helpers.booking_catalog`)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from standardwebhooks.webhooks import Webhook as Verifier

from berth.container import Services
from berth.domain.catalog.document import catalog_to_yaml
from berth.domain.staff import COMMAND_LINE
from tests.bookings_helpers import SLOT, booking_products, confirm, reservation, reserve
from tests.builders import catalog
from tests.conftest import ADMIN, KEY_B, SECRET_A, Clock, auth
from tests.receivers import Received, receiver
from tests.test_catalog_import import MINIMAL


def verify(secret: str, received: Received) -> None:
    """Check a delivery's signature with the standardwebhooks library. (Its `verify` also
    rejects timestamps far from the real clock, and these tests run on a test clock.)"""
    timestamp = datetime.fromtimestamp(int(received.headers["webhook-timestamp"]), UTC)
    expected = Verifier(secret).sign(received.headers["webhook-id"], timestamp, received.body.decode())
    assert expected in received.headers["webhook-signature"].split()


async def drain(services: Services) -> None:
    """Run fan-out and delivery until nothing is due now."""
    for _ in range(20):
        if not await services.fanout.fan_out() + await services.delivery.deliver_due():
            return
    raise AssertionError("deliveries kept coming")


async def subscribe(client: httpx.AsyncClient, url: str, event: str = "booking_update", key: str = "demo-reseller-a",
                    capabilities: str | None = None, **fields: Any) -> dict[str, Any]:  # fmt: skip
    response = await client.post(
        "/octo/webhooks", json={"event": event, "url": url, **fields}, headers=auth(key, capabilities)
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_webhook_object_and_routes(client: httpx.AsyncClient, bookable: Services) -> None:
    created = await subscribe(
        client,
        "https://hooks.example/a",
        capabilities="octo/pricing, octo/unknown",
        capabilities_in_body=["x"],
    )
    assert created == {
        "id": created["id"], "event": "booking_update", "url": "https://hooks.example/a",
        "capabilities": ["octo/pricing"], "useContactLanguage": True, "headers": {}, "retryOnError": True,
    }  # fmt: skip
    order = await subscribe(client, "https://hooks.example/o", event="order.updated")
    assert order["event"] == "order_update" and order["capabilities"] == ["octo/cart"]
    patched = await client.patch(
        f"/octo/webhooks/{created['id']}",
        json={"retryOnError": False, "headers": {"X-Token": "t"}, "capabilities": ["octo/content"]},
        headers=auth(capabilities="octo/content"),
    )
    assert patched.json()["capabilities"] == ["octo/content"]
    assert patched.json()["retryOnError"] is False and patched.json()["headers"] == {"X-Token": "t"}
    other = await subscribe(client, "https://hooks.example/a", key=KEY_B)
    mine = (await client.get("/octo/webhooks", headers=auth())).json()
    assert {w["id"] for w in mine} == {created["id"], order["id"]}
    for method, path in (
        ("PATCH", f"/octo/webhooks/{other['id']}"),
        ("DELETE", f"/octo/webhooks/{other['id']}"),
    ):
        foreign = await client.request(method, path, json={"retryOnError": True}, headers=auth())
        unknown = await client.request(
            method, f"/octo/webhooks/{uuid.uuid4()}", json={"retryOnError": True}, headers=auth()
        )
        assert foreign.status_code == unknown.status_code == 400
        assert foreign.json()["error"] == unknown.json()["error"] == "BAD_REQUEST"
    deleted = await client.delete(f"/octo/webhooks/{order['id']}", headers=auth())
    assert deleted.json()["id"] == order["id"]
    by_url = await client.request(
        "DELETE", "/octo/webhooks", json={"url": "https://hooks.example/a"}, headers=auth()
    )
    assert [w["id"] for w in by_url.json()] == [created["id"]]
    assert (await client.get("/octo/webhooks", headers=auth())).json() == []
    assert [w["id"] for w in (await client.get("/octo/webhooks", headers=auth(KEY_B))).json()] == [
        other["id"]
    ]
    by_query = await client.delete(
        "/octo/webhooks", params={"url": "https://hooks.example/a"}, headers=auth(KEY_B)
    )
    assert len(by_query.json()) == 1


async def test_bad_webhooks_store_nothing(client: httpx.AsyncClient, bookable: Services) -> None:
    for body, message in (
        ({"url": "https://hooks.example/a"}, "event is required"),
        ({"event": "booking_update"}, "url is required"),
        ({"event": "everything", "url": "https://hooks.example/a"}, "event must be one of"),
        (
            {"event": "booking_update", "url": "ftp://hooks.example/a"},
            "url must be an absolute http or https URL",
        ),
        (
            {"event": "booking_update", "url": "https://hooks.example/a", "retryOnError": "maybe"},
            "retryOnError",
        ),
        (
            {"event": "booking_update", "url": "https://hooks.example/a", "headers": {"Bad Name": "x"}},
            "headers",
        ),
        *(
            (
                {"event": "booking_update", "url": "https://hooks.example/a", "headers": headers},
                "is not a valid header",
            )
            for headers in (
                {"X-Token": "a\x0bb"},
                {"X-Token": "a\x1bb"},
                {"X-Token": "a\x7f"},
                {"X-Token": "a\rBcc: x"},
                {"X-Token": "a\x1e"},
                {"X-Tök": "a"},
                {"X\x01Token": "a"},
                {"(Token)": "a"},
            )
        ),
    ):
        response = await client.post("/octo/webhooks", json=body, headers=auth())
        assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", body
        assert message in response.json()["errorMessage"], (body, response.json())
    assert (await client.get("/octo/webhooks", headers=auth())).json() == []


async def test_private_targets_are_refused_unless_allowed(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    bookable.settings.webhook_allow_private_targets = False
    for url in (
        "http://127.0.0.1:9/x",
        "http://10.1.2.3/x",
        "http://[::1]/x",
        "http://169.254.169.254/latest",
        "http://localhost/x",
    ):
        response = await client.post(
            "/octo/webhooks", json={"event": "booking_update", "url": url}, headers=auth()
        )
        assert response.json()["error"] == "BAD_REQUEST", url
        assert "non-public address" in response.json()["errorMessage"], url


async def test_booking_update_end_to_end(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver() as target:
        hook = await subscribe(
            client, target.url, capabilities="octo/pricing", headers={"X-Shared": "s3cret"}
        )
        booking = await reserve(client)
        await drain(bookable)
        assert target.requests == []  # a reservation is the reseller's own answer, not an update
        await confirm(client, booking["uuid"])
        await drain(bookable)
        assert len(target.requests) == 1
        received = target.requests[0]
        payload = received.json
        assert payload["event"] == "booking_update"
        assert payload["webhook"] == hook
        assert {"id", "name", "reference", "website"} <= payload["supplier"].keys()
        assert (
            payload["supplier"]["reference"] == "TEST"
            and payload["supplier"]["website"] == "https://supplier.test"
        )
        assert payload["booking"]["status"] == "CONFIRMED" and "pricing" in payload["booking"]
        fetched = (
            await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities="octo/pricing"))
        ).json()
        assert payload["booking"] == fetched
        assert {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "CONFIRMED"} in payload["diff"]
        assert received.headers["x-shared"] == "s3cret"
        assert received.headers["content-type"] == "application/json"
        assert received.headers["webhook-id"].startswith("msg_")
        verify(SECRET_A, received)


async def test_capability_fields_follow_the_webhook(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver() as plain, receiver() as rich:
        await subscribe(client, plain.url)
        await subscribe(client, rich.url, capabilities="octo/content, octo/pricing")
        booking = await reserve(client, reservation(contact={"locales": ["de-DE"]}))
        await client.post(f"/octo/bookings/{booking['uuid']}/cancel", headers=auth())
        await drain(bookable)
        bare, full = plain.payloads()[0], rich.payloads()[0]
        assert "pricing" not in bare["booking"] and "title" not in bare["booking"]["product"]
        assert "shortDescription" not in bare["supplier"]
        assert "pricing" in full["booking"] and full["supplier"]["shortDescription"]
        assert (
            full["booking"]["product"]["title"] == "Sightseeing-Bootsfahrt auf der Themse"
        )  # useContactLanguage


async def test_availability_update_reaches_every_connection(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async with receiver() as a, receiver() as b:
        await subscribe(client, a.url, event="availability_update")
        await subscribe(client, b.url, event="availability_update", key=KEY_B)
        await reserve(client)
        await drain(bookable)
        for target in (a, b):
            (payload,) = target.payloads()
            assert payload["event"] == "availability_update"
            assert (payload["productId"], payload["optionId"]) == ("thames-sightseeing", "DEFAULT")
            assert payload["availability"]["id"] == SLOT and payload["availability"]["vacancies"] == 18
            assert "diff" not in payload and "hasResources" not in payload["availability"]


async def test_expiry_announces_booking_and_availability(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver() as bookings_target, receiver() as slots_target:
        await subscribe(client, bookings_target.url)
        await subscribe(client, slots_target.url, event="availability_update")
        await reserve(client, reservation(expirationMinutes=1))
        await drain(bookable)
        clock.advance(minutes=2)
        assert await bookable.expiry.expire_due() == 1
        await drain(bookable)
        (expired,) = bookings_target.payloads()
        assert expired["booking"]["status"] == "EXPIRED"
        assert {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "EXPIRED"} in expired["diff"]
        assert [p["availability"]["vacancies"] for p in slots_target.payloads()] == [18, 20]


async def test_product_update_with_diff(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, event="product_update", capabilities="octo/content")
        products = booking_products()
        (museum,) = [p for p in products if p["id"] == "tower-of-stories"]
        museum["internalName"] = "Tower of Tales"
        await bookable.catalog.import_text(catalog_to_yaml(catalog(*products)), actor=COMMAND_LINE)
        await drain(bookable)
        (payload,) = target.payloads()
        assert (
            payload["product"]["id"] == "tower-of-stories"
            and payload["product"]["internalName"] == "Tower of Tales"
        )
        assert payload["diff"] == [
            {
                "op": "replace",
                "path": "/internalName",
                "was": "Tower Of Stories",
                "value": "Tower of Tales",
            }
        ]


async def test_retries_until_the_receiver_recovers(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver(500, 503) as target:
        target.extra_headers["Retry-After"] = "90"
        hook = await subscribe(client, target.url)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await drain(bookable)
        assert len(target.requests) == 1
        clock.advance(seconds=50)
        await drain(bookable)
        assert (
            len(target.requests) == 1
        )  # not due yet: at least 90 s (Retry-After), at most 60 s x 1.2 otherwise
        clock.advance(seconds=45)
        await drain(bookable)
        assert len(target.requests) == 2
        clock.advance(seconds=150)
        await drain(bookable)
        assert len(target.requests) == 3
        assert len({r.headers["webhook-id"] for r in target.requests}) == 1  # the same message every time
        deliveries = (await client.get(f"/admin/api/webhooks/{hook['id']}/deliveries", headers=ADMIN)).json()
        (delivery,) = deliveries["deliveries"]
        assert delivery["status"] == "delivered" and delivery["attempts"] == 3
        detail = (await client.get(f"/admin/api/deliveries/{delivery['id']}", headers=ADMIN)).json()
        assert [a["statusCode"] for a in detail["attemptLog"]] == [500, 503, 200]
        assert detail["attemptLog"][0]["responseExcerpt"] == "answered 500"
        assert detail["payload"]["booking"]["id"] == booking["id"]


async def test_retry_on_error_false_and_giving_up(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver(default_status=500) as once, receiver(default_status=500) as always:
        await subscribe(client, once.url, retryOnError=False)
        await subscribe(client, always.url)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        for _ in range(6):
            await drain(bookable)
            clock.advance(seconds=400)
        assert len(once.requests) == 1
        assert len(always.requests) == 4  # the first try and the three retries of the test schedule
        metrics = (await client.get("/metrics")).text
        assert 'berth_deliveries{kind="webhook",status="failed"} 2' in metrics


async def test_gone_disables_the_webhook(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver(410) as target:
        hook = await subscribe(client, target.url)
        first = await reserve(client)
        await confirm(client, first["uuid"])
        await drain(bookable)
        second = await reserve(client)
        await confirm(client, second["uuid"])
        await drain(bookable)
        assert len(target.requests) == 1
        listed = (await client.get("/admin/api/webhooks", headers=ADMIN)).json()
        assert [w["disabledReason"] for w in listed if w["id"] == hook["id"]] == [
            "the receiver answered 410 Gone"
        ]


async def test_order_per_booking_holds_under_retries(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    async with receiver(default_status=500) as target:
        await subscribe(client, target.url)
        one = await reserve(client)
        two = await reserve(client)
        await confirm(client, one["uuid"])
        await client.patch(f"/octo/bookings/{one['uuid']}", json={"notes": "second change"}, headers=auth())
        await confirm(client, two["uuid"])
        await drain(bookable)
        # one's first message failed, so its second waits behind it; two's message is independent.
        sent = sorted((p["booking"]["id"], p["booking"]["notes"]) for p in target.payloads())
        assert sent == sorted([(one["id"], None), (two["id"], None)])
        target.default_status = 200
        clock.advance(seconds=100)
        await drain(bookable)
        later = [
            (p["booking"]["id"], p["booking"]["notes"])
            for p in target.payloads()[2:]
            if p["booking"]["id"] == one["id"]
        ]
        assert later == [(one["id"], None), (one["id"], "second change")]


async def test_redelivery_and_rotation(client: httpx.AsyncClient, bookable: Services) -> None:
    async with receiver() as target:
        hook = await subscribe(client, target.url)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await drain(bookable)
        delivery = (await client.get(f"/admin/api/webhooks/{hook['id']}/deliveries", headers=ADMIN)).json()[
            "deliveries"
        ][0]
        connection = next(
            c
            for c in (await client.get("/admin/api/connections", headers=ADMIN)).json()
            if c["name"] == "Reseller A"
        )
        rotated = (
            await client.post(f"/admin/api/connections/{connection['id']}/rotate-secret", headers=ADMIN)
        ).json()
        requeued = await client.post(f"/admin/api/deliveries/{delivery['id']}/redeliver", headers=ADMIN)
        assert requeued.json()["status"] == "pending"
        await drain(bookable)
        assert len(target.requests) == 2
        again = target.requests[1]
        assert again.headers["webhook-id"] == delivery["id"]
        assert (
            len(again.headers["webhook-signature"].split()) == 2
        )  # new and old secret during the grace period
        verify(rotated["signingSecret"], again)
        verify(SECRET_A, again)
        since = await client.post(
            f"/admin/api/webhooks/{hook['id']}/redeliver",
            params={"since": "2026-01-01T00:00:00Z"},
            headers=ADMIN,
        )
        assert since.json() == {"requeued": 1}
        assert (await client.get("/admin/api/deliveries/nope", headers=ADMIN)).status_code == 404


async def test_changes_and_deliveries_commit_together(client: httpx.AsyncClient, bookable: Services) -> None:
    """A change refused halfway leaves no delivery behind (the outbox shares its transaction)."""
    async with receiver() as target:
        await subscribe(client, target.url, event="availability_update")
        await reserve(client, reservation(("adult",) * 12))
        refused = await client.post("/octo/bookings", json=reservation(("adult",) * 9), headers=auth())
        assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
        await drain(bookable)
        assert [p["availability"]["vacancies"] for p in target.payloads()] == [8]


async def test_catalogue_import_without_webhooks_is_quiet(services: Services) -> None:
    await services.catalog.import_text(MINIMAL, actor=COMMAND_LINE)
    assert await services.fanout.fan_out() == 0
