"""A booking's page in the back office: its tickets, to open or print for a guest at the desk,
and its receipt, sent again to another address when the guest asks (audited, operators only)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from berth.container import Services
from berth.domain.staff import Role
from tests.backoffice.helpers import notice_of, sign_in, text_of
from tests.backoffice.test_staff_pages import member, signed_in
from tests.builders import load
from tests.conftest import ADMIN, auth
from tests.tickets_helpers import cruise_booking, pdf_text, tickets_catalog

GUEST = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}


@pytest.fixture
async def cruise(services: Services) -> Services:
    return await load(services, tickets_catalog())


async def ticketed(client: httpx.AsyncClient) -> dict[str, Any]:
    body = cruise_booking({"unitId": "adult"}, {"unitId": "child"})
    assert (await client.post("/octo/bookings", json=body, headers=auth())).status_code == 200
    confirmed = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm", json={"contact": GUEST}, headers=auth()
    )
    assert confirmed.status_code == 200, confirmed.text
    result: dict[str, Any] = confirmed.json()
    return result


def pdf_url(ticket: dict[str, Any]) -> str:
    [url] = [o["deliveryValue"] for o in ticket["deliveryOptions"] if o["deliveryFormat"] == "PDF_URL"]
    return str(url)


async def test_the_booking_page_links_its_tickets_to_open_and_print(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    await sign_in(client)
    booking = await ticketed(client)
    page = (await client.get(f"/admin/bookings/{booking['id']}")).text
    links = re.findall(r'<a href="([^"]+)" target="_blank" rel="noopener">([^<]+)</a>', page)
    assert (pdf_url(booking["voucher"]), "Open PDF") in links
    for item in booking["unitItems"]:
        assert (pdf_url(item["ticket"]), "Open PDF") in links
    printed = f"/admin/bookings/{booking['id']}/tickets.pdf"
    assert (printed, "Print every ticket (PDF)") in links
    response = await client.get(printed)
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    assert len(pdf_text(response.content)) == 3  # the voucher and both guests' tickets
    client.cookies.clear()
    assert (await client.get(printed)).headers["location"].startswith("/admin/sign-in")


async def test_a_receipt_is_resent_to_another_address_audited(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    csrf = await sign_in(client)
    booking = await ticketed(client)
    sent = await client.post(
        f"/admin/bookings/{booking['id']}/receipt", data={"to": " desk@hotel.example ", "csrf_token": csrf}
    )
    assert sent.status_code == 303
    page = await client.get(sent.headers["location"])
    assert (notice_of(page.text) or "").startswith("Receipt queued for desk@hotel.example: ")
    messages = (await client.get(f"/admin/api/bookings/{booking['id']}/mail", headers=ADMIN)).json()[
        "messages"
    ]
    assert [(m["to"], m["toName"]) for m in messages] == [("desk@hotel.example", None)]
    audit = (await client.get("/admin/api/audit", headers=ADMIN)).json()["entries"]
    [entry] = [e for e in audit if e["action"] == "booking.receipt"]
    assert entry["details"]["to"] == "desk@hotel.example" and entry["actor"] == "BERTH_ADMIN_TOKEN"
    bad = await client.post(
        f"/admin/bookings/{booking['id']}/receipt", data={"to": "not an address", "csrf_token": csrf}
    )
    notice = notice_of((await client.get(bad.headers["location"])).text)
    assert notice == "No receipt sent: to: 'not an address' is not an email address"
    blank = await client.post(f"/admin/bookings/{booking['id']}/receipt", data={"to": "", "csrf_token": csrf})
    assert "Receipt queued for ada@example.com" in (
        notice_of((await client.get(blank.headers["location"])).text) or ""
    )


async def test_only_operators_resend_a_receipt(client: httpx.AsyncClient, cruise: Services) -> None:
    booking = await ticketed(client)
    await member(cruise, "vera@example.com", Role.VIEWER)
    csrf = await signed_in(client, "vera@example.com")
    assert "Send to" not in text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    refused = await client.post(
        f"/admin/bookings/{booking['id']}/receipt", data={"to": "desk@hotel.example", "csrf_token": csrf}
    )
    assert refused.status_code == 403
    messages = (await client.get(f"/admin/api/bookings/{booking['id']}/mail", headers=ADMIN)).json()[
        "messages"
    ]
    assert messages == []


async def test_the_box_office_resends_a_receipt_to_another_address(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await ticketed(client)
    path = f"/admin/api/bookings/{booking['id']}/receipt"
    sent = await client.post(path, json={"to": "desk@hotel.example"}, headers=ADMIN)
    assert sent.status_code == 200, sent.text
    assert sent.json()["to"] == "desk@hotel.example" and sent.json()["toName"] is None
    bad = await client.post(path, json={"to": "desk@"}, headers=ADMIN)
    assert bad.status_code == 400 and bad.json()["error"] == "BAD_REQUEST"
    assert bad.json()["errorMessage"] == "to: 'desk@' is not an email address"
    unknown = await client.post(path, json={"to": "desk@hotel.example", "cc": "x"}, headers=ADMIN)
    assert unknown.status_code == 400
    messages = (await client.get(f"/admin/api/bookings/{booking['id']}/mail", headers=ADMIN)).json()[
        "messages"
    ]
    assert [m["to"] for m in messages] == ["desk@hotel.example"]  # nothing written for the refused ones
