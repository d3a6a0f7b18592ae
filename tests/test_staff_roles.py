"""Staff accounts in the admin API: each role against a sample of each class of route (reads,
an operator's actions, an admin's), FORBIDDEN (403) for what a role may not do and nothing
changed by it, staff API tokens, and what disabling an account ends."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from berth.container import Services
from berth.domain.staff import COMMAND_LINE, Role
from tests.bookings_helpers import GUEST, confirm, reservation, reserve
from tests.conftest import ADMIN, auth
from tests.mappings_helpers import add_listings

READS = ("/admin/api/bookings", "/admin/api/connections", "/admin/api/mappings", "/admin/api/audit")


async def staff_token(services: Services, email: str, role: Role) -> dict[str, str]:
    """A member with this role, and the Authorization header of their new API token."""
    await services.staff.create(email, role, actor=COMMAND_LINE)
    _, token = await services.staff.issue_token(email, actor=COMMAND_LINE)
    return {"Authorization": f"Bearer {token}"}


async def confirmed(client: httpx.AsyncClient, day: int = 2) -> dict[str, Any]:
    booking = await reserve(client, reservation(availability_id=f"2026-06-0{day}T10:00:00+01:00"))
    assert (await confirm(client, booking["uuid"])).status_code == 200
    return booking


async def pending(client: httpx.AsyncClient) -> dict[str, Any]:
    """A PENDING booking: the sunset kayak asks the supplier to decide."""
    body = {
        **reservation(),
        "productId": "sunset-kayak",
        "availabilityId": "2026-06-06T18:00:00+01:00",
        "unitItems": [{"unitId": "paddler"}],
    }
    held = await reserve(client, body)
    contact = {**GUEST, "phoneNumber": "+447700900001"}
    answer = await client.post(
        f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=auth()
    )
    assert answer.json()["status"] == "PENDING", answer.text
    return held


async def status_of(client: httpx.AsyncClient, booking_id: str) -> str:
    detail = (await client.get(f"/admin/api/bookings/{booking_id}", headers=ADMIN)).json()
    return str(detail["booking"]["status"])


def refused(response: httpx.Response, needed: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["error"] == "FORBIDDEN"
    assert f"needs the {needed} role" in body["errorMessage"], body


@pytest.fixture
async def listed(bookable: Services) -> Services:
    return await add_listings(bookable)


async def pending_mapping(client: httpx.AsyncClient, reference: str) -> str:
    rows = (await client.get("/admin/api/mappings", params={"pending": "true"}, headers=ADMIN)).json()
    (found,) = [r["id"] for r in rows["mappings"] if r["resellerReference"] == reference]
    return str(found)


async def test_every_role_reads(client: httpx.AsyncClient, bookable: Services) -> None:
    for role in Role:
        headers = await staff_token(bookable, f"{role.value}@example.com", role)
        for path in READS:
            response = await client.get(path, headers=headers)
            assert response.status_code == 200, (role, path, response.text)
        me = (await client.get("/admin/api/me", headers=headers)).json()
        assert me["name"] == f"{role.value}@example.com" and me["role"] == role.value
    assert (await client.get("/admin/api/me", headers=ADMIN)).json() == {
        "name": "BERTH_ADMIN_TOKEN",
        "role": "admin",
        "staffId": None,
    }


async def test_a_viewer_may_not_act_and_nothing_changes(client: httpx.AsyncClient, listed: Services) -> None:
    viewer = await staff_token(listed, "viewer@example.com", Role.VIEWER)
    booking = await confirmed(client)
    waiting = await pending(client)
    mapping = await pending_mapping(client, "RA-MUSEUM")

    refused(await client.post(f"/admin/api/bookings/{booking['id']}/redeem", headers=viewer), "operator")
    refused(await client.post(f"/admin/api/bookings/{booking['id']}/cancel", headers=viewer), "operator")
    refused(await client.post(f"/admin/api/bookings/{waiting['id']}/accept", headers=viewer), "operator")
    refused(await client.post(f"/admin/api/bookings/{waiting['id']}/reject", headers=viewer), "operator")
    museum = {"productId": "tower-of-stories"}
    refused(await client.patch(f"/admin/api/mappings/{mapping}", json=museum, headers=viewer), "operator")
    refused(await client.post("/admin/api/connections", json={"name": "Nope"}, headers=viewer), "admin")

    assert await status_of(client, booking["id"]) == "CONFIRMED"
    assert await status_of(client, waiting["id"]) == "PENDING"
    assert await pending_mapping(client, "RA-MUSEUM") == mapping
    by_viewer = await client.get("/admin/api/audit", params={"actor": "viewer@example.com"}, headers=ADMIN)
    assert by_viewer.json()["total"] == 0


async def test_an_operator_acts_on_bookings_and_mappings_but_manages_nothing(
    client: httpx.AsyncClient, listed: Services
) -> None:
    operator = await staff_token(listed, "operator@example.com", Role.OPERATOR)
    booking = await confirmed(client)
    waiting = await pending(client)
    mapping = await pending_mapping(client, "RA-MUSEUM")
    connections_before = (await client.get("/admin/api/connections", headers=ADMIN)).json()
    first = connections_before[0]["id"]

    redeemed = await client.post(f"/admin/api/bookings/{booking['id']}/redeem", headers=operator)
    assert redeemed.status_code == 200 and redeemed.json()["status"] == "REDEEMED"
    accepted = await client.post(f"/admin/api/bookings/{waiting['id']}/accept", headers=operator)
    assert accepted.status_code == 200 and accepted.json()["status"] == "CONFIRMED"
    museum = {"productId": "tower-of-stories"}
    completed = await client.patch(f"/admin/api/mappings/{mapping}", json=museum, headers=operator)
    assert completed.status_code == 200 and completed.json()["status"] == "MAPPED"

    refused(await client.post("/admin/api/connections", json={"name": "Nope"}, headers=operator), "admin")
    refused(await client.post(f"/admin/api/connections/{first}/revoke", headers=operator), "admin")
    refused(await client.post(f"/admin/api/connections/{first}/rotate-secret", headers=operator), "admin")
    catalog = (await client.get("/admin/api/catalog", headers=operator)).text
    refused(
        await client.put("/admin/api/catalog", content=catalog.encode(), headers=operator), "editor or admin"
    )
    refused(await client.post("/admin/api/deliveries/any/redeliver", headers=operator), "admin")
    refused(await client.get("/admin/api/staff", headers=operator), "admin")

    assert (await client.get("/admin/api/connections", headers=ADMIN)).json() == connections_before


async def test_an_admin_manages_connections_the_catalogue_and_staff(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    admin = await staff_token(bookable, "admin@example.com", Role.ADMIN)
    booking = await confirmed(client)
    cancelled = await client.post(
        f"/admin/api/bookings/{booking['id']}/cancel", json={"reason": "storm"}, headers=admin
    )
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED"
    created = await client.post("/admin/api/connections", json={"name": "New reseller"}, headers=admin)
    assert created.status_code == 200, created.text
    connection = created.json()["connection"]["id"]
    rotated = await client.post(f"/admin/api/connections/{connection}/rotate-secret", headers=admin)
    assert rotated.status_code == 200
    assert (await client.post(f"/admin/api/connections/{connection}/revoke", headers=admin)).json()[
        "active"
    ] is False
    catalog = (await client.get("/admin/api/catalog", headers=admin)).text
    imported = await client.put("/admin/api/catalog", content=catalog.encode(), headers=admin)
    assert imported.status_code == 200 and imported.json()["imported"] is True
    members = (await client.get("/admin/api/staff", headers=admin)).json()
    assert [(m["email"], m["role"], m["active"]) for m in members] == [("admin@example.com", "admin", True)]
    assert members[0]["tokenHint"].startswith("…")


async def test_an_editor_edits_the_catalogue_and_nothing_else(
    client: httpx.AsyncClient, listed: Services
) -> None:
    editor = await staff_token(listed, "edie@example.com", Role.EDITOR)
    booking = await confirmed(client)
    exported = await client.get("/admin/api/catalog", headers=editor)
    version = int(exported.headers["Catalog-Version"])
    lowered = exported.text.replace("retail: 2500", "retail: 2400", 1)
    assert lowered != exported.text
    saved = await client.put(
        "/admin/api/catalog", params={"baseVersion": version}, content=lowered.encode(), headers=editor
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["version"] == version + 1
    assert (await client.get("/admin/api/catalog/versions", headers=editor)).json()[0]["actor"] == (
        "edie@example.com"
    )

    refused(await client.post(f"/admin/api/bookings/{booking['id']}/redeem", headers=editor), "operator")
    refused(await client.post("/admin/api/connections", json={"name": "Nope"}, headers=editor), "admin")
    refused(await client.get("/admin/api/staff", headers=editor), "admin")
    assert await status_of(client, booking["id"]) == "CONFIRMED"


async def test_staff_tokens_are_checked_like_keys(client: httpx.AsyncClient, bookable: Services) -> None:
    headers = await staff_token(bookable, "ana@example.com", Role.OPERATOR)
    assert (await client.get("/admin/api/me", headers=headers)).status_code == 200

    _, newer = await bookable.staff.issue_token("ana@example.com", actor=COMMAND_LINE)
    old = await client.get("/admin/api/me", headers=headers)
    assert old.status_code == 400 and old.json()["error"] == "UNAUTHORIZED"  # replaced
    fresh = {"Authorization": f"Bearer {newer}"}
    assert (await client.get("/admin/api/me", headers=fresh)).json()["role"] == "operator"

    await bookable.staff.disable("ana@example.com", actor=COMMAND_LINE)
    gone = await client.get("/admin/api/bookings", headers=fresh)
    assert gone.status_code == 400 and gone.json()["error"] == "UNAUTHORIZED"
    guessed = await client.get("/admin/api/me", headers={"Authorization": "Bearer berth_staff_guess"})
    assert guessed.json()["error"] == "UNAUTHORIZED"
    # A reseller's key opens no admin door.
    assert (await client.get("/admin/api/me", headers=auth())).json()["error"] == "UNAUTHORIZED"


async def test_bad_staff_input_gets_clear_errors(bookable: Services) -> None:
    from berth.domain.errors import BadRequest, NotFound

    with pytest.raises(BadRequest, match="not an email address"):
        await bookable.staff.create("not-an-email", Role.VIEWER, actor=COMMAND_LINE)
    await bookable.staff.create("Ana@Example.com", Role.VIEWER, actor=COMMAND_LINE)
    with pytest.raises(BadRequest, match="already exists"):
        await bookable.staff.create("ana@example.com", Role.ADMIN, actor=COMMAND_LINE)
    with pytest.raises(NotFound):
        await bookable.staff.issue_token("bob@example.com", actor=COMMAND_LINE)
    await bookable.staff.disable("ana@example.com", actor=COMMAND_LINE)
    with pytest.raises(BadRequest, match="already disabled"):
        await bookable.staff.disable("ana@example.com", actor=COMMAND_LINE)
    with pytest.raises(BadRequest, match="disabled"):
        await bookable.staff.issue_token("ana@example.com", actor=COMMAND_LINE)
    assert [m.email for m in await bookable.staff.list()] == ["ana@example.com"]


async def test_admins_manage_staff_in_the_api(client: httpx.AsyncClient, bookable: Services) -> None:
    operator = await staff_token(bookable, "olga@example.com", Role.OPERATOR)
    body = {"email": "Nia@Example.com", "role": "viewer"}
    refused(await client.post("/admin/api/staff", json=body, headers=operator), "admin")
    created = await client.post("/admin/api/staff", json=body, headers=ADMIN)
    assert created.status_code == 200, created.text
    nia = created.json()["staff"]
    assert (
        nia["email"] == "nia@example.com"
        and nia["role"] == "viewer"
        and len(created.json()["password"]) == 16
    )
    refused(await client.post(f"/admin/api/staff/{nia['id']}/token", headers=operator), "admin")
    issued = (await client.post(f"/admin/api/staff/{nia['id']}/token", headers=ADMIN)).json()
    token = {"Authorization": f"Bearer {issued['token']}"}
    assert (await client.get("/admin/api/me", headers=token)).json()["name"] == "nia@example.com"
    refused(await client.post(f"/admin/api/staff/{nia['id']}/disable", headers=operator), "admin")
    disabled = (await client.post(f"/admin/api/staff/{nia['id']}/disable", headers=ADMIN)).json()
    assert disabled["active"] is False and disabled["disabledAt"] is not None
    assert (await client.get("/admin/api/me", headers=token)).json()["error"] == "UNAUTHORIZED"

    for bad, field in (({"email": "nia@example.com", "role": "boss"}, "role"), ({"email": "x"}, "role")):
        answer = await client.post("/admin/api/staff", json=bad, headers=ADMIN)
        assert answer.status_code == 400 and answer.json()["error"] == "BAD_REQUEST"
        assert field in answer.json()["errorMessage"]
    again = await client.post("/admin/api/staff", json=body, headers=ADMIN)
    assert again.status_code == 400 and "already exists (disabled)" in again.json()["errorMessage"]
    missing = await client.post("/admin/api/staff/nobody/disable", headers=ADMIN)
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"


async def test_no_admin_disables_itself_nor_the_last_active_admin(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """One rule in the service for every door (issue 32): the API, the back office, the command
    line."""
    from berth.domain.errors import BadRequest

    ada = await staff_token(bookable, "ada@example.com", Role.ADMIN)
    ada_id = (await client.get("/admin/api/me", headers=ada)).json()["staffId"]
    own = await client.post(f"/admin/api/staff/{ada_id}/disable", headers=ada)
    assert own.status_code == 400 and own.json()["error"] == "BAD_REQUEST", own.text
    assert "your own account" in own.json()["errorMessage"]
    # The bootstrap token and the command line may not leave Berth without an active admin.
    last = await client.post(f"/admin/api/staff/{ada_id}/disable", headers=ADMIN)
    assert last.status_code == 400 and "last active admin" in last.json()["errorMessage"], last.text
    with pytest.raises(BadRequest, match="last active admin"):
        await bookable.staff.disable("ada@example.com", actor=COMMAND_LINE)
    assert (await bookable.staff.get("ada@example.com")).active
    # With a second admin, either may disable the other, then not the one left.
    bea = await staff_token(bookable, "bea@example.com", Role.ADMIN)
    assert (await client.post(f"/admin/api/staff/{ada_id}/disable", headers=bea)).status_code == 200
    bea_id = (await client.get("/admin/api/me", headers=bea)).json()["staffId"]
    alone = await client.post(f"/admin/api/staff/{bea_id}/disable", headers=ADMIN)
    assert alone.status_code == 400 and "last active admin" in alone.json()["errorMessage"]
    # Members of other roles are not counted, and may be disabled as before.
    await bookable.staff.create("vic@example.com", Role.VIEWER, actor=COMMAND_LINE)
    assert not (await bookable.staff.disable("vic@example.com", actor=COMMAND_LINE)).active
