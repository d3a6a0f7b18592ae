"""vendor/mappings end to end: the reseller's PUT/GET /mappings, the supplier's completion in
the admin API, notifications to real loopback receivers (driven step by step with the test
clock), and `mappings[]` on availability, batch rows, bookings and webhook payloads.

On the booking tests' own catalogue, with reseller A's four rows of the `listings` fixture:
two mapped by the supplier, two waiting for it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from berth.capabilities.ids import MAPPINGS
from berth.container import Services, build_services
from berth.settings import Settings
from berth.store import deliveries_repo
from tests.bookings_helpers import SLOT, TOUR, confirm, reservation, reserve
from tests.conftest import ADMIN, KEY_A, KEY_B, SECRET_B, Clock, auth
from tests.mappings_helpers import add_listings
from tests.receivers import receiver
from tests.test_webhooks import drain, subscribe, verify

ROW_KEYS = {
    "resellerReference", "resellerStatus", "resellerProduct", "productId", "optionId", "unitId",
    "optionRequired", "unitRequired", "validityDays", "webhookUrl",
}  # fmt: skip
MUSEUM = {"productId": "tower-of-stories", "optionId": "DEFAULT"}


@pytest.fixture
async def listings(bookable: Services) -> Services:
    return await add_listings(bookable)


def row(reference: str, url: Any = "https://reseller-b.example/mappings", **fields: Any) -> dict[str, Any]:
    return {"resellerReference": reference, "webhookUrl": url, **fields}


def shown(reference: str, **fields: Any) -> dict[str, Any]:
    """A row as Berth answers it: every key, with the defaults of an upload that left them out."""
    return {
        "resellerReference": reference,
        "resellerStatus": None,
        "resellerProduct": None,
        "productId": None,
        "optionId": None,
        "unitId": None,
        "optionRequired": True,
        "unitRequired": False,
        "validityDays": None,
        "webhookUrl": "https://reseller-b.example/mappings",
        **fields,
    }


async def put(client: httpx.AsyncClient, body: Any, key: str = KEY_B, capabilities: str | None = None) -> httpx.Response:  # fmt: skip
    return await client.put("/octo/mappings", json=body, headers=auth(key, capabilities))


async def listed(client: httpx.AsyncClient, key: str = KEY_B, **params: Any) -> list[dict[str, Any]]:
    response = await client.get("/octo/mappings", params=params, headers=auth(key))
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()
    return rows


async def staff_rows(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/admin/api/mappings", params={"limit": 500, **params}, headers=ADMIN)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def staff_row(client: httpx.AsyncClient, reference: str, connection: str = "Reseller B") -> dict[str, Any]:  # fmt: skip
    rows = (await staff_rows(client))["mappings"]
    (found,) = [r for r in rows if r["resellerReference"] == reference and r["connectionName"] == connection]
    assert isinstance(found, dict)
    return found


async def complete(client: httpx.AsyncClient, reference: str, connection: str = "Reseller B", **choice: Any) -> httpx.Response:  # fmt: skip
    mapping = await staff_row(client, reference, connection)
    return await client.patch(f"/admin/api/mappings/{mapping['id']}", json=choice, headers=ADMIN)


async def mapped(client: httpx.AsyncClient, reference: str, connection: str = "Reseller B", **choice: Any) -> dict[str, Any]:  # fmt: skip
    response = await complete(client, reference, connection, **choice)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def notifications(client: httpx.AsyncClient, reference: str) -> list[dict[str, Any]]:
    mapping = await staff_row(client, reference)
    detail = (await client.get(f"/admin/api/mappings/{mapping['id']}", headers=ADMIN)).json()
    found: list[dict[str, Any]] = detail["notifications"]
    return found


# --- PUT /mappings ------------------------------------------------------------------------


async def test_put_stores_the_full_set_and_get_lists_it(
    client: httpx.AsyncClient, listings: Services
) -> None:
    body = [
        row("R1", resellerStatus="CONFIRMED", resellerProduct="Day cruise", validityDays=30),
        row("R2", None, optionRequired=False, unitRequired=True),
        {"resellerReference": "R3"},
    ]
    response = await put(client, body)
    assert response.status_code == 200, response.text
    expected = [
        shown("R1", resellerStatus="CONFIRMED", resellerProduct="Day cruise", validityDays=30),
        shown("R2", webhookUrl=None, optionRequired=False, unitRequired=True),
        shown("R3", webhookUrl=None),
    ]
    assert response.json() == expected
    assert await listed(client) == expected  # in the order of the upload
    wrapped = await put(client, {"mappings": [body[2], body[0]]})
    assert wrapped.status_code == 200, wrapped.text
    assert [r["resellerReference"] for r in wrapped.json()] == ["R3", "R1"]
    assert [r["resellerReference"] for r in await listed(client)] == ["R3", "R1"]


async def test_upsert_keeps_the_suppliers_side_and_removes_what_is_left_out(
    client: httpx.AsyncClient, listings: Services, clock: Clock
) -> None:
    await put(client, [row("R1", resellerStatus="DRAFT"), row("R2"), row("R3")])
    before = await staff_row(client, "R1")
    await mapped(client, "R1", productId="thames-sightseeing", optionId="DEFAULT")
    clock.advance(minutes=5)
    echoed = row(
        "R1",
        resellerStatus="CONFIRMED",
        resellerProduct="Renamed",
        productId="tower-of-stories",  # the supplier's fields: an upload never writes them
        optionId="evening",
        unitId="child",
    )
    response = await put(client, [echoed, row("R3")])
    assert response.json() == [
        shown(
            "R1",
            resellerStatus="CONFIRMED",
            resellerProduct="Renamed",
            productId="thames-sightseeing",
            optionId="DEFAULT",
        ),
        shown("R3"),
    ]
    after = await staff_row(client, "R1")
    assert after["id"] == before["id"] and after["status"] == "MAPPED"  # updated in place
    assert after["updatedAt"] == "2026-06-01T08:05:00Z"
    assert [r["resellerReference"] for r in (await staff_rows(client, connectionId=after["connectionId"]))["mappings"]] == [
        "R1",
        "R3",
    ]  # R2 removed  # fmt: skip

    # The same set again changes nothing: same answer, no write, no notification.
    clock.advance(minutes=5)
    again = await put(client, [echoed, row("R3")])
    assert again.json() == response.json()
    assert (await staff_row(client, "R1"))["updatedAt"] == "2026-06-01T08:05:00Z"
    assert len(await notifications(client, "R1")) == 1  # the completion's, nothing since

    # The supplier's side survives the reseller changing what the row requires.
    await put(client, [row("R1", optionRequired=False), row("R3")])
    assert (await listed(client))[0]["optionId"] is None  # shown null while not required...
    await put(client, [row("R1"), row("R3")])
    assert (await listed(client))[0]["optionId"] == "DEFAULT"  # ...and kept

    # An empty set removes every row.
    assert (await put(client, [])).json() == []
    assert await listed(client) == []


@pytest.mark.parametrize(
    ("body", "message", "index", "field"),
    [
        ([row("A"), {"resellerProduct": "no reference"}], "Row [1] resellerReference: is required", 1, "resellerReference"),
        ([row("A"), row(""), row("B")], "Row [1] resellerReference", 1, "resellerReference"),
        ([row("A"), row("B"), row("A")], "Row [2] resellerReference: 'A' is also the reference of row [0]", 2, "resellerReference"),
        ([row("A", validityDays="30")], "Row [0] validityDays", 0, "validityDays"),
        ([row("A", validityDays=-1)], "Row [0] validityDays", 0, "validityDays"),
        ([row("A", optionRequired="yes")], "Row [0] optionRequired", 0, "optionRequired"),
        ([row("A", unitRequired=1)], "Row [0] unitRequired", 0, "unitRequired"),
        ([{"resellerReference": 7}], "Row [0] resellerReference", 0, "resellerReference"),
        ([row("A", resellerStatus=["CONFIRMED"])], "Row [0] resellerStatus", 0, "resellerStatus"),
        ([row("A"), row("B", "not a url")], "Row [1] webhookUrl: url must be an absolute http or https URL", 1, "webhookUrl"),
        ([row("A", "ftp://reseller.example/x")], "Row [0] webhookUrl", 0, "webhookUrl"),
        ([row("A", 42)], "Row [0] webhookUrl", 0, "webhookUrl"),
        ([row("A"), "B"], "Row [1]: must be an object", 1, None),
    ],
)  # fmt: skip
async def test_bad_rows_name_row_and_field_and_apply_nothing(
    client: httpx.AsyncClient, listings: Services, body: Any, message: str, index: int, field: str | None
) -> None:
    await put(client, [row("KEEP")])
    response = await put(client, body)
    assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", response.text
    assert message in response.json()["errorMessage"], response.json()
    assert response.json()["problems"][0]["index"] == index
    assert response.json()["problems"][0]["field"] == field
    assert [r["resellerReference"] for r in await listed(client)] == ["KEEP"]


@pytest.mark.parametrize(
    "content",
    [b'{"rows": []}', b'"R1"', b"5", b'{"mappings": {"resellerReference": "R1"}}', b"{", b"", b"null"],
)
async def test_bodies_that_are_not_an_array_of_rows(
    client: httpx.AsyncClient, listings: Services, content: bytes
) -> None:
    await put(client, [row("KEEP")])
    response = await client.put(
        "/octo/mappings", content=content, headers={**auth(KEY_B), "Content-Type": "application/json"}
    )
    assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST"
    assert [r["resellerReference"] for r in await listed(client)] == ["KEEP"]


async def test_private_webhook_urls_are_refused_unless_allowed(
    client: httpx.AsyncClient, listings: Services
) -> None:
    listings.settings.webhook_allow_private_targets = False
    for url in ("http://127.0.0.1:9/x", "http://10.0.0.1/x", "http://[::1]/x", "http://localhost/x"):
        response = await put(client, [row("A", url)])
        assert response.json()["error"] == "BAD_REQUEST", url
        assert "Row [0] webhookUrl: points to a non-public address" in response.json()["errorMessage"]
    assert (await put(client, [row("A", "https://reseller-b.example/x")])).status_code == 200


async def test_concurrent_uploads_of_one_connection_take_turns(
    client: httpx.AsyncClient, listings: Services
) -> None:
    first, second = await asyncio.gather(
        put(client, [row(f"X{i}") for i in range(30)]), put(client, [row(f"Y{i}") for i in range(30)])
    )
    assert first.status_code == second.status_code == 200
    references = {r["resellerReference"][0] for r in await listed(client)}
    assert references in ({"X"}, {"Y"})  # one full set, never a mixture


# --- GET /mappings filters ------------------------------------------------------------------


@pytest.fixture
async def five_rows(client: httpx.AsyncClient, listings: Services) -> None:
    await put(
        client,
        [
            row("P1"),
            row("P2", unitRequired=True),
            row("P3", optionRequired=False),
            row("P4", resellerStatus="CONFIRMED"),
            row("P5", resellerStatus="DRAFT"),
        ],
    )
    await mapped(client, "P1", productId="thames-sightseeing", optionId="DEFAULT")
    await mapped(client, "P2", productId="thames-sightseeing", optionId="evening", unitId="adult")
    await mapped(client, "P3", productId="tower-of-stories")
    await mapped(client, "P4", productId="sunset-kayak", optionId="DEFAULT")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", "P1 P2 P3 P4 P5"),
        ("productId=thames-sightseeing", "P1 P2"),
        ("productIds[]=tower-of-stories&productIds[]=sunset-kayak", "P3 P4"),
        ("productIds=tower-of-stories", "P3"),  # the key without brackets is accepted too
        ("productId=thames-sightseeing&productIds[]=tower-of-stories", "P1 P2"),  # productId wins
        ("productId=nothing-like-it", ""),
        ("optionId=evening", "P2"),
        ("optionIds[]=evening", "P2"),
        ("optionIds[]=evening&optionIds[]=DEFAULT", "P1 P2 P3 P4 P5"),
        ("optionId=DEFAULT", "P1 P3 P4 P5"),  # option DEFAULT, and rows without an option
        ("optionId=evening&optionIds[]=DEFAULT", "P2"),  # optionId wins
        ("productId=thames-sightseeing&optionId=DEFAULT", "P1"),
        ("productId=tower-of-stories&optionId=DEFAULT", "P3"),
        ("productIds[]=sunset-kayak&optionIds[]=evening", ""),
        ("resellerReference=P3", "P3"),
        ("resellerStatus=DRAFT", "P5"),
        ("resellerStatus=CONFIRMED&productId=sunset-kayak", "P4"),
    ],
)
async def test_get_filters(client: httpx.AsyncClient, five_rows: None, query: str, expected: str) -> None:
    response = await client.get(f"/octo/mappings?{query}", headers=auth(KEY_B))
    assert response.status_code == 200, response.text
    assert " ".join(r["resellerReference"] for r in response.json()) == expected


async def test_rows_belong_to_their_connection(client: httpx.AsyncClient, listings: Services) -> None:
    a_rows = await listed(client, KEY_A)
    assert [r["resellerReference"] for r in a_rows] == [
        "RA-THAMES-DAY",
        "RA-THAMES-EVENING-ADULT",
        "RA-MUSEUM",
        "RA-KAYAK-SUNSET",
    ]
    assert await listed(client, KEY_B) == []
    await put(client, [row("RA-THAMES-DAY"), row("B-ONLY")])  # the same reference in another connection
    assert await listed(client, KEY_A) == a_rows
    assert [r["resellerReference"] for r in await listed(client, KEY_B)] == ["RA-THAMES-DAY", "B-ONLY"]
    await put(client, [])
    assert await listed(client, KEY_A) == a_rows
    everyone = await staff_rows(client)
    assert {r["connectionName"] for r in everyone["mappings"]} == {"Reseller A"}


# --- the supplier's side ----------------------------------------------------------------------


async def test_pending_list_counts_and_completion(client: httpx.AsyncClient, listings: Services) -> None:
    await put(client, [row("B1"), row("B2", optionRequired=False)])
    pending = await staff_rows(client, pending="true")
    assert {(r["connectionName"], r["resellerReference"]) for r in pending["mappings"]} == {
        ("Reseller A", "RA-MUSEUM"),
        ("Reseller A", "RA-KAYAK-SUNSET"),
        ("Reseller B", "B1"),
        ("Reseller B", "B2"),
    }
    assert pending["total"] == pending["pending"] == 4
    first = pending["mappings"][0]
    assert {
        "id",
        "connectionId",
        "connectionName",
        "status",
        "createdAt",
        "updatedAt",
        "mappedAt",
    } | ROW_KEYS == set(first)
    assert first["status"] == "PENDING"
    done = await staff_rows(client, pending="false")
    assert [r["resellerReference"] for r in done["mappings"]] == ["RA-THAMES-DAY", "RA-THAMES-EVENING-ADULT"]
    counts = (await client.get("/admin/api/mappings/counts", headers=ADMIN)).json()
    assert counts["pending"] == 4 and counts["mapped"] == 2
    assert [(c["connectionName"], c["pending"], c["mapped"]) for c in counts["connections"]] == [
        ("Reseller A", 2, 2),
        ("Reseller B", 2, 0),
    ]
    result = await mapped(client, "B1", productId="thames-sightseeing", optionId="evening")
    assert result["status"] == "MAPPED" and result["mappedAt"] == "2026-06-01T08:00:00Z"
    assert (result["productId"], result["optionId"], result["unitId"]) == (
        "thames-sightseeing",
        "evening",
        None,
    )
    assert (await staff_rows(client, pending="true"))["pending"] == 3
    assert (await client.get("/admin/api/mappings/nope", headers=ADMIN)).status_code == 404
    unknown = await client.patch("/admin/api/mappings/nope", json={"productId": "x"}, headers=ADMIN)
    assert unknown.status_code == 404 and unknown.json()["error"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("flags", "choice", "error", "message"),
    [
        ({}, {"productId": "no-such-tour", "optionId": "DEFAULT"}, "INVALID_PRODUCT_ID", "does not exist"),
        ({}, {"productId": "thames-sightseeing"}, "BAD_REQUEST", "optionId is required"),
        ({}, {"productId": "thames-sightseeing", "optionId": "sunrise"}, "INVALID_OPTION_ID", "not an option"),
        ({"unitRequired": True}, {"productId": "thames-sightseeing", "optionId": "DEFAULT"}, "BAD_REQUEST", "unitId is required"),
        ({"unitRequired": True}, {"productId": "thames-sightseeing", "optionId": "evening", "unitId": "child"}, "INVALID_UNIT_ID", "not a unit of option 'evening'"),
        ({"unitRequired": True, "optionRequired": False}, {"productId": "tower-of-stories", "unitId": "paddler"}, "INVALID_UNIT_ID", "any option of product"),
        ({"optionRequired": False}, {"productId": "tower-of-stories", "optionId": "DEFAULT"}, "BAD_REQUEST", "optionRequired is false"),
        ({}, {"productId": "thames-sightseeing", "optionId": "DEFAULT", "unitId": "adult"}, "BAD_REQUEST", "unitRequired is false"),
        ({}, {"optionId": "DEFAULT"}, "BAD_REQUEST", "productId"),
        ({}, {"productId": "thames-sightseeing", "optionId": "DEFAULT", "colour": "red"}, "BAD_REQUEST", "colour"),
    ],
)  # fmt: skip
async def test_completion_is_checked_against_the_catalogue(
    client: httpx.AsyncClient, listings: Services, flags: dict[str, bool], choice: dict[str, str], error: str, message: str
) -> None:  # fmt: skip
    await put(client, [row("B1", **flags)])
    response = await complete(client, "B1", **choice)
    assert response.status_code == 400 and response.json()["error"] == error, response.text
    assert message in response.json()["errorMessage"]
    assert (await staff_row(client, "B1"))["status"] == "PENDING"
    assert await notifications(client, "B1") == []


async def test_a_unit_without_an_option_may_come_from_any_option(
    client: httpx.AsyncClient, listings: Services
) -> None:
    await put(client, [row("B1", optionRequired=False, unitRequired=True)])
    result = await mapped(client, "B1", productId="thames-sightseeing", unitId="adult")
    assert (result["optionId"], result["unitId"]) == (None, "adult")


# --- notifications ------------------------------------------------------------------------------


async def test_notification_bodies_follow_the_null_rules(
    client: httpx.AsyncClient, listings: Services
) -> None:
    async with receiver() as target:
        await put(
            client,
            [
                row("BOTH", target.url, optionRequired=True, unitRequired=True, resellerStatus="CONFIRMED"),
                row("UNIT-ONLY", target.url, optionRequired=False, unitRequired=True, validityDays=7),
                row("OPTION-ONLY", target.url, optionRequired=True, unitRequired=False),
                row(
                    "NEITHER", target.url, optionRequired=False, unitRequired=False, resellerProduct="Museum"
                ),
                row("NO-URL", None),
            ],
        )
        await mapped(client, "BOTH", productId="thames-sightseeing", optionId="evening", unitId="adult")
        await mapped(client, "UNIT-ONLY", productId="tower-of-stories", unitId="family")
        await mapped(client, "OPTION-ONLY", productId="sunset-kayak", optionId="DEFAULT")
        await mapped(client, "NEITHER", productId="tower-of-stories")
        await mapped(client, "NO-URL", productId="tower-of-stories", optionId="DEFAULT")
        await drain(listings)
        bodies = {p["resellerReference"]: p for p in target.payloads()}
        common = {
            "webhookUrl": target.url,
            "resellerStatus": None,
            "resellerProduct": None,
            "validityDays": None,
        }
        assert bodies == {
            "BOTH": {**common, "resellerReference": "BOTH", "resellerStatus": "CONFIRMED",
                     "productId": "thames-sightseeing", "optionId": "evening", "unitId": "adult",
                     "optionRequired": True, "unitRequired": True},
            "UNIT-ONLY": {**common, "resellerReference": "UNIT-ONLY", "validityDays": 7,
                          "productId": "tower-of-stories", "optionId": None, "unitId": "family",
                          "optionRequired": False, "unitRequired": True},
            "OPTION-ONLY": {**common, "resellerReference": "OPTION-ONLY",
                            "productId": "sunset-kayak", "optionId": "DEFAULT", "unitId": None,
                            "optionRequired": True, "unitRequired": False},
            "NEITHER": {**common, "resellerReference": "NEITHER", "resellerProduct": "Museum",
                        "productId": "tower-of-stories", "optionId": None, "unitId": None,
                        "optionRequired": False, "unitRequired": False},
        }  # fmt: skip
        for received in target.requests:
            assert received.headers["content-type"] == "application/json"
            assert received.headers["webhook-id"].startswith("msg_")
            verify(SECRET_B, received)  # signed like webhooks, with the connection's secret
        # The same choice again is no change: nothing more is sent.
        await mapped(client, "BOTH", productId="thames-sightseeing", optionId="evening", unitId="adult")
        await drain(listings)
        assert len(target.requests) == 4


async def test_retried_until_the_receiver_recovers(
    client: httpx.AsyncClient, listings: Services, clock: Clock
) -> None:
    """The test schedule is 60, 120, 240 s. A webhook gives up after it; a mapping notification
    keeps retrying at the last interval until a 2XX arrives."""
    async with receiver(500, 502, 503, 500, 500) as target:
        await put(client, [row("B1", target.url)])
        await mapped(client, "B1", productId="thames-sightseeing", optionId="DEFAULT")
        await drain(listings)
        assert len(target.requests) == 1
        for number, delay in enumerate([60, 120, 240, 240, 240], start=2):
            clock.advance(seconds=delay * 0.79)  # jitter is ±20 %: not due yet
            await drain(listings)
            assert len(target.requests) == number - 1
            clock.advance(seconds=delay * 0.42)
            await drain(listings)
            assert len(target.requests) == number
        (notification,) = await notifications(client, "B1")
        assert notification["kind"] == "mapping" and notification["status"] == "delivered"
        assert notification["attempts"] == 6 and notification["url"] == target.url
        clock.advance(hours=2)
        await drain(listings)
        assert len(target.requests) == 6  # delivered: never sent again
        assert len({r.headers["webhook-id"] for r in target.requests}) == 1
        assert all(r.json == target.requests[0].json for r in target.requests)
        detail = (await client.get(f"/admin/api/deliveries/{notification['id']}", headers=ADMIN)).json()
        assert [a["statusCode"] for a in detail["attemptLog"]] == [500, 502, 503, 500, 500, 200]
        listed_all = (await client.get("/admin/api/deliveries", headers=ADMIN)).json()["deliveries"]
        assert [d["kind"] for d in listed_all] == ["mapping"]
        metrics = (await client.get("/metrics")).text
        assert 'berth_deliveries{kind="mapping",status="delivered"} 1' in metrics


async def test_a_pending_notification_survives_a_worker_restart(
    client: httpx.AsyncClient, listings: Services, settings: Settings, clock: Clock
) -> None:
    async with receiver(500) as target:
        await put(client, [row("B1", target.url), row("B2", target.url)])
        await mapped(client, "B1", productId="thames-sightseeing", optionId="DEFAULT")
        await drain(listings)  # the first worker tries once and is answered 500
        await mapped(client, "B2", productId="sunset-kayak", optionId="DEFAULT")
        async with listings.database.transaction(write=True) as conn:  # a worker claims B2 and dies
            claimed = await deliveries_repo.claim_due(conn, clock(), clock() + listings.delivery.lease, 10)
        assert [d.payload["resellerReference"] for d in claimed] == ["B2"]
        await listings.close()

        restarted = build_services(settings, clock)  # a new process on the same database
        try:
            clock.advance(seconds=3)
            assert await restarted.delivery.deliver_due() == 0  # B1 not due yet, B2 still leased (6 s)
            clock.advance(seconds=80)  # past B2's lease and B1's first retry (60 s +- 20 %)
            await restarted.delivery.deliver_due()
            await restarted.delivery.deliver_due()
        finally:
            await restarted.close()
        assert sorted(r.json["resellerReference"] for r in target.requests) == ["B1", "B1", "B2"]
        # B1's retry is the same message; B1 and B2 were sent at once, in either order.
        retried = {r.headers["webhook-id"] for r in target.requests if r.json["resellerReference"] == "B1"}
        assert len(retried) == 1


async def test_a_newer_notification_supersedes_an_undelivered_one(
    client: httpx.AsyncClient, listings: Services, clock: Clock
) -> None:
    async with receiver(default_status=500) as target:
        await put(client, [row("B1", target.url)])
        await mapped(client, "B1", productId="thames-sightseeing", optionId="DEFAULT")
        await drain(listings)
        await mapped(client, "B1", productId="thames-sightseeing", optionId="evening")  # re-mapped
        assert [n["status"] for n in await notifications(client, "B1")] == ["pending", "superseded"]
        target.default_status = 200
        clock.advance(seconds=100)
        await drain(listings)
        assert [p["optionId"] for p in target.payloads()] == ["DEFAULT", "evening"]
        clock.advance(hours=1)
        await drain(listings)
        assert len(target.requests) == 2  # the outdated message is never sent again
        assert [n["status"] for n in await notifications(client, "B1")] == ["delivered", "superseded"]
        metrics = (await client.get("/metrics")).text
        assert 'berth_deliveries{kind="mapping",status="superseded"} 1' in metrics


async def test_an_undelivered_notification_follows_a_new_webhook_url(
    client: httpx.AsyncClient, listings: Services
) -> None:
    async with receiver(default_status=500) as old, receiver() as new:
        await put(client, [row("B1", old.url), row("B2", old.url)])
        await mapped(client, "B1", productId="thames-sightseeing", optionId="DEFAULT")
        await drain(listings)
        assert len(old.requests) == 1
        await put(client, [row("B1", new.url, resellerStatus="CONFIRMED"), row("B2", new.url)])
        await drain(listings)  # sent at once to the new address, with the row as it is now
        assert [(p["resellerReference"], p["resellerStatus"], p["webhookUrl"]) for p in new.payloads()] == [
            ("B1", "CONFIRMED", new.url)
        ]
        assert len(old.requests) == 1
        assert [n["status"] for n in await notifications(client, "B1")] == ["delivered", "superseded"]


async def test_removed_rows_and_dropped_urls_are_not_notified_any_more(
    client: httpx.AsyncClient, listings: Services, clock: Clock
) -> None:
    async with receiver(default_status=500) as target:
        await put(client, [row("B1", target.url), row("B2", target.url)])
        await mapped(client, "B1", productId="thames-sightseeing", optionId="DEFAULT")
        await mapped(client, "B2", productId="thames-sightseeing", optionId="evening")
        await drain(listings)
        assert len(target.requests) == 2
        await put(client, [row("B2", None)])  # B1 removed; B2 no longer wants notifications
        clock.advance(hours=1)
        await drain(listings)
        assert len(target.requests) == 2
        found = (await client.get("/admin/api/deliveries", headers=ADMIN)).json()["deliveries"]
        assert [(d["status"], d["attempts"]) for d in found] == [("superseded", 1), ("superseded", 1)]


# --- mappings[] on availability, batch rows, bookings and webhook payloads ------------------------


def refs(rows: list[dict[str, Any]]) -> list[str]:
    return [r["resellerReference"] for r in rows]


async def test_mappings_on_availability_and_batch_rows(client: httpx.AsyncClient, listings: Services) -> None:
    await mapped(client, "RA-MUSEUM", "Reseller A", productId="tower-of-stories")  # the whole product
    day = {"localDate": "2026-06-04"}

    async def check(key: str, capabilities: str | None, body: dict[str, Any]) -> httpx.Response:
        return await client.post("/octo/availability", json=body, headers=auth(key, capabilities))

    plain = (await check(KEY_A, None, {**TOUR, **day})).json()
    assert plain and all("mappings" not in item for item in plain)
    response = await check(KEY_A, "vendor/mappings", {**TOUR, **day})
    assert response.headers["Octo-Capabilities"] == "vendor/mappings"
    (day_row,) = [r for r in await listed(client, KEY_A) if r["resellerReference"] == "RA-THAMES-DAY"]
    assert all(item["mappings"] == [day_row] for item in response.json())
    aliased = await check(
        KEY_A, "octo/mappings", {"productId": "thames-sightseeing", "optionId": "evening", **day}
    )
    assert aliased.headers["Octo-Capabilities"] == "vendor/mappings"
    assert [refs(item["mappings"]) for item in aliased.json()] == [["RA-THAMES-EVENING-ADULT"]]
    museum = (await check(KEY_A, "vendor/mappings", {**MUSEUM, **day})).json()
    assert refs(museum[0]["mappings"]) == ["RA-MUSEUM"]
    others = (await check(KEY_B, "vendor/mappings", {**TOUR, **day})).json()
    assert all(item["mappings"] == [] for item in others)  # another connection's rows are invisible

    batch = await client.post(
        "/octo/availability/batch",
        json=[
            {**TOUR, **day},
            {**MUSEUM, **day},
            {"productId": "sunset-kayak", "optionId": "DEFAULT", "localDate": "2026-06-05"},
        ],
        headers=auth(KEY_A, "vendor/mappings, octo/pricing"),
    )
    by_product = {r["productId"]: refs(r["mappings"]) for r in batch.json()}
    assert by_product == {
        "thames-sightseeing": ["RA-THAMES-DAY"],
        "tower-of-stories": ["RA-MUSEUM"],
        "sunset-kayak": [],  # RA-KAYAK-SUNSET waits for the supplier
    }
    plain_batch = await client.post("/octo/availability/batch", json=[{**TOUR, **day}], headers=auth(KEY_A))
    assert all("mappings" not in r for r in plain_batch.json())
    calendar = await client.post(
        "/octo/availability/calendar",
        json={**TOUR, "localDateStart": "2026-06-04", "localDateEnd": "2026-06-05"},
        headers=auth(KEY_A, "vendor/mappings"),
    )
    assert all("mappings" not in d for d in calendar.json())  # not part of the calendar


async def test_mappings_on_bookings(client: httpx.AsyncClient, listings: Services) -> None:
    with_mappings = auth(KEY_A, "vendor/mappings")
    created = (await client.post("/octo/bookings", json=reservation(), headers=with_mappings)).json()
    assert refs(created["mappings"]) == ["RA-THAMES-DAY"]
    assert refs(created["availability"]["mappings"]) == ["RA-THAMES-DAY"]
    plain = (await client.get(f"/octo/bookings/{created['uuid']}", headers=auth(KEY_A))).json()
    assert "mappings" not in plain and "mappings" not in plain["availability"]
    for response in (
        await client.get(f"/octo/bookings/{created['uuid']}", headers=with_mappings),
        await client.post(
            f"/octo/bookings/{created['uuid']}/confirm",
            json={"contact": {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}},
            headers=with_mappings,
        ),
        await client.post(f"/octo/bookings/{created['uuid']}/cancel", headers=with_mappings),
    ):
        assert refs(response.json()["mappings"]) == ["RA-THAMES-DAY"], response.text
    found = (
        await client.get("/octo/bookings", params={"localDate": "2026-06-02"}, headers=with_mappings)
    ).json()
    assert [refs(b["mappings"]) for b in found] == [["RA-THAMES-DAY"]]
    other = await client.post("/octo/bookings", json=reservation(), headers=auth(KEY_B, "vendor/mappings"))
    assert other.json()["mappings"] == []
    staff = (await client.get(f"/admin/api/bookings/{created['id']}", headers=ADMIN)).json()
    assert "mappings" not in staff["booking"]  # staff see rows under /admin/api/mappings


async def test_mappings_in_webhook_payloads(client: httpx.AsyncClient, listings: Services) -> None:
    async with receiver() as rich, receiver() as plain, receiver() as slots_a, receiver() as slots_b:
        await subscribe(client, rich.url, capabilities="vendor/mappings")
        await subscribe(client, plain.url)
        await subscribe(client, slots_a.url, event="availability_update", capabilities="octo/mappings")
        await subscribe(client, slots_b.url, event="availability_update", key=KEY_B, capabilities=MAPPINGS)
        booking = await reserve(client)
        await confirm(client, booking["uuid"])
        await drain(listings)
        (with_rows,) = rich.payloads()
        assert with_rows["webhook"]["capabilities"] == ["vendor/mappings"]
        assert refs(with_rows["booking"]["mappings"]) == ["RA-THAMES-DAY"]
        (without,) = plain.payloads()
        assert "mappings" not in without["booking"]
        slot_a = slots_a.payloads()[0]
        assert slot_a["availability"]["id"] == SLOT and refs(slot_a["availability"]["mappings"]) == [
            "RA-THAMES-DAY"
        ]
        slot_b = slots_b.payloads()[0]
        assert slot_b["availability"]["mappings"] == []  # each webhook owner's own rows


async def test_products_stay_shared_across_connections(client: httpx.AsyncClient, listings: Services) -> None:
    headers = "vendor/mappings, octo/content"
    a = await client.get("/octo/products", headers=auth(KEY_A, headers))
    b = await client.get("/octo/products", headers=auth(KEY_B, headers))
    assert a.content == b.content and b"mappings" not in a.content
    memo = (await listings.catalog.snapshot()).memo
    assert [key for key in memo if key[:2] == ("response", "products")] == [
        ("response", "products", (frozenset({"vendor/mappings", "octo/content"}), None))
    ]  # one prepared answer for both connections, keyed without their rows
