"""Who may do what (issue 39): one table for every route of the admin API and every page and form
of the back office, walked with each role (viewer, editor, operator, admin). A role the table
allows is never refused; every other role gets FORBIDDEN (403) naming the role needed. A route
the table does not list fails the test, so a route added later needs its rule here (and in the
role table of docs/operations.md). Saving the catalogue over live bookings is the admin's
alone, through the API and the pages alike."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
import yaml
from fastapi import FastAPI

from berth.container import Services
from berth.domain.staff import COMMAND_LINE, Role
from berth.http.admin.pages.checkin import CSRF_HEADER
from tests.backoffice.helpers import csrf_of
from tests.backoffice.test_actions import confirmed
from tests.backoffice.test_staff_pages import member, second_client, signed_in
from tests.conftest import ADMIN
from tests.routes import routes_of

V, OP, E, A = Role.VIEWER, Role.OPERATOR, Role.EDITOR, Role.ADMIN
# Open without signing in (the sign-in form, files) or to whoever is signed in, whatever the
# role (choosing one's password, signing out): no role rule.
OPEN = None

API: dict[tuple[str, str], Role] = {
    ("GET", "/admin/api/me"): V,
    ("GET", "/admin/api/audit"): V,
    ("GET", "/admin/api/bookings"): V,
    ("GET", "/admin/api/bookings.csv"): V,
    ("GET", "/admin/api/bookings/{bookingId}"): V,
    ("GET", "/admin/api/bookings/{bookingId}/mail"): V,
    ("POST", "/admin/api/bookings/{bookingId}/accept"): OP,
    ("POST", "/admin/api/bookings/{bookingId}/cancel"): OP,
    ("POST", "/admin/api/bookings/{bookingId}/undo-admission"): OP,
    ("POST", "/admin/api/bookings/{bookingId}/receipt"): OP,
    ("POST", "/admin/api/bookings/{bookingId}/redeem"): OP,
    ("POST", "/admin/api/bookings/{bookingId}/reject"): OP,
    ("GET", "/admin/api/catalog"): V,
    ("PUT", "/admin/api/catalog"): E,
    ("GET", "/admin/api/catalog/versions"): V,
    ("GET", "/admin/api/catalog/versions/{version}"): V,
    ("POST", "/admin/api/catalog/versions/{version}/restore"): E,
    ("POST", "/admin/api/checkin"): OP,
    ("GET", "/admin/api/checkin/departure"): V,
    ("POST", "/admin/api/checkin/lookup"): V,
    ("POST", "/admin/api/checkin/undo"): OP,
    ("GET", "/admin/api/connections"): V,
    ("POST", "/admin/api/connections"): A,
    ("POST", "/admin/api/connections/{connectionId}/revoke"): A,
    ("POST", "/admin/api/connections/{connectionId}/rotate-secret"): A,
    ("GET", "/admin/api/connections/{connectionId}/contract"): V,
    ("PUT", "/admin/api/connections/{connectionId}/contract"): E,
    ("GET", "/admin/api/connections/{connectionId}/contract/versions"): V,
    ("POST", "/admin/api/connections/{connectionId}/contract/versions/{version}/restore"): E,
    ("GET", "/admin/api/connections/{connectionId}/statements/{month}"): V,
    ("GET", "/admin/api/deliveries"): V,
    ("GET", "/admin/api/deliveries/{deliveryId}"): V,
    ("POST", "/admin/api/deliveries/{deliveryId}/redeliver"): A,
    ("GET", "/admin/api/departures"): V,
    ("GET", "/admin/api/departures/{productId}/{optionId}/{availabilityId}"): V,
    ("PATCH", "/admin/api/departures/{productId}/{optionId}/{availabilityId}"): OP,
    ("GET", "/admin/api/departures/{productId}/{optionId}/{availabilityId}/affected"): V,
    ("GET", "/admin/api/departures/{productId}/{optionId}/{availabilityId}/blocks"): V,
    (
        "POST",
        "/admin/api/departures/{productId}/{optionId}/{availabilityId}/blocks/{connectionId}/release",
    ): OP,
    ("POST", "/admin/api/departures/{productId}/{optionId}/{availabilityId}/cancel"): OP,
    ("GET", "/admin/api/departures/{productId}/{optionId}/{availabilityId}/manifest.csv"): V,
    ("GET", "/admin/api/gifts"): V,
    ("GET", "/admin/api/gifts/report/{month}"): V,
    ("GET", "/admin/api/gifts/{giftId}"): V,
    ("POST", "/admin/api/gifts/{giftId}/cancel"): OP,
    ("GET", "/admin/api/mail"): V,
    ("GET", "/admin/api/mail/{messageId}"): V,
    ("GET", "/admin/api/mappings"): V,
    ("GET", "/admin/api/mappings/counts"): V,
    ("GET", "/admin/api/mappings/{mappingId}"): V,
    ("PATCH", "/admin/api/mappings/{mappingId}"): OP,
    ("GET", "/admin/api/offers"): V,
    ("PUT", "/admin/api/offers"): E,
    ("GET", "/admin/api/offers/versions"): V,
    ("POST", "/admin/api/offers/versions/{version}/restore"): E,
    ("GET", "/admin/api/resources"): V,
    ("GET", "/admin/api/resources/{productId}"): V,
    ("GET", "/admin/api/slots/{productId}/{optionId}/{availabilityId}/pickups"): V,
    ("GET", "/admin/api/slots/{productId}/{optionId}/{availabilityId}/resources"): V,
    ("GET", "/admin/api/staff"): A,
    ("POST", "/admin/api/staff"): A,
    ("POST", "/admin/api/staff/{staffId}/disable"): A,
    ("POST", "/admin/api/staff/{staffId}/token"): A,
    ("GET", "/admin/api/webhooks"): V,
    ("GET", "/admin/api/webhooks/{webhookId}/deliveries"): V,
    ("POST", "/admin/api/webhooks/{webhookId}/redeliver"): A,
}

SLOT_PAGE = "/admin/slots/{product_id}/{option_id}/{availability_id}"
PAGES: dict[tuple[str, str], Role | None] = {
    ("GET", "/admin"): V,
    ("GET", "/admin/audit"): V,
    ("GET", "/admin/bookings"): V,
    ("GET", "/admin/bookings.csv"): V,
    ("GET", "/admin/bookings/{booking_id}"): V,
    ("GET", "/admin/bookings/{booking_id}/tickets.pdf"): V,
    ("POST", "/admin/bookings/{booking_id}/accept"): OP,
    ("POST", "/admin/bookings/{booking_id}/cancel"): OP,
    ("POST", "/admin/bookings/{booking_id}/desk-payment"): OP,
    ("POST", "/admin/bookings/{booking_id}/undo-admission"): OP,
    ("POST", "/admin/bookings/{booking_id}/receipt"): OP,
    ("POST", "/admin/bookings/{booking_id}/redeem"): OP,
    ("POST", "/admin/bookings/{booking_id}/refund"): OP,
    ("POST", "/admin/bookings/{booking_id}/reject"): OP,
    ("POST", "/admin/bookings/{booking_id}/release"): OP,
    ("GET", "/admin/catalog"): V,
    ("GET", "/admin/catalog.yaml"): V,
    ("GET", "/admin/catalog/history"): V,
    ("GET", "/admin/catalog/history/{version}"): V,
    ("GET", "/admin/catalog/history/{version}.yaml"): V,
    ("POST", "/admin/catalog/history/{version}/restore"): E,
    ("GET", "/admin/catalog/new"): V,
    ("POST", "/admin/catalog/new"): E,
    ("GET", "/admin/catalog/supplier"): V,
    ("POST", "/admin/catalog/supplier"): E,
    ("GET", "/admin/catalog/{product_id}"): V,
    ("GET", "/admin/catalog/{product_id}/edit"): V,
    ("POST", "/admin/catalog/{product_id}/edit"): E,
    ("GET", "/admin/catalog/{product_id}/yaml"): V,
    ("POST", "/admin/catalog/{product_id}/yaml"): E,
    ("GET", "/admin/checkin"): V,
    ("GET", "/admin/checkin/departure"): V,
    ("POST", "/admin/checkin/lookup"): V,
    ("POST", "/admin/checkin/scan"): OP,
    ("POST", "/admin/checkin/undo"): OP,
    ("GET", "/admin/checkin/{product_id}/{option_id}/{availability_id}"): V,
    ("GET", "/admin/checkin/app.webmanifest"): OPEN,
    ("GET", "/admin/checkin/icon-{size}.png"): OPEN,
    ("GET", "/admin/checkin/icon.svg"): OPEN,
    ("GET", "/admin/checkin/sw.js"): OPEN,
    ("GET", "/admin/connections"): V,
    ("POST", "/admin/connections"): A,
    ("POST", "/admin/connections/{connection_id}/revoke"): A,
    ("POST", "/admin/connections/{connection_id}/rotate-secret"): A,
    ("GET", "/admin/connections/{connection_id}"): V,
    ("GET", "/admin/connections/{connection_id}/statements/{month}.pdf"): V,
    ("GET", "/admin/connections/{connection_id}/statements/{month}.json"): V,
    ("GET", "/admin/connections/{connection_id}/statements/{month}.csv"): V,
    ("GET", "/admin/connections/{connection_id}/contract"): V,
    ("POST", "/admin/connections/{connection_id}/contract"): E,
    ("POST", "/admin/connections/{connection_id}/contract/versions/{version}/restore"): E,
    ("GET", "/admin/deliveries/{delivery_id}"): V,
    ("POST", "/admin/deliveries/{delivery_id}/redeliver"): A,
    ("GET", "/admin/departures"): V,
    ("GET", "/admin/gift-report"): V,
    ("GET", "/admin/gift-report.csv"): V,
    ("GET", "/admin/gifts"): V,
    ("GET", "/admin/gifts/{gift_id}"): V,
    ("POST", "/admin/gifts/{gift_id}/cancel"): OP,
    ("GET", "/admin/mappings"): V,
    ("GET", "/admin/mappings/{row_id}"): V,
    ("POST", "/admin/mappings/{row_id}"): OP,
    ("GET", "/admin/offers"): V,
    ("POST", "/admin/offers"): E,
    ("POST", "/admin/offers/versions/{version}/restore"): E,
    ("GET", "/admin/outbox"): V,
    ("GET", "/admin/outbox/{message_id}"): V,
    ("GET", "/admin/outbox/{message_id}/html"): V,
    ("GET", "/admin/password"): OPEN,
    ("GET", "/admin/payments"): V,
    ("GET", "/admin/payments.csv"): V,
    ("POST", "/admin/password"): OPEN,
    ("GET", "/admin/sales"): V,
    ("GET", "/admin/sales.csv"): V,
    ("GET", "/admin/sign-in"): OPEN,
    ("POST", "/admin/sign-in"): OPEN,
    ("POST", "/admin/sign-out"): OPEN,
    ("GET", SLOT_PAGE): V,
    ("POST", SLOT_PAGE + "/blocks/{connection_id}/release"): OP,
    ("POST", SLOT_PAGE + "/cancel"): OP,
    ("POST", SLOT_PAGE + "/capacity"): OP,
    ("POST", SLOT_PAGE + "/close"): OP,
    ("GET", SLOT_PAGE + "/manifest.csv"): V,
    ("POST", SLOT_PAGE + "/note"): OP,
    ("GET", SLOT_PAGE + "/pickups.csv"): V,
    ("POST", SLOT_PAGE + "/reopen"): OP,
    ("GET", "/admin/staff"): A,
    ("POST", "/admin/staff"): A,
    ("POST", "/admin/staff/{member_id}/disable"): A,
    ("POST", "/admin/staff/{member_id}/token"): A,
    ("GET", "/admin/static/{name}"): OPEN,
    ("GET", "/admin/webhooks"): V,
    ("GET", "/admin/webhooks/{webhook_id}"): V,
    ("POST", "/admin/webhooks/{webhook_id}/redeliver"): A,
}


def allowed(role: Role, needed: Role) -> bool:
    """The table's reading of the roles: viewer < operator < admin; an editor reads, and changes
    the catalogue; an admin does everything."""
    ladder = {V: 0, OP: 1, A: 2}
    if role is A or needed is V or role is needed:
        return True
    return E not in (role, needed) and ladder[role] >= ladder[needed]


def served(app: FastAPI) -> set[tuple[str, str]]:
    return {
        (method, path)
        for path, methods in routes_of(app.routes)
        if path.startswith("/admin")
        for method in methods - {"HEAD"}
    }


def concrete(path: str) -> str:
    """The path with each parameter given a value (one no route knows, or version 1)."""
    return re.sub(r"{[^}]+}", "1", path)


def refused_for_role(response: httpx.Response, needed: Role) -> bool:
    named = "editor or admin" if needed is E else needed.value
    return response.status_code == 403 and f"needs the {named} role" in response.text


@pytest.fixture
async def roles(
    app: FastAPI, services: Services
) -> AsyncIterator[dict[Role, tuple[dict[str, str], httpx.AsyncClient, str]]]:
    """Per role: a member's API token header, and a browser signed in as them with its CSRF token."""
    found: dict[Role, tuple[dict[str, str], httpx.AsyncClient, str]] = {}
    try:
        for role in Role:
            email = f"{role.value}@example.com"
            await member(services, email, role)
            _, token = await services.staff.issue_token(email, actor=COMMAND_LINE)
            browser = second_client(app)
            found[role] = ({"Authorization": f"Bearer {token}"}, browser, await signed_in(browser, email))
        yield found
    finally:
        for _, browser, _ in found.values():
            await browser.aclose()


