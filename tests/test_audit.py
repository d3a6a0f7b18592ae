"""The audit trail: an entry for each class of staff action (bookings, mappings, connections,
webhooks, the catalogue, staff accounts) naming who, when, what and the target, written in the
action's transaction (a refused or failed action leaves none); GET /admin/api/audit filtered by
actor, target, action and time, a page at a time."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from berth.container import Services
from berth.domain.staff import COMMAND_LINE, Role
from tests.conftest import ADMIN, START, Clock
from tests.mappings_helpers import add_listings
from tests.receivers import receiver
from tests.test_staff_roles import confirmed, pending, pending_mapping, staff_token
from tests.test_webhooks import drain, subscribe


async def audit(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/admin/api/audit", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def summary(body: dict[str, Any]) -> list[tuple[str, str, str, str | None]]:
    """(actor, action, target kind, target label), oldest first."""
    return [
        (e["actor"], e["action"], e["target"]["kind"], e["target"]["label"])
        for e in reversed(body["entries"])
    ]


async def test_every_class_of_staff_action_is_recorded(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    await add_listings(bookable)
    operator = await staff_token(bookable, "olga@example.com", Role.OPERATOR)
    admin = await staff_token(bookable, "adam@example.com", Role.ADMIN)
    first, second, third = await confirmed(client, 2), await confirmed(client, 3), await confirmed(client, 4)
    waiting, other = await pending(client), await pending(client)
    mapping = await pending_mapping(client, "RA-MUSEUM")
    async with receiver() as target:
        hook = await subscribe(client, target.url)
        await drain(bookable)
        clock.advance(minutes=5)
        assert (
            await client.post(f"/admin/api/bookings/{first['id']}/redeem", headers=operator)
        ).status_code == 200
        assert (
            await client.post(f"/admin/api/bookings/{waiting['id']}/accept", headers=operator)
        ).status_code == 200
        rejected = await client.post(f"/admin/api/bookings/{other['id']}/reject", json={"reason": "Too windy"}, headers=operator)  # fmt: skip
        assert rejected.status_code == 200
        cancel = {"reason": "Storm", "force": True}
        assert (await client.post(f"/admin/api/bookings/{second['id']}/cancel", json=cancel, headers=operator)).status_code == 200  # fmt: skip
        completed = await client.patch(f"/admin/api/mappings/{mapping}", json={"productId": "tower-of-stories"}, headers=operator)  # fmt: skip
        assert completed.status_code == 200
        clock.advance(minutes=5)
        created = (
            await client.post("/admin/api/connections", json={"name": "Harbour Deals"}, headers=admin)
        ).json()
        connection = created["connection"]["id"]
        assert (
            await client.post(f"/admin/api/connections/{connection}/rotate-secret", headers=admin)
        ).status_code == 200
        assert (
            await client.post(f"/admin/api/connections/{connection}/revoke", headers=admin)
        ).status_code == 200
        await drain(bookable)
        deliveries = (await client.get(f"/admin/api/webhooks/{hook['id']}/deliveries", headers=ADMIN)).json()
        delivery = deliveries["deliveries"][0]["id"]
        assert (
            await client.post(f"/admin/api/deliveries/{delivery}/redeliver", headers=admin)
        ).status_code == 200
        since = (START - timedelta(days=1)).isoformat()
        again = await client.post(
            f"/admin/api/webhooks/{hook['id']}/redeliver", params={"since": since}, headers=admin
        )
        assert again.status_code == 200
        catalog = (await client.get("/admin/api/catalog", headers=admin)).text
        assert (
            await client.put("/admin/api/catalog", content=catalog.encode(), headers=admin)
        ).status_code == 200
    await bookable.staff.disable("olga@example.com", actor=COMMAND_LINE)

    everything = await audit(client, limit=500)
    staff_made = [
        row for row in summary(everything) if row[1] != "mapping.complete" or row[0] != "command line"
    ]
    assert staff_made == [
        ("command line", "staff.create", "staff", "olga@example.com"),
        ("command line", "staff.token", "staff", "olga@example.com"),
        ("command line", "staff.create", "staff", "adam@example.com"),
        ("command line", "staff.token", "staff", "adam@example.com"),
        ("olga@example.com", "booking.redeem", "booking", first["supplierReference"]),
        ("olga@example.com", "booking.accept", "booking", waiting["supplierReference"]),
        ("olga@example.com", "booking.reject", "booking", other["supplierReference"]),
        ("olga@example.com", "booking.cancel", "booking", second["supplierReference"]),
        ("olga@example.com", "mapping.complete", "mapping", "RA-MUSEUM"),
        ("adam@example.com", "connection.create", "connection", "Harbour Deals"),
        ("adam@example.com", "connection.rotate_secret", "connection", "Harbour Deals"),
        ("adam@example.com", "connection.revoke", "connection", "Harbour Deals"),
        ("adam@example.com", "delivery.redeliver", "delivery", f"booking_update to {target.url}"),
        ("adam@example.com", "webhook.redeliver", "webhook", target.url),
        ("adam@example.com", "catalog.import", "catalog_version", "catalogue version 2"),
        ("command line", "staff.disable", "staff", "olga@example.com"),
    ]
    by_action = {e["action"]: e for e in reversed(everything["entries"])}  # the newest of each
    assert by_action["booking.reject"]["details"] == {
        "from": "PENDING",
        "to": "REJECTED",
        "reason": "Too windy",
    }
    assert by_action["booking.cancel"]["details"] == {
        "from": "CONFIRMED", "to": "CANCELLED", "reason": "Storm", "force": True,
    }  # fmt: skip
    assert by_action["mapping.complete"]["details"]["productId"] == "tower-of-stories"
    assert by_action["catalog.import"]["details"]["products"] >= 1
    assert by_action["webhook.redeliver"]["details"]["requeued"] >= 1
    redeem = by_action["booking.redeem"]
    assert redeem["at"] == "2026-06-01T08:05:00Z" and redeem["actorRole"] == "operator"
    assert redeem["target"]["id"] == first["id"] and redeem["actorId"] is not None
    assert third["id"] not in {e["target"]["id"] for e in everything["entries"]}

    # Filters: who, what it was done to, the action, time; newest first, a page at a time.
    olga = await audit(client, actor="OLGA@example.com")
    assert olga["total"] == 5 and {e["actor"] for e in olga["entries"]} == {"olga@example.com"}
    on_booking = await audit(client, target=second["supplierReference"])
    assert [e["action"] for e in on_booking["entries"]] == ["booking.cancel"]
    assert (await audit(client, target=second["id"]))["total"] == 1
    assert (await audit(client, action="connection.revoke"))["total"] == 1
    assert (await audit(client, targetKind="staff"))["total"] == 5
    window = await audit(client, since="2026-06-01T08:04:00Z", until="2026-06-01T08:06:00Z")
    assert {e["action"] for e in window["entries"]} == {
        "booking.redeem", "booking.accept", "booking.reject", "booking.cancel", "mapping.complete",
    }  # fmt: skip
    assert (await audit(client, since="2026-06-01T08:04:00", until="2026-06-01T08:06:00")) == window  # UTC
    page = await audit(client, limit=2, offset=1)
    assert page["total"] == everything["total"] and page["limit"] == 2 and page["offset"] == 1
    assert [e["id"] for e in page["entries"]] == [e["id"] for e in everything["entries"][1:3]]


async def test_a_refused_or_failed_action_leaves_no_entry(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    operator = await staff_token(bookable, "olga@example.com", Role.OPERATOR)
    waiting = await pending(client)
    before = (await audit(client))["total"]
    # Redeeming a PENDING booking fails inside the transaction: no entry survives it.
    failed = await client.post(f"/admin/api/bookings/{waiting['id']}/redeem", headers=operator)
    assert failed.json()["error"] == "UNPROCESSABLE_ENTITY"
    refused = await client.post("/admin/api/connections", json={"name": "Nope"}, headers=operator)
    assert refused.status_code == 403
    missing = await client.post("/admin/api/bookings/nope/accept", headers=operator)
    assert missing.status_code == 404
    assert (await audit(client))["total"] == before


async def test_the_audit_filters_are_checked(client: httpx.AsyncClient, bookable: Services) -> None:
    for params, field in (
        ({"since": "yesterday"}, "since"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
    ):
        response = await client.get("/admin/api/audit", params=params, headers=ADMIN)
        assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", params
        assert field in response.json()["errorMessage"]
    assert (await client.get("/admin/api/audit")).json()["error"] == "UNAUTHORIZED"
