"""Contracts per connection over HTTP (issue 37): the admin API keeps them versioned and audited;
over OCTO a reseller sees only what its contract sells, at its own net; another reseller's net
is never shown; webhooks follow the same contract. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from berth.container import Services
from berth.domain.catalog.document import catalog_to_yaml
from berth.domain.mappings import MappingUpload
from berth.domain.staff import COMMAND_LINE, Role
from tests.bookings_helpers import GUEST, SLOT, booking_products, reservation
from tests.builders import catalog
from tests.conftest import ADMIN, KEY_A, KEY_B, auth
from tests.receivers import receiver
from tests.test_staff_roles import staff_token
from tests.test_webhooks import drain, subscribe

PRICING = "octo/pricing"
THREE_PRODUCTS_AT_A_QUARTER_OFF = {
    "products": [{"product": "thames-sightseeing", "options": ["DEFAULT"]}, {"product": "tower-of-stories"}],
    "rate": {
        "commission": 25,
        "netPrices": [
            {"product": "thames-sightseeing", "unit": "adult", "currency": "EUR", "net": 1800},
        ],
    },
    "paymentTerms": "PREPAID",
}


async def connection_id(services: Services, key: str) -> str:
    found = await services.connections.authenticate(key)
    assert found is not None
    return found[0].id


async def put_contract(
    client: httpx.AsyncClient, services: Services, key: str, document: Any, **params: Any
) -> httpx.Response:
    cid = await connection_id(services, key)
    return await client.put(
        f"/admin/api/connections/{cid}/contract", content=orjson.dumps(document), params=params, headers=ADMIN
    )


async def test_contracts_are_versioned_audited_and_refused_on_a_stale_base(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    cid = await connection_id(bookable, KEY_B)
    first = (await client.get(f"/admin/api/connections/{cid}/contract", headers=ADMIN)).json()
    assert first["version"] == 0 and first["rateKind"] == "CATALOG_NET"
    assert first["contract"]["products"] == "ALL"
    saved = await put_contract(client, bookable, KEY_B, THREE_PRODUCTS_AT_A_QUARTER_OFF, baseVersion=0)
    assert saved.status_code == 200, saved.text
    assert saved.json()["version"] == 1 and saved.json()["rateKind"] == "NET_PRICE_LIST"
    stale = await put_contract(client, bookable, KEY_B, {"products": "ALL"}, baseVersion=0)
    assert stale.status_code == 409 and stale.json()["error"] == "CONFLICT"
    assert "version 1" in stale.json()["errorMessage"]
    # GET's answer can be sent back as it is.
    again = await client.put(
        f"/admin/api/connections/{cid}/contract",
        content=orjson.dumps(saved.json()),
        params={"baseVersion": 1},
        headers=ADMIN,
    )
    assert again.status_code == 200 and again.json()["version"] == 2
    versions = (await client.get(f"/admin/api/connections/{cid}/contract/versions", headers=ADMIN)).json()
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[0]["actor"] == "BERTH_ADMIN_TOKEN" and versions[0]["summary"] == "saved unchanged"
    restored = await client.post(f"/admin/api/connections/{cid}/contract/versions/1/restore", headers=ADMIN)
    assert restored.status_code == 200 and restored.json()["version"] == 3
    audit = (await client.get("/admin/api/audit", params={"action": "contract.save"}, headers=ADMIN)).json()
    assert len(audit["entries"] if isinstance(audit, dict) else audit) >= 3
    # A version number beyond the database's integers names no version (the fuzzer found a 500).
    for version in (0, 9, 2**31, 2**71):
        missing = await client.post(
            f"/admin/api/connections/{cid}/contract/versions/{version}/restore", headers=ADMIN
        )
        assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND", (version, missing.text)


async def test_bad_contracts_are_refused_with_the_field_and_nothing_saved(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    unknown = await put_contract(client, bookable, KEY_B, {"products": [{"product": "no-such-tour"}]})
    assert unknown.status_code == 400 and "products[0].product" in unknown.json()["errorMessage"]
    bad = await put_contract(client, bookable, KEY_B, {"rate": {"commission": "lots"}})
    assert bad.status_code == 400 and "rate.commission" in bad.json()["errorMessage"]
    cid = await connection_id(bookable, KEY_B)
    assert (await client.get(f"/admin/api/connections/{cid}/contract", headers=ADMIN)).json()["version"] == 0
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    refused = await client.put(
        f"/admin/api/connections/{cid}/contract", content=b'{"products": "ALL"}', headers=viewer
    )
    assert refused.status_code == 403
    assert (await client.get(f"/admin/api/connections/{cid}/contract", headers=viewer)).status_code == 200


async def test_a_contract_ending_before_it_starts_is_refused_naming_both_dates(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """Issue 47, finding 9: it answered 500."""
    refused = await put_contract(
        client, bookable, KEY_B, {"validFrom": "2026-12-31", "validUntil": "2026-01-01"}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["problems"] == [
        "validUntil: 2026-01-01 is before validFrom 2026-12-31: a contract ends on or after the day it starts"
    ]
    cid = await connection_id(bookable, KEY_B)
    assert (await client.get(f"/admin/api/connections/{cid}/contract", headers=ADMIN)).json()["version"] == 0
    same_day = await put_contract(
        client, bookable, KEY_B, {"validFrom": "2026-12-31", "validUntil": "2026-12-31"}
    )
    assert same_day.status_code == 200, same_day.text


async def test_a_reseller_sees_only_what_its_contract_sells_at_its_own_net(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    assert (await put_contract(client, bookable, KEY_B, THREE_PRODUCTS_AT_A_QUARTER_OFF)).status_code == 200
    products = (await client.get("/octo/products", headers=auth(KEY_B, PRICING))).json()
    assert [p["id"] for p in products] == ["thames-sightseeing", "tower-of-stories"]
    assert [o["id"] for o in products[0]["options"]] == ["DEFAULT"]
    adult_b = products[0]["options"][0]["units"][0]["pricingFrom"][0]
    assert (adult_b["retail"], adult_b["net"]) == (2500, 1800)
    adult_a = (await client.get("/octo/products/thames-sightseeing", headers=auth(KEY_A, PRICING))).json()
    assert adult_a["options"][0]["units"][0]["pricingFrom"][0]["net"] == 2000  # the catalogue's
    # Outside the contract: every route says the product or option does not exist.
    kayak = await client.get("/octo/products/sunset-kayak", headers=auth(KEY_B))
    assert kayak.status_code == 400 and kayak.json()["error"] == "INVALID_PRODUCT_ID"
    evening = await client.post(
        "/octo/availability",
        json={"productId": "thames-sightseeing", "optionId": "evening", "localDate": "2026-06-04"},
        headers=auth(KEY_B),
    )
    assert evening.json()["error"] == "INVALID_OPTION_ID"
    booked = await client.post(
        "/octo/bookings",
        json={"productId": "sunset-kayak", "optionId": "DEFAULT", "availabilityId": "2026-06-05T18:00:00+01:00",
              "unitItems": [{"unitId": "paddler"}]},
        headers=auth(KEY_B),
    )  # fmt: skip
    assert booked.json()["error"] == "INVALID_PRODUCT_ID"
    # Availability and bookings carry the reseller's net: the price list's for adults, the
    # commission's for children.
    availability = await client.post(
        "/octo/availability",
        json={"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityIds": [SLOT],
              "units": [{"id": "adult", "quantity": 1}, {"id": "child", "quantity": 1}], "currency": "EUR"},
        headers=auth(KEY_B, PRICING),
    )  # fmt: skip
    assert availability.json()[0]["pricing"]["net"] == 1800 + 1125
    held = await client.post(
        "/octo/bookings", json=reservation(("adult", "child"), currency="EUR"), headers=auth(KEY_B, PRICING)
    )
    assert held.status_code == 200, held.text
    assert held.json()["pricing"]["retail"] == 4000 and held.json()["pricing"]["net"] == 2925
    assert [i["pricing"]["net"] for i in held.json()["unitItems"]] == [1800, 1125]


async def test_a_product_taken_out_of_a_contract_keeps_its_bookings(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    held = await client.post("/octo/bookings", json=reservation(("adult",)), headers=auth(KEY_B, PRICING))
    uuid = held.json()["uuid"]
    only_museum = {"products": [{"product": "tower-of-stories"}], "rate": {"commission": 50}}
    assert (await put_contract(client, bookable, KEY_B, only_museum)).status_code == 200
    assert (await client.get(f"/octo/bookings/{uuid}", headers=auth(KEY_B))).status_code == 200
    confirmed = await client.post(
        f"/octo/bookings/{uuid}/confirm", json={"contact": GUEST}, headers=auth(KEY_B, PRICING)
    )
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["pricing"]["net"] == 2000  # sold before the contract changed
    cancelled = await client.post(f"/octo/bookings/{uuid}/cancel", json={"reason": "x"}, headers=auth(KEY_B))
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED"


async def test_a_contract_out_of_force_sells_nothing(client: httpx.AsyncClient, bookable: Services) -> None:
    later = {"products": "ALL", "validFrom": "2026-07-01"}
    assert (await put_contract(client, bookable, KEY_B, later)).status_code == 200
    assert (await client.get("/octo/products", headers=auth(KEY_B))).json() == []
    refused = await client.post("/octo/bookings", json=reservation(), headers=auth(KEY_B))
    assert refused.json()["error"] == "INVALID_PRODUCT_ID"
    assert "contract starts on 2026-07-01" in refused.json()["errorMessage"]
    assert len((await client.get("/octo/products", headers=auth(KEY_A))).json()) == 3


async def test_webhooks_announce_only_what_the_contract_sells(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    only_museum = {"products": [{"product": "tower-of-stories"}]}
    assert (await put_contract(client, bookable, KEY_B, only_museum)).status_code == 200
    async with receiver() as to_a, receiver() as to_b:
        await subscribe(client, to_a.url, event="product_update", key=KEY_A)
        await subscribe(client, to_b.url, event="product_update", key=KEY_B)
        products = booking_products()
        for product in products:
            product["internalName"] = product["internalName"] + " (renamed)"
        await bookable.catalog.import_text(catalog_to_yaml(catalog(*products)), actor=COMMAND_LINE)
        await drain(bookable)
        assert sorted(p["product"]["id"] for p in to_a.payloads()) == [
            "sunset-kayak", "thames-sightseeing", "tower-of-stories"
        ]  # fmt: skip
        assert [p["product"]["id"] for p in to_b.payloads()] == ["tower-of-stories"]


async def test_a_mapping_row_maps_only_to_what_its_connection_may_sell(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    only_museum = {"products": [{"product": "tower-of-stories"}]}
    assert (await put_contract(client, bookable, KEY_B, only_museum)).status_code == 200
    cid = await connection_id(bookable, KEY_B)
    [row] = await bookable.mappings.replace_all(
        cid, [MappingUpload(reseller_reference="cruise-1", option_required=False)]
    )
    refused = await client.patch(
        f"/admin/api/mappings/{row.id}", json={"productId": "thames-sightseeing"}, headers=ADMIN
    )
    assert refused.status_code == 400 and refused.json()["error"] == "INVALID_PRODUCT_ID"
    mapped = await client.patch(
        f"/admin/api/mappings/{row.id}", json={"productId": "tower-of-stories"}, headers=ADMIN
    )
    assert mapped.status_code == 200, mapped.text
