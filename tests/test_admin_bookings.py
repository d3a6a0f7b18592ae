"""The supplier's booking API: search across connections, history, terminal states."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from berth.background import sweep_expired_holds
from berth.container import Services
from tests.bookings_helpers import GUEST, confirm, reservation, reserve
from tests.conftest import ADMIN, KEY_B, Clock, auth


async def test_search_across_connections(client: httpx.AsyncClient, bookable: Services) -> None:
    a = await reserve(client, reservation(resellerReference="ALPHA"))
    b = await reserve(
        client, reservation(resellerReference="BETA", availability_id="2026-06-03T10:00:00+01:00"), key=KEY_B
    )
    await confirm(client, b["uuid"], key=KEY_B)

    async def found(**params: str | int) -> Any:
        response = await client.get("/admin/api/bookings", params=params, headers=ADMIN)
        assert response.status_code == 200, response.text
        return response.json()

    everything = await found(productId="thames-sightseeing")
    assert everything["total"] == 2
    by_reference = await found(reference="BETA")
    assert [x["id"] for x in by_reference["bookings"]] == [b["id"]]
    by_supplier_reference = await found(reference=a["supplierReference"].lower())
    assert [x["id"] for x in by_supplier_reference["bookings"]] == [a["id"]]
    confirmed = await found(status="CONFIRMED", productId="thames-sightseeing")
    assert [x["id"] for x in confirmed["bookings"]] == [b["id"]]
    assert (await found(localDate="2026-06-02", productId="thames-sightseeing"))["total"] == 1
    page = await found(productId="thames-sightseeing", limit=1, offset=1)
    assert page["total"] == 2 and len(page["bookings"]) == 1
    staff = (await found(reference="ALPHA"))["bookings"][0]
    assert staff["connectionId"] != (await found(reference="BETA"))["bookings"][0]["connectionId"]
    assert "pricing" in staff and "title" in staff["product"]  # staff see every capability's fields
    bad = await client.get("/admin/api/bookings", params={"limit": 0}, headers=ADMIN)
    assert bad.json()["error"] == "BAD_REQUEST"
    missing = await client.get("/admin/api/bookings/nope", headers=ADMIN)
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"


async def test_history_records_every_step(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    await client.patch(f"/octo/bookings/{booking['uuid']}", json={"notes": "hi"}, headers=auth())
    await client.post(f"/octo/bookings/{booking['uuid']}/extend", headers=auth())
    await confirm(client, booking["uuid"])
    await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={"reason": "ill"}, headers=auth())
    detail = (await client.get(f"/admin/api/bookings/{booking['id']}", headers=ADMIN)).json()
    assert [(e["kind"], e["actor"], e["detail"]["status"]) for e in detail["history"]] == [
        ("reserved", "reseller", "ON_HOLD"),
        ("updated", "reseller", "ON_HOLD"),
        ("extended", "reseller", "ON_HOLD"),
        ("confirmed", "reseller", "CONFIRMED"),
        ("cancelled", "reseller", "CANCELLED"),
    ]
    assert detail["history"][1]["detail"]["fields"] == ["notes"]


async def test_pending_bookings_can_be_cancelled(client: httpx.AsyncClient, bookable: Services) -> None:
    body = {
        **reservation(),
        "productId": "sunset-kayak",
        "availabilityId": "2026-06-06T18:00:00+01:00",
        "unitItems": [{"unitId": "paddler"}],
    }
    held = await reserve(client, body)
    contact = {**GUEST, "phoneNumber": "+447700900001"}
    pending = (
        await client.post(f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=auth())
    ).json()
    assert pending["status"] == "PENDING" and pending["cancellable"] is True
    cancelled = (await client.post(f"/octo/bookings/{held['uuid']}/cancel", headers=auth())).json()
    assert cancelled["status"] == "CANCELLED"


async def test_terminal_states_refuse_changes(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    await client.post(f"/octo/bookings/{booking['uuid']}/cancel", headers=auth())
    for method, path, body in (
        ("PATCH", "", {"notes": "x"}),
        ("POST", "/confirm", {"contact": GUEST}),
        ("POST", "/extend", {}),
    ):
        response = await client.request(
            method, f"/octo/bookings/{booking['uuid']}{path}", json=body, headers=auth()
        )
        assert response.json()["error"] == "UNPROCESSABLE_ENTITY", path
        assert "CANCELLED" in response.json()["errorMessage"]


async def test_sweeper_stores_expiry(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    booking = await reserve(client, reservation(expirationMinutes=1))
    clock.advance(minutes=2)
    stop = asyncio.Event()
    bookable.settings.expiry_sweep_seconds = 0.05
    task = asyncio.create_task(sweep_expired_holds(bookable, stop))
    for _ in range(100):
        detail = (await client.get(f"/admin/api/bookings/{booking['id']}", headers=ADMIN)).json()
        if [e["kind"] for e in detail["history"]] == ["reserved", "expired"]:
            break
        await asyncio.sleep(0.05)
    stop.set()
    await task
    assert [e["kind"] for e in detail["history"]] == ["reserved", "expired"]
    assert await bookable.expiry.expire_due() == 0