def test_the_table_names_every_admin_route(app: FastAPI) -> None:
    """A route added without a rule here fails: who may use it must be decided."""
    assert served(app) == set(API) | set(PAGES)


async def test_each_role_may_do_what_the_table_says_and_nothing_more(
    client: httpx.AsyncClient,
    bookable: Services,
    roles: dict[Role, tuple[dict[str, str], httpx.AsyncClient, str]],
) -> None:
    wrong: list[str] = []
    for role, (token, browser, csrf) in roles.items():
        for (method, path), needed in API.items():
            body = b"{}" if method != "GET" else None
            response = await client.request(
                method, concrete(path), content=body, headers={**token, "Content-Type": "application/json"}
            )
            if allowed(role, needed) == (response.status_code == 403) or response.status_code >= 500:
                wrong.append(f"{role.value} {method} {path}: {response.status_code} {response.text[:150]}")
            elif not allowed(role, needed) and not refused_for_role(response, needed):
                wrong.append(f"{role.value} {method} {path}: refused without naming {needed.value}")
        for (method, path), rule in PAGES.items():
            if rule is None:
                continue
            if path.startswith("/admin/checkin/") and method == "POST":  # the scanner's JSON calls
                response = await browser.post(concrete(path), json={}, headers={CSRF_HEADER: csrf})
            elif method == "POST":
                response = await browser.post(concrete(path), data={"csrf_token": csrf})
            else:
                response = await browser.get(concrete(path))
            if allowed(role, rule) == (response.status_code == 403) or response.status_code >= 500:
                wrong.append(f"{role.value} {method} {path}: {response.status_code}")
            elif not allowed(role, rule) and not refused_for_role(response, rule):
                wrong.append(f"{role.value} {method} {path}: refused without naming {rule.value}")
    assert wrong == []


