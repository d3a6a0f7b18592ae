"""Staff in the back office: signing in by email and password (a one-time password first asks
for one's own), what each role sees and may do (refused forms answer a FORBIDDEN page and
change nothing), signing out everywhere when an account is disabled, and the audit page."""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi import FastAPI

from berth.container import Services
from berth.domain.audit import AuditEntry, AuditFilter, departure_target
from berth.domain.staff import COMMAND_LINE, Role
from berth.http.admin.pages.audit import target_path
from tests.backoffice.helpers import csrf_of, notice_of, text_of
from tests.backoffice.test_actions import confirmed, status_of
from tests.bookings_helpers import SLOT
from tests.conftest import START

PASSWORD = "correct horse battery"


async def member(services: Services, email: str, role: Role) -> None:
    """An account whose owner has already chosen PASSWORD."""
    _, once = await services.staff.create(email, role, actor=COMMAND_LINE)
    await services.staff.change_password(await services.staff.get(email), once, PASSWORD)


async def sign_in(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> httpx.Response:
    form = await client.get("/admin/sign-in")
    return await client.post(
        "/admin/sign-in",
        data={"email": email, "password": password, "csrf_token": csrf_of(form.text), "next": "/admin"},
    )


async def signed_in(client: httpx.AsyncClient, email: str) -> str:
    """Signed in as `email`; the CSRF token of the session."""
    response = await sign_in(client, email)
    assert response.status_code == 303 and response.headers["location"] == "/admin", response.text
    return csrf_of((await client.get("/admin")).text)


def second_client(app: FastAPI) -> httpx.AsyncClient:
    """Another browser: a client with cookies of its own."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://berth.test")


async def test_a_one_time_password_leads_to_choosing_ones_own(
    app: FastAPI, client: httpx.AsyncClient, office: Services
) -> None:
    _, once = await office.staff.create("ana@example.com", Role.OPERATOR, actor=COMMAND_LINE)
    first = await sign_in(client, "Ana@Example.com", once)
    assert first.status_code == 303 and first.headers["location"] == "/admin/password"
    for path in ("/admin", "/admin/bookings", "/admin/audit"):
        assert (await client.get(path)).headers["location"] == "/admin/password"
    form = await client.get("/admin/password")
    assert "You signed in with a one-time password" in text_of(form.text)
    csrf = csrf_of(form.text)
    async with second_client(app) as other:  # signing out needs no password of one's own
        await sign_in(other, "ana@example.com", once)
        out_csrf = csrf_of((await other.get("/admin/password")).text)
        out = await other.post("/admin/sign-out", data={"csrf_token": out_csrf})
        assert out.status_code == 303 and out.headers["location"] == "/admin/sign-in?signed_out"

    async def choose(current: str, new: str, repeat: str | None = None) -> httpx.Response:
        data = {
            "current": current,
            "new": new,
            "repeat": new if repeat is None else repeat,
            "csrf_token": csrf,
        }
        return await client.post("/admin/password", data=data)

    short = await choose(once, "short")
    assert short.status_code == 400 and "at least 12 characters" in text_of(short.text)
    differ = await choose(once, PASSWORD, "something else")
    assert differ.status_code == 400 and "The two new passwords differ" in text_of(differ.text)
    wrong = await choose("not-it-at-all", PASSWORD)
    assert wrong.status_code == 400 and "current password is not right" in text_of(wrong.text)
    done = await choose(once, PASSWORD)
    assert done.status_code == 303 and done.headers["location"] == "/admin"
    dashboard = await client.get("/admin")
    assert dashboard.status_code == 200 and notice_of(dashboard.text) == "Your new password is set."
    assert "ana@example.com · operator" in text_of(dashboard.text)

    async with second_client(app) as other:
        assert (await sign_in(other, "ana@example.com", once)).status_code == 401
        refused = await sign_in(other, "ana@example.com", "a wrong password")
        assert refused.status_code == 401
        assert "do not match an active staff account" in text_of(refused.text)
        assert (await sign_in(other, "ana@example.com")).headers["location"] == "/admin"


async def test_what_each_role_sees_and_may_do(
    app: FastAPI, client: httpx.AsyncClient, office: Services
) -> None:
    for role in Role:
        await member(office, f"{role.value}@example.com", role)
    booking = await confirmed(client)
    mapping = next(
        s.row for s in (await office.mappings.search(pending=True, connection_id=None, limit=1, offset=0))[0]
    )

    async def pages_for(email: str) -> tuple[str, dict[str, str]]:
        async with second_client(app) as browser:
            csrf = await signed_in(browser, email)
            shown = {
                "booking": (await browser.get(f"/admin/bookings/{booking['id']}")).text,
                "connections": (await browser.get("/admin/connections")).text,
                "mapping": (await browser.get(f"/admin/mappings/{mapping.id}")).text,
            }
            redeem = await browser.post(f"/admin/bookings/{booking['id']}/redeem", data={"csrf_token": csrf})
            create = await browser.post("/admin/connections", data={"name": "Sneaky", "csrf_token": csrf})
            shown["redeem"] = f"{redeem.status_code} {text_of(redeem.text)}"
            shown["create"] = f"{create.status_code} {text_of(create.text)}"
            return csrf, shown

    _, viewer = await pages_for("viewer@example.com")
    assert f"/admin/bookings/{booking['id']}/redeem" not in viewer["booking"]
    assert "Your role, viewer, does not allow acting on bookings" in text_of(viewer["booking"])
    assert 'action="/admin/mappings/' not in viewer["mapping"]
    assert (
        'action="/admin/connections"' not in viewer["connections"] and "/revoke" not in viewer["connections"]
    )
    assert viewer["redeem"].startswith("403 ") and "needs the operator role" in viewer["redeem"]
    assert viewer["create"].startswith("403 ") and "needs the admin role" in viewer["create"]
    assert await status_of(client, booking["id"]) == "CONFIRMED"

    _, operator = await pages_for("operator@example.com")
    assert f"/admin/bookings/{booking['id']}/redeem" in operator["booking"]
    assert f'action="/admin/mappings/{mapping.id}"' in operator["mapping"]
    assert 'action="/admin/connections"' not in operator["connections"]
    assert operator["redeem"].startswith("200 ") or operator["redeem"].startswith("303 ")
    assert await status_of(client, booking["id"]) == "REDEEMED"
    assert operator["create"].startswith("403 ")
    names = [c.name for c in await office.connections.list()]
    assert "Sneaky" not in names

    _, admin = await pages_for("admin@example.com")
    assert 'action="/admin/connections"' in admin["connections"] and "/revoke" in admin["connections"]
    assert admin["create"].startswith("200 ") and "Sneaky" in admin["create"]


async def test_disabling_an_account_signs_it_out_everywhere(app: FastAPI, office: Services) -> None:
    await member(office, "ana@example.com", Role.OPERATOR)
    async with second_client(app) as laptop, second_client(app) as phone:
        await signed_in(laptop, "ana@example.com")
        await signed_in(phone, "ana@example.com")
        await office.staff.disable("ana@example.com", actor=COMMAND_LINE)
        for browser in (laptop, phone):
            response = await browser.get("/admin/bookings")
            assert response.status_code == 303
            assert response.headers["location"].startswith("/admin/sign-in")
        refused = await sign_in(laptop, "ana@example.com")
        assert refused.status_code == 401


async def test_the_admin_token_still_signs_in_as_admin(client: httpx.AsyncClient, office: Services) -> None:
    form = await client.get("/admin/sign-in")
    answer = await client.post(
        "/admin/sign-in", data={"password": "demo-admin", "csrf_token": csrf_of(form.text)}
    )
    assert answer.status_code == 303
    page = text_of((await client.get("/admin/connections")).text)
    assert "admin token · admin" in page and "Create and show its API key" in page
    password = await client.get("/admin/password")
    assert "has no password" in text_of(password.text)


def table_of(page: str) -> str:
    """The text of the audit page's table of entries."""
    return text_of(page.split('<table class="audit">', 1)[1]) if '<table class="audit">' in page else ""


async def test_the_audit_page(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    booking: dict[str, Any] = await confirmed(client)
    await client.post(f"/admin/bookings/{booking['id']}/redeem", data={"csrf_token": csrf})
    await client.post("/admin/connections", data={"name": "Harbour Deals", "csrf_token": csrf})
    page = await client.get("/admin/audit")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "Redeemed booking " + booking["supplierReference"] in text
    assert "Created connection Harbour Deals" in text and "BERTH_ADMIN_TOKEN" in text
    assert f'href="/admin/bookings/{booking["id"]}"' in page.text
    assert 'aria-current="page">Audit' in page.text

    only = (await client.get("/admin/audit", params={"action": "connection.create"})).text
    assert "1 entry" in text_of(only)
    assert "Created connection Harbour Deals" in table_of(only) and "Redeemed booking" not in table_of(only)
    by_target = text_of(
        (await client.get("/admin/audit", params={"target": booking["supplierReference"]})).text
    )
    assert "1 entry" in by_target and "Redeemed booking" in by_target
    nobody = text_of((await client.get("/admin/audit", params={"actor": "bob@example.com"})).text)
    assert "No entry matches" in nobody
    later = text_of((await client.get("/admin/audit", params={"from": "2026-06-02"})).text)
    assert "No entry matches" in later
    today = text_of(
        (await client.get("/admin/audit", params={"from": "2026-06-01", "to": "2026-06-01"})).text
    )
    assert "Created connection Harbour Deals" in today
    bad = text_of((await client.get("/admin/audit", params={"from": "June"})).text)
    assert "From: 'June' is not a date like 2026-06-02." in bad


async def test_admins_manage_staff_in_the_back_office(
    app: FastAPI, client: httpx.AsyncClient, office: Services
) -> None:
    await member(office, "olga@example.com", Role.OPERATOR)
    await member(office, "adam@example.com", Role.ADMIN)
    async with second_client(app) as operator:
        await signed_in(operator, "olga@example.com")
        dashboard = (await operator.get("/admin")).text
        assert 'href="/admin/staff"' not in dashboard  # not in the menu
        refused = await operator.get("/admin/staff")
        assert refused.status_code == 403 and "needs the admin role" in text_of(refused.text)

    csrf = await signed_in(client, "adam@example.com")
    listing = await client.get("/admin/staff")
    assert listing.status_code == 200 and 'href="/admin/staff"' in listing.text
    created = await client.post(
        "/admin/staff", data={"email": "nia@example.com", "role": "viewer", "csrf_token": csrf}
    )
    assert created.status_code == 200
    text = text_of(created.text)
    assert "Account nia@example.com created (viewer)" in text and "only this once" in text
    password = re.search(r'<code id="new-password" class="break">([^<]+)</code>', created.text)
    assert password is not None and len(password.group(1)) == 16
    duplicate = await client.post(
        "/admin/staff", data={"email": "NIA@example.com", "role": "admin", "csrf_token": csrf}
    )
    assert duplicate.status_code == 400 and "already exists" in text_of(duplicate.text)
    bad_role = await client.post(
        "/admin/staff", data={"email": "zed@example.com", "role": "boss", "csrf_token": csrf}
    )
    assert bad_role.status_code == 400 and "'boss' is not a role" in text_of(bad_role.text)

    nia = await office.staff.get("nia@example.com")
    issued = await client.post(f"/admin/staff/{nia.id}/token", data={"csrf_token": csrf})
    assert "New API token of nia@example.com" in text_of(issued.text) and "berth_staff_" in issued.text
    adam = await office.staff.get("adam@example.com")
    assert f"/admin/staff/{adam.id}/disable" not in listing.text  # not one's own
    own = await client.post(f"/admin/staff/{adam.id}/disable", data={"csrf_token": csrf})
    assert own.status_code == 303 and (await office.staff.get("adam@example.com")).active
    gone = await client.post(f"/admin/staff/{nia.id}/disable", data={"csrf_token": csrf})
    assert gone.status_code == 303
    after = await client.get("/admin/staff")
    assert (
        notice_of(after.text)
        == "nia@example.com disabled: signed out everywhere, and their API token no longer works."
    )
    assert "DISABLED" in text_of(after.text)
    trail = [
        (e.actor, e.action)
        for e in (await office.audit.search(AuditFilter(actor="adam@example.com"), 10, 0))[0]
    ]
    assert trail == [
        ("adam@example.com", "staff.disable"),
        ("adam@example.com", "staff.token"),
        ("adam@example.com", "staff.create"),
        ("adam@example.com", "staff.password"),  # chose his own, before
    ]


async def test_a_departure_entry_links_to_its_manifest(client: httpx.AsyncClient, csrf: str) -> None:
    """How the departure actions (issue 21's other half) name their target, and where it leads."""
    target = departure_target("thames-sightseeing", "DEFAULT", SLOT, "Thames 2 Jun 10:00")
    entry = AuditEntry(1, START, "olga@example.com", None, "operator", "departure.close", target)
    path = target_path(entry)
    assert path == "/admin/slots/thames-sightseeing/DEFAULT/2026-06-02T10%3A00%3A00%2B01%3A00"
    assert path is not None and (await client.get(path)).status_code == 200
