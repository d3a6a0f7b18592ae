"""The offers document in the admin API (issue 51): saved as YAML or JSON, versioned and audited,
refused on a stale base or with every problem named (nothing saved), restored; read by every
staff role, changed by editors and admins only. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from berth.container import Services
from berth.domain.staff import Role
from tests.bookings_helpers import reservation, reserve
from tests.conftest import ADMIN, KEY_A
from tests.test_staff_roles import staff_token

YAML = {"Content-Type": "application/yaml"}
TWO_OFFERS = """\
offers:
  - id: harbour-ten
    code: harbour10
    texts: {en-GB: {title: Harbour 10}}
    discount: {percent: 10}
    appliesTo: [{product: thames-sightseeing, units: [adult]}]
    maxUses: 5
    channels: [SHOP]
  - id: early-bird
    texts: {en-GB: {title: Early bird}}
    discount: {amounts: {EUR: 200}, per: BOOKING}
    travelFrom: 2026-06-01
"""


async def put(
    client: httpx.AsyncClient, body: str | bytes, headers: dict[str, str] = ADMIN, **params: Any
) -> httpx.Response:
    content = body.encode() if isinstance(body, str) else body
    return await client.put("/admin/api/offers", content=content, params=params, headers={**headers, **YAML})


async def current_version(client: httpx.AsyncClient) -> int:
    version: int = (await client.get("/admin/api/offers", headers=ADMIN)).json()["version"]
    return version


async def test_offers_are_saved_versioned_audited_restored_and_refused_on_a_stale_base(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    first = (await client.get("/admin/api/offers", headers=ADMIN)).json()
    assert first["version"] == 0 and first["document"] == {"offers": []} and first["uses"] == {}
    saved = await put(client, TWO_OFFERS, baseVersion=0)
    assert saved.status_code == 200, saved.text
    answer = saved.json()
    assert answer["version"] == 1 and answer["actor"] == "BERTH_ADMIN_TOKEN"
    assert answer["summary"] == "added harbour-ten, added early-bird"
    offers = answer["document"]["offers"]
    assert [o.get("code") for o in offers] == ["HARBOUR10", None]  # codes are read as capitals
    assert offers[1]["discount"] == {"amounts": {"EUR": 200}, "per": "BOOKING"}
    assert (await client.get("/admin/api/offers", headers=ADMIN)).json() == answer

    stale = await put(client, "offers: []", baseVersion=0)
    assert stale.status_code == 409 and stale.json()["error"] == "CONFLICT", stale.text
    assert stale.json()["baseVersion"] == 0 and stale.json()["currentVersion"] == 1
    # GET's whole answer, as JSON, can be sent back as it is.
    again = await put(client, orjson.dumps(answer), baseVersion=1)
    assert again.status_code == 200 and again.json()["version"] == 2, again.text
    assert again.json()["summary"] == "no change"
    removed = await put(client, "offers: []", baseVersion=2)
    assert removed.json()["document"] == {"offers": []} and removed.json()["version"] == 3

    versions = (await client.get("/admin/api/offers/versions", headers=ADMIN)).json()
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert (
        versions[2]["document"] == answer["document"] and versions[0]["createdAt"] == "2026-06-01T08:00:00Z"
    )
    restored = await client.post("/admin/api/offers/versions/1/restore", headers=ADMIN)
    assert restored.status_code == 200, restored.text
    assert restored.json()["version"] == 4 and restored.json()["summary"] == "restored version 1"
    assert restored.json()["document"] == answer["document"]
    audit = (await client.get("/admin/api/audit", params={"action": "offers.save"}, headers=ADMIN)).json()
    assert [e["details"]["version"] for e in audit["entries"]] == [4, 3, 2, 1]
    assert {e["target"]["kind"] for e in audit["entries"]} == {"offers"}
    # A version number beyond the database's integers names no version.
    for version in (0, 9, 2**31, 2**71):
        missing = await client.post(f"/admin/api/offers/versions/{version}/restore", headers=ADMIN)
        assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND", (version, missing.text)
    assert await current_version(client) == 4


async def test_a_bad_document_is_refused_naming_every_problem_and_nothing_is_saved(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    fields = await put(
        client,
        "offers:\n"
        "  - {id: a, code: x, texts: {en-GB: {title: A}}, discount: {percent: 10, amounts: {EUR: 1}}}\n"
        "  - {id: b, texts: {}, discount: {percent: 10}}\n"
        "  - {id: c, texts: {en: {title: C}}, discount: {percent: 5}, travelFrom: 2026-07-01, travelUntil: 2026-06-01}\n",
    )
    assert fields.status_code == 400 and fields.json()["error"] == "BAD_REQUEST", fields.text
    problems = fields.json()["problems"]
    assert len(problems) == 4, problems
    for named in (
        "offers.0.code",
        "offers.0.discount",
        "offers.1.texts",
        "offers.2: Value error, travelUntil is before travelFrom",
    ):
        assert any(named in p for p in problems), (named, problems)
        assert named in fields.json()["errorMessage"]

    catalogue = await put(
        client,
        "offers:\n"
        "  - id: a\n    texts: {en-GB: {title: A}}\n    discount: {percent: 10}\n"
        "    appliesTo: [{product: no-such-tour}, {product: thames-sightseeing, options: [NIGHT], units: [dog]}]\n"
        "    channels: [SHOP, no-such-connection]\n",
    )
    assert catalogue.status_code == 400, catalogue.text
    assert catalogue.json()["problems"] == [
        "offer 'a': channel 'no-such-connection' is neither SHOP nor a connection's id",
        "offer 'a': product 'no-such-tour' is not in the catalogue",
        "offer 'a': product 'thames-sightseeing' has no option 'NIGHT'",
        "offer 'a': no option of product 'thames-sightseeing' it applies to has unit 'dog'",
    ]

    unreadable = await put(client, "offers:\n  - id: a\n   code: [\n")
    assert unreadable.status_code == 400 and "line 3" in unreadable.json()["errorMessage"], unreadable.text
    assert unreadable.json()["problems"]
    for body, said in (
        ("", "empty"),
        (b"\xff\xfe", "UTF-8"),
        ("- just a list", "a mapping with one key, offers"),
        ("offers: []\nextra: 1", "extra"),
        ("a: &x [1]\nb: *x", "alias"),
    ):
        refused = await put(client, body)
        assert refused.status_code == 400, (body, refused.text)
        assert said.lower() in refused.text.lower(), (body, refused.text)
    beyond = await put(client, "offers: []", baseVersion=7)
    assert beyond.status_code == 400 and "not a version of the offers" in beyond.json()["errorMessage"]
    too_big = await put(client, "offers: []", baseVersion=2**31)
    assert too_big.status_code == 400, too_big.text
    assert await current_version(client) == 0
    assert (await client.get("/admin/api/offers/versions", headers=ADMIN)).json() == []


async def test_viewers_and_operators_read_the_offers_and_editors_and_admins_change_them(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    assert (await put(client, TWO_OFFERS)).status_code == 200
    for role in (Role.VIEWER, Role.OPERATOR):
        token = await staff_token(bookable, f"{role.value}@example.com", role)
        assert (await client.get("/admin/api/offers", headers=token)).status_code == 200
        assert (await client.get("/admin/api/offers/versions", headers=token)).status_code == 200
        refused = await put(client, "offers: []", token)
        assert refused.status_code == 403 and "needs the editor or admin role" in refused.text, refused.text
        restore = await client.post("/admin/api/offers/versions/1/restore", headers=token)
        assert restore.status_code == 403, restore.text
    assert await current_version(client) == 1
    editor = await staff_token(bookable, "editor@example.com", Role.EDITOR)
    saved = await put(client, "offers: []", editor, baseVersion=1)
    assert saved.status_code == 200 and saved.json()["actor"] == "editor@example.com", saved.text
    restored = await client.post("/admin/api/offers/versions/1/restore", headers=editor)
    assert restored.status_code == 200 and restored.json()["version"] == 3, restored.text


async def test_each_offer_shows_its_uses_by_live_bookings(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    automatic = (
        "offers:\n  - id: june\n    texts: {en-GB: {title: June}}\n    discount: {percent: 10}\n"
        "    appliesTo: [{product: thames-sightseeing}]\n"
    )
    assert (await put(client, automatic)).status_code == 200
    held = await reserve(client, reservation(), KEY_A, capabilities="octo/offers, octo/pricing")
    assert held["offerCode"] is None and held["offer"]["id"], held  # the automatic offer applied
    assert (await client.get("/admin/api/offers", headers=ADMIN)).json()["uses"] == {"june": 1}
    cancelled = await client.post(
        f"/octo/bookings/{held['uuid']}/cancel", json={}, headers={"Authorization": f"Bearer {KEY_A}"}
    )
    assert cancelled.status_code == 200, cancelled.text
    assert (await client.get("/admin/api/offers", headers=ADMIN)).json()["uses"] == {}
