"""The booking lifecycle through the OCTO routes: every transition of OCTO.md §5.1, the
fields each status must carry, and the bad inputs of §2.4, on the catalogue of
`tests.bookings_helpers.booking_catalog` (not the demo). Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from berth.container import Services
from berth.domain.staff import COMMAND_LINE
from berth.store.tables import bookings
from tests.bookings_helpers import GUEST, SLOT, confirm, reservation, reserve, vacancies
from tests.conftest import ADMIN, KEY_B, Clock, auth


async def count_bookings(services: Services) -> int:
    async with services.database.transaction(write=False) as conn:
        return int(await conn.scalar(select(func.count()).select_from(bookings)) or 0)


async def test_reserve_holds_places(client: httpx.AsyncClient, bookable: Services) -> None:
    body = reservation(("adult", "child"), notes="Window seats please", resellerReference="RES-1")
    booking = await reserve(client, body)
    assert booking["status"] == "ON_HOLD"
    assert booking["uuid"] == body["uuid"]
    assert booking["utcExpiresAt"] == "2026-06-01T08:30:00Z"
    assert booking["utcCreatedAt"] == "2026-06-01T08:00:00Z"
    assert booking["utcConfirmedAt"] is None and booking["cancellation"] is None
    assert booking["utcRedeemedAt"] is None
    assert booking["notes"] == "Window seats please" and booking["resellerReference"] == "RES-1"
    assert booking["availabilityId"] == SLOT and booking["availability"]["id"] == SLOT
    assert booking["availability"]["vacancies"] == 18
    assert booking["freesale"] is False and booking["testMode"] is False
    assert booking["cancellable"] is True
    assert booking["product"]["id"] == "thames-sightseeing" and booking["option"]["id"] == "DEFAULT"
    assert [item["unitId"] for item in booking["unitItems"]] == ["adult", "child"]
    assert all(item["status"] == "ON_HOLD" for item in booking["unitItems"])
    assert booking["voucher"] == {"redemptionMethod": "DIGITAL", "utcRedeemedAt": None, "deliveryOptions": []}
    assert booking["unitItems"][0]["ticket"]["deliveryOptions"] == []
    assert len(booking["supplierReference"]) == 8
    assert await vacancies(client) == 18


async def test_confirm_issues_tickets(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    response = await confirm(client, booking["uuid"], resellerReference="RES-9")
    assert response.status_code == 200
    confirmed = response.json()
    assert confirmed["status"] == "CONFIRMED"
    assert confirmed["utcConfirmedAt"] == "2026-06-01T08:00:00Z"
    assert confirmed["utcExpiresAt"] is None and confirmed["cancellation"] is None
    assert confirmed["resellerReference"] == "RES-9"
    assert (
        confirmed["contact"]["firstName"] == "Ada"
        and confirmed["contact"]["emailAddress"] == "ada@example.com"
    )
    assert confirmed["contact"]["fullName"] == "Ada Lovelace"
    ticket = confirmed["unitItems"][0]["ticket"]
    assert ticket["deliveryOptions"][0]["deliveryFormat"] == "QRCODE"
    assert ticket["deliveryOptions"][0]["deliveryValue"] == confirmed["unitItems"][0]["supplierReference"]
    assert ticket["deliveryOptions"][1] == {
        "deliveryFormat": "AZTECCODE",
        "deliveryValue": ticket["deliveryOptions"][0]["deliveryValue"],
    }
    assert confirmed["voucher"]["deliveryOptions"][0]["deliveryValue"] == confirmed["supplierReference"]
    codes = {i["supplierReference"] for i in confirmed["unitItems"]}
    assert len(codes) == 2
    again = await confirm(client, booking["uuid"], resellerReference="CHANGED")
    assert again.json() == confirmed
    assert await vacancies(client) == 18


async def test_confirm_checks_required_contact_fields(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    response = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm", json={"contact": {"firstName": "Ada"}}, headers=auth()
    )
    assert response.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Required contact fields are missing: contact.lastName, contact.emailAddress",
    }
    missing = await client.post(f"/octo/bookings/{booking['uuid']}/confirm", json={}, headers=auth())
    assert missing.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Required contact fields are missing: contact.firstName, contact.lastName, "
        "contact.emailAddress",
    }
    assert (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()[
        "status"
    ] == "ON_HOLD"


async def test_confirm_can_replace_unit_items(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    keep = booking["unitItems"][0]
    items = [{"unitId": "adult", "uuid": keep["uuid"]}, {"unitId": "child"}, {"unitId": "child"}]
    confirmed = (await confirm(client, booking["uuid"], unitItems=items)).json()
    assert [i["unitId"] for i in confirmed["unitItems"]] == ["adult", "child", "child"]
    assert confirmed["unitItems"][0]["uuid"] == keep["uuid"]
    assert confirmed["unitItems"][0]["supplierReference"] == keep["supplierReference"]
    assert await vacancies(client) == 17
    wrong = await confirm(client, (await reserve(client))["uuid"], unitItems=[{"unitId": "pet"}])
    assert wrong.json()["error"] == "INVALID_UNIT_ID" and wrong.json()["unitId"] == "pet"


async def test_pending_then_accepted_or_rejected(client: httpx.AsyncClient, bookable: Services) -> None:
    kayak = {"productId": "sunset-kayak", "optionId": "DEFAULT"}
    slot = "2026-06-06T18:00:00+01:00"
    contact = {**GUEST, "phoneNumber": "+447700900000"}
    bookings_made = []
    for _ in range(2):
        body = {
            "uuid": str(uuid.uuid4()),
            **kayak,
            "availabilityId": slot,
            "unitItems": [{"unitId": "paddler"}] * 3,
        }
        held = await reserve(client, body)
        pending = (
            await client.post(
                f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=auth()
            )
        ).json()
        assert (
            pending["status"] == "PENDING"
            and pending["utcConfirmedAt"] is None
            and pending["utcExpiresAt"] is None
        )
        assert pending["voucher"]["deliveryOptions"] == []
        bookings_made.append(pending)
    assert await vacancies(client, slot, kayak) == 0
    accepted = (
        await client.post(f"/admin/api/bookings/{bookings_made[0]['id']}/accept", headers=ADMIN)
    ).json()
    assert accepted["status"] == "CONFIRMED" and accepted["utcConfirmedAt"] == "2026-06-01T08:00:00Z"
    assert accepted["voucher"]["deliveryOptions"] == [
        {"deliveryFormat": "CODE128", "deliveryValue": accepted["supplierReference"]}
    ]
    rejected = await client.post(
        f"/admin/api/bookings/{bookings_made[1]['id']}/reject",
        json={"reason": "Storm warning"},
        headers=ADMIN,
    )
    assert rejected.json()["status"] == "REJECTED" and rejected.json()["cancellable"] is False
    assert await vacancies(client, slot, kayak) == 3
    again = await client.post(f"/admin/api/bookings/{bookings_made[1]['id']}/accept", headers=ADMIN)
    assert again.json()["error"] == "UNPROCESSABLE_ENTITY"


async def test_extend(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    booking = await reserve(client)
    clock.advance(minutes=10)
    extended = await client.post(
        f"/octo/bookings/{booking['uuid']}/extend", json={"expirationMinutes": 20}, headers=auth()
    )
    assert extended.json()["utcExpiresAt"] == "2026-06-01T08:50:00Z"
    assert extended.json()["status"] == "ON_HOLD"
    no_body = await client.post(f"/octo/bookings/{booking['uuid']}/extend", headers=auth())
    assert no_body.json()["utcExpiresAt"] == "2026-06-01T09:20:00Z"
    await confirm(client, booking["uuid"])
    refused = await client.post(f"/octo/bookings/{booking['uuid']}/extend", json={}, headers=auth())
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"


async def test_cancel_held_and_confirmed(client: httpx.AsyncClient, bookable: Services) -> None:
    held = await reserve(client)
    cancelled = (
        await client.post(
            f"/octo/bookings/{held['uuid']}/cancel", json={"reason": "Changed plans"}, headers=auth()
        )
    ).json()
    assert cancelled["status"] == "CANCELLED"
    assert cancelled["cancellation"] == {
        "refund": "FULL",
        "reason": "Changed plans",
        "utcCancelledAt": "2026-06-01T08:00:00Z",
    }
    assert cancelled["utcExpiresAt"] is None and cancelled["cancellable"] is False
    assert all(item["status"] == "CANCELLED" for item in cancelled["unitItems"])
    again = await client.post(f"/octo/bookings/{held['uuid']}/cancel", headers=auth())
    assert again.json() == cancelled
    confirmed = await reserve(client)
    await confirm(client, confirmed["uuid"])
    assert await vacancies(client) == 18
    deleted = await client.delete(f"/octo/bookings/{confirmed['uuid']}", headers=auth())
    assert (
        deleted.json()["status"] == "CANCELLED" and deleted.json()["utcConfirmedAt"] == "2026-06-01T08:00:00Z"
    )
    assert await vacancies(client) == 20
    confirm_cancelled = await confirm(client, held["uuid"])
    assert confirm_cancelled.json()["error"] == "UNPROCESSABLE_ENTITY"


async def test_cutoffs(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    booking = await reserve(client)
    await confirm(client, booking["uuid"])
    clock.advance(hours=2)  # 11:00 London on 1 June: less than 24 h before the 2 June 10:00 departure
    fetched = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert fetched["cancellable"] is False
    response = await client.post(f"/octo/bookings/{booking['uuid']}/cancel", headers=auth())
    assert response.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": f"Booking '{booking['uuid']}' can no longer be cancelled: the cutoff was 2026-06-01T09:00:00Z",
    }
    patch = await client.patch(f"/octo/bookings/{booking['uuid']}", json={"notes": "late"}, headers=auth())
    assert patch.json()["error"] == "UNPROCESSABLE_ENTITY"
    forced = await client.post(
        f"/admin/api/bookings/{fetched['id']}/cancel", json={"force": True}, headers=ADMIN
    )
    assert forced.json()["status"] == "CANCELLED"
    # The sales cutoff: 15 minutes before departure nothing more can be booked or confirmed.
    held = await reserve(
        client, reservation(availability_id="2026-06-01T12:00:00+01:00", expirationMinutes=120)
    )
    clock.advance(minutes=50)  # 11:50 London; the 12:00 departure closed for sale at 11:45
    assert (await confirm(client, held["uuid"])).json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Availability 2026-06-01T12:00:00+01:00 closed for sale at 2026-06-01T10:45:00Z",
    }
    late = await client.post(
        "/octo/bookings", json=reservation(availability_id="2026-06-01T12:00:00+01:00"), headers=auth()
    )
    assert late.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Availability 2026-06-01T12:00:00+01:00 is past its sales cutoff",
    }


async def test_expiry(client: httpx.AsyncClient, bookable: Services, clock: Clock) -> None:
    booking = await reserve(client, reservation(expirationMinutes=5))
    assert booking["utcExpiresAt"] == "2026-06-01T08:05:00Z"
    clock.advance(minutes=5)
    expired = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert expired["status"] == "EXPIRED"
    assert expired["utcExpiresAt"] == "2026-06-01T08:05:00Z"
    assert expired["cancellation"] == {
        "refund": "FULL",
        "reason": None,
        "utcCancelledAt": "2026-06-01T08:05:00Z",
    }
    assert expired["cancellable"] is False
    assert await vacancies(client) == 20
    response = await confirm(client, booking["uuid"])
    assert response.json()["error"] == "INVALID_BOOKING_UUID" and response.json()["uuid"] == booking["uuid"]
    assert (await client.post(f"/octo/bookings/{booking['uuid']}/extend", headers=auth())).json()[
        "error"
    ] == "UNPROCESSABLE_ENTITY"
    assert await bookable.expiry.expire_due() == 1
    assert await bookable.expiry.expire_due() == 0
    detail = (await client.get(f"/admin/api/bookings/{expired['id']}", headers=ADMIN)).json()
    assert detail["booking"]["status"] == "EXPIRED"
    assert [event["kind"] for event in detail["history"]] == ["reserved", "expired"]


async def test_expiration_minutes_default_and_cap(client: httpx.AsyncClient, bookable: Services) -> None:
    long = await reserve(client, reservation(expirationMinutes=100000))
    assert long["utcExpiresAt"] == "2026-06-02T08:00:00Z"
    bad = await client.post("/octo/bookings", json=reservation(expirationMinutes=0), headers=auth())
    assert bad.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "expirationMinutes must be at least 1; 0 given",
    }


async def test_redeem(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    held = await client.post(f"/admin/api/bookings/{booking['id']}/redeem", headers=ADMIN)
    assert held.json()["error"] == "UNPROCESSABLE_ENTITY"
    await confirm(client, booking["uuid"])
    redeemed = (await client.post(f"/admin/api/bookings/{booking['id']}/redeem", headers=ADMIN)).json()
    assert redeemed["status"] == "REDEEMED" and redeemed["utcRedeemedAt"] == "2026-06-01T08:00:00Z"
    seen = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert seen["cancellable"] is False and seen["unitItems"][0]["utcRedeemedAt"] == "2026-06-01T08:00:00Z"
    assert (await client.post(f"/octo/bookings/{booking['uuid']}/cancel", headers=auth())).json()[
        "error"
    ] == "UNPROCESSABLE_ENTITY"
    assert await vacancies(client) == 18  # a redeemed guest still takes a place on the boat


async def test_update(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client)
    first = booking["unitItems"][0]
    body = {
        "availabilityId": "2026-06-02T14:00:00+01:00",
        "unitItems": [{"uuid": first["uuid"], "unitId": "adult"}, {"unitId": "child"}, {"unitId": "child"}],
        "notes": "Birthday",
        "contact": {"firstName": "Grace"},
    }
    response = await client.patch(f"/octo/bookings/{booking['uuid']}", json=body, headers=auth())
    assert response.status_code == 200
    updated = response.json()
    assert updated["status"] == "ON_HOLD" and updated["availabilityId"] == "2026-06-02T14:00:00+01:00"
    assert updated["unitItems"][0]["uuid"] == first["uuid"]
    assert updated["unitItems"][0]["supplierReference"] == first["supplierReference"]
    assert [i["unitId"] for i in updated["unitItems"]] == ["adult", "child", "child"]
    assert updated["notes"] == "Birthday" and updated["contact"]["firstName"] == "Grace"
    assert updated["utcExpiresAt"] == booking["utcExpiresAt"]
    assert await vacancies(client) == 20
    assert await vacancies(client, "2026-06-02T14:00:00+01:00") == 17
    moved = await client.patch(
        f"/octo/bookings/{booking['uuid']}",
        json={"optionId": "evening", "availabilityId": "2026-06-04T19:30:00+01:00"},
        headers=auth(),
    )
    assert moved.json()["error"] == "INVALID_UNIT_ID"  # the evening option sells adults only
    renewed = await client.patch(
        f"/octo/bookings/{booking['uuid']}", json={"expirationMinutes": 60}, headers=auth()
    )
    assert renewed.json()["utcExpiresAt"] == "2026-06-01T09:00:00Z"
    nowhere = await client.patch(
        f"/octo/bookings/{booking['uuid']}",
        json={"availabilityId": "2026-06-02T11:00:00+01:00"},
        headers=auth(),
    )
    assert nowhere.json()["error"] == "INVALID_AVAILABILITY_ID"
    assert (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()[
        "availabilityId"
    ] == "2026-06-02T14:00:00+01:00"


async def test_update_into_a_full_slot_is_refused(client: httpx.AsyncClient, bookable: Services) -> None:
    full = "2026-06-02T16:00:00+01:00"
    for _ in range(2):
        await reserve(client, reservation(("adult",) * 10, availability_id=full))
    booking = await reserve(client)
    response = await client.patch(
        f"/octo/bookings/{booking['uuid']}", json={"availabilityId": full}, headers=auth()
    )
    assert response.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": f"Availability {full} is sold out: 0 place(s) left, 2 requested",
    }
    assert await vacancies(client) == 18


async def test_idempotent_reserve(client: httpx.AsyncClient, bookable: Services) -> None:
    body = reservation()
    first = await reserve(client, body)
    second = await reserve(client, body)
    assert second == first
    assert await vacancies(client) == 18
    different = await client.post("/octo/bookings", json={**body, "notes": "other"}, headers=auth())
    assert different.json() == {
        "error": "INVALID_BOOKING_UUID",
        "errorMessage": f"The uuid {body['uuid']!r} was already used for a different reservation",
        "uuid": body["uuid"],
    }
    # Another connection's uuid space is its own.
    other = await reserve(client, body, key=KEY_B)
    assert other["id"] != first["id"]


async def test_bookings_are_isolated_per_connection(client: httpx.AsyncClient, bookable: Services) -> None:
    mine = await reserve(client, reservation(resellerReference="SHARED"))
    await reserve(client, reservation(resellerReference="SHARED"), key=KEY_B)
    for method, path, body in (
        ("GET", "", None),
        ("PATCH", "", {"notes": "x"}),
        ("POST", "/confirm", {"contact": GUEST}),
        ("POST", "/extend", {}),
        ("POST", "/cancel", {}),
        ("DELETE", "", None),
    ):
        response = await client.request(
            method, f"/octo/bookings/{mine['uuid']}{path}", json=body, headers=auth(KEY_B)
        )
        unknown = await client.request(
            method, f"/octo/bookings/{uuid.uuid4()}{path}", json=body, headers=auth(KEY_B)
        )
        assert response.json()["error"] == unknown.json()["error"] == "INVALID_BOOKING_UUID", (method, path)
    listed = (
        await client.get("/octo/bookings", params={"resellerReference": "SHARED"}, headers=auth(KEY_B))
    ).json()
    assert len(listed) == 1 and listed[0]["id"] != mine["id"]
    assert (await client.get(f"/octo/bookings/{mine['uuid']}", headers=auth())).json()["status"] == "ON_HOLD"


async def test_list_filters(client: httpx.AsyncClient, bookable: Services) -> None:
    a = await reserve(client, reservation(resellerReference="R-A"))
    b = await reserve(
        client, reservation(resellerReference="R-B", availability_id="2026-06-03T10:00:00+01:00")
    )
    c = await reserve(client, {
        "uuid": str(uuid.uuid4()), "productId": "tower-of-stories", "optionId": "DEFAULT",
        "availabilityId": "2026-06-03T00:00:00+01:00", "unitItems": [{"unitId": "adult"}], "resellerReference": "R-C",
    })  # fmt: skip

    async def ids(**params: str) -> list[str]:
        response = await client.get("/octo/bookings", params=params, headers=auth())
        assert response.status_code == 200, response.text
        return [booking["id"] for booking in response.json()]

    assert await ids(resellerReference="R-B") == [b["id"]]
    assert await ids(supplierReference=c["supplierReference"]) == [c["id"]]
    assert await ids(localDate="2026-06-02") == [a["id"]]
    assert set(await ids(localDateStart="2026-06-02", localDateEnd="2026-06-03")) == {
        a["id"],
        b["id"],
        c["id"],
    }
    assert await ids(localDate="2026-06-03", productId="tower-of-stories") == [c["id"]]
    assert set(await ids(localDate="2026-06-03", optionId="DEFAULT")) == {b["id"], c["id"]}
    assert await ids(localDate="2026-06-04") == []
    for params in ({}, {"productId": "tower-of-stories"}, {"localDateStart": "2026-06-02"}):
        response = await client.get("/octo/bookings", params=params, headers=auth())
        assert response.json()["error"] == "BAD_REQUEST", params


@pytest.mark.parametrize(
    ("change", "code", "echo"),
    [
        ({"productId": "nope"}, "INVALID_PRODUCT_ID", {"productId": "nope"}),
        ({"optionId": "nope"}, "INVALID_OPTION_ID", {"optionId": "nope"}),
        (
            {"availabilityId": "2026-06-02T11:00:00+01:00"},
            "INVALID_AVAILABILITY_ID",
            {"availabilityId": "2026-06-02T11:00:00+01:00"},
        ),
        ({"availabilityId": "tomorrow"}, "INVALID_AVAILABILITY_ID", {"availabilityId": "tomorrow"}),
        ({"availabilityId": None}, "INVALID_AVAILABILITY_ID", {}),
        ({"unitItems": [{"unitId": "pet"}]}, "INVALID_UNIT_ID", {"unitId": "pet"}),
        ({"unitItems": []}, "UNPROCESSABLE_ENTITY", {}),
        ({"unitItems": None}, "UNPROCESSABLE_ENTITY", {}),
        ({"unitItems": [{"unitId": "child"}]}, "UNPROCESSABLE_ENTITY", {}),
        ({"unitItems": [{"unitId": "adult"}] * 13}, "UNPROCESSABLE_ENTITY", {}),
        ({"unitItems": [{"unitId": "adult"}] * 21}, "UNPROCESSABLE_ENTITY", {}),
        ({"availabilityId": "2026-12-25T10:00:00+00:00"}, "UNPROCESSABLE_ENTITY", {}),
        ({"availabilityId": "2026-05-31T10:00:00+01:00"}, "UNPROCESSABLE_ENTITY", {}),
        ({"uuid": "not-a-uuid"}, "BAD_REQUEST", {}),
        ({"unitItems": "adult"}, "BAD_REQUEST", {}),
        ({"expirationMinutes": "soon"}, "BAD_REQUEST", {}),
        ({"currency": "USD"}, "BAD_REQUEST", {}),
    ],
)
async def test_bad_reservations_write_nothing(
    client: httpx.AsyncClient, bookable: Services, change: dict[str, Any], code: str, echo: dict[str, Any]
) -> None:
    body = {**reservation(), **change}
    if change.get("unitItems", []) is None:
        del body["unitItems"]
    before = await count_bookings(bookable)
    response = await client.post("/octo/bookings", json=body, headers=auth())
    assert response.status_code == 400
    payload = response.json()
    assert payload["error"] == code, payload
    assert payload["errorMessage"]
    for key, value in echo.items():
        assert payload[key] == value
    assert await count_bookings(bookable) == before


async def test_sold_out_slot(client: httpx.AsyncClient, bookable: Services) -> None:
    await reserve(client, reservation(("adult",) * 12))
    before = await count_bookings(bookable)
    response = await client.post("/octo/bookings", json=reservation(("adult",) * 9), headers=auth())
    assert response.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": f"Availability {SLOT} is sold out: 8 place(s) left, 9 requested",
    }
    assert await count_bookings(bookable) == before


async def test_test_mode_bookings_hold_nothing(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await reserve(client, reservation(), **{"Octo-Env": "test"})
    assert booking["testMode"] is True
    assert await vacancies(client) == 20


async def test_unknown_or_malformed_uuid(client: httpx.AsyncClient, bookable: Services) -> None:
    for path in (f"/octo/bookings/{uuid.uuid4()}", "/octo/bookings/garbage"):
        response = await client.get(path, headers=auth())
        assert response.status_code == 400 and response.json()["error"] == "INVALID_BOOKING_UUID"
    response = await confirm(client, str(uuid.uuid4()))
    assert response.json()["error"] == "INVALID_BOOKING_UUID"


async def test_booking_pricing(client: httpx.AsyncClient, bookable: Services) -> None:
    body = reservation(("adult", "child"), currency="GBP")
    response = await client.post("/octo/bookings", json=body, headers=auth(capabilities="octo/pricing"))
    booking = response.json()
    assert booking["pricing"]["retail"] == 2200 + 1300 and booking["pricing"]["currency"] == "GBP"
    assert [i["pricing"]["retail"] for i in booking["unitItems"]] == [2200, 1300]
    plain = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert "pricing" not in plain and "pricing" not in plain["unitItems"][0]


async def test_open_dated_booking(client: httpx.AsyncClient, services: Services) -> None:
    from tests.test_catalog_import import MINIMAL

    await services.catalog.import_text(
        MINIMAL.replace(
            "    deliveryFormats: [QRCODE]", "    availabilityRequired: false\n    deliveryFormats: [QRCODE]"
        ),
        actor=COMMAND_LINE,
    )
    await services.connections.ensure("A", "demo-reseller-a")
    body = {"productId": "walk", "optionId": "DEFAULT", "unitItems": [{"unitId": "adult"}]}
    booking = await reserve(client, body)
    assert (
        booking["freesale"] is True and booking["availabilityId"] is None and booking["availability"] is None
    )
    assert booking["cancellable"] is True
    assert uuid.UUID(booking["uuid"])
    assert (await confirm(client, booking["uuid"])).json()["status"] == "CONFIRMED"


async def test_a_hold_past_the_cancellation_cutoff_can_be_released(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    """The cancellation cutoff protects sold places; a hold sells nothing (issue 17)."""
    before = await vacancies(client)
    held = [await reserve(client, reservation(expirationMinutes=240)) for _ in range(3)]
    clock.advance(hours=2)  # 11:00 London on 1 June: inside 24 h of the 2 June 10:00 departure, still on sale
    fetched = (await client.get(f"/octo/bookings/{held[0]['uuid']}", headers=auth())).json()
    assert fetched["status"] == "ON_HOLD" and fetched["cancellable"] is True
    patched = await client.patch(f"/octo/bookings/{held[0]['uuid']}", json={"notes": "late"}, headers=auth())
    assert patched.json()["notes"] == "late"  # update is allowed exactly when cancel is (OCTO.md §5.4)
    cancelled = await client.post(f"/octo/bookings/{held[0]['uuid']}/cancel", headers=auth())
    deleted = await client.delete(f"/octo/bookings/{held[1]['uuid']}", headers=auth())
    assert cancelled.json()["status"] == deleted.json()["status"] == "CANCELLED"
    assert await vacancies(client) == before - 2
    confirmed = await confirm(client, held[2]["uuid"])
    assert confirmed.json()["status"] == "CONFIRMED" and confirmed.json()["cancellable"] is False
    refused = await client.post(f"/octo/bookings/{held[2]['uuid']}/cancel", headers=auth())
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