async def test_only_an_admin_saves_or_restores_the_catalogue_over_live_bookings(
    client: httpx.AsyncClient,
    bookable: Services,
    roles: dict[Role, tuple[dict[str, str], httpx.AsyncClient, str]],
) -> None:
    """The back office kept this for admins; the API let an editor do it with `force=true`."""
    await confirmed(client)  # a live booking on the Thames tour
    first = int((await client.get("/admin/api/catalog", headers=ADMIN)).headers["Catalog-Version"])
    document = yaml.safe_load((await client.get("/admin/api/catalog", headers=ADMIN)).text)
    document["products"] = [p for p in document["products"] if p["id"] != "thames-sightseeing"]
    without = yaml.safe_dump(document).encode()
    yaml_type = {"Content-Type": "application/yaml"}
    editor_token, editor_browser, editor_csrf = roles[E]

    plain = await client.put("/admin/api/catalog", content=without, headers={**editor_token, **yaml_type})
    assert plain.status_code == 400 and plain.json()["conflicts"], plain.text  # refused, as ever
    forced = await client.put(
        "/admin/api/catalog?force=true", content=without, headers={**editor_token, **yaml_type}
    )
    assert refused_for_role(forced, A), forced.text
    assert "Saving over live bookings needs the admin role" in forced.json()["errorMessage"]
    assert len((await client.get("/admin/api/catalog/versions", headers=ADMIN)).json()) == first

    saved = await client.put("/admin/api/catalog?force=true", content=without, headers={**ADMIN, **yaml_type})
    assert saved.status_code == 200 and saved.json()["imported"], saved.text
    removed = saved.json()["version"]
    back = await client.post(f"/admin/api/catalog/versions/{first}/restore", headers=roles[A][0])
    assert back.status_code == 200 and back.json()["imported"], back.text

    api_restore = await client.post(
        f"/admin/api/catalog/versions/{removed}/restore?force=true", headers=editor_token
    )
    assert refused_for_role(api_restore, A), api_restore.text
    assert "Restoring over live bookings needs the admin role" in api_restore.json()["errorMessage"]
    page_restore = await editor_browser.post(
        f"/admin/catalog/history/{removed}/restore", data={"csrf_token": editor_csrf, "action": "force"}
    )
    assert refused_for_role(page_restore, A), page_restore.text
    count = len((await client.get("/admin/api/catalog/versions", headers=ADMIN)).json())
    assert count == first + 2  # neither refused restore saved anything

    _, admin_browser, admin_csrf = roles[A]
    restored = await admin_browser.post(
        f"/admin/catalog/history/{removed}/restore", data={"csrf_token": admin_csrf, "action": "force"}
    )
    assert restored.status_code == 303, restored.text
    assert csrf_of((await admin_browser.get("/admin/catalog/history")).text)
