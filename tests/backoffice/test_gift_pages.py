"""The Gifts pages of the back office (issue 51, "Staff"): the search with its list, a voucher's
page (its ledger with links to the bookings it paid, its emails, the refund made by hand), the
cancel form of operators and admins (a viewer reads only), the outstanding balance on the
dashboard and the monthly report with its CSV."""

from __future__ import annotations

import csv
import io

import httpx
import pytest
from fastapi import FastAPI

from berth.container import Services
from berth.domain.staff import Role
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.test_staff_pages import member, second_client, signed_in
from tests.conftest import ADMIN
from tests.gifts_helpers import code_of, issued, sell_gifts
from tests.test_gifts_staff import _pay


@pytest.fixture
async def selling(office: Services) -> Services:
    await sell_gifts(office)
    return office


async def _gift_id(client: httpx.AsyncClient, reference: str) -> str:
    found = await client.get("/admin/api/gifts", params={"code": reference}, headers=ADMIN)
    gift_id: str = found.json()["gifts"][0]["id"]
    return gift_id


async def test_the_list_finds_a_voucher_by_its_code_as_typed(
    client: httpx.AsyncClient, csrf: str, selling: Services
) -> None:
    empty = await client.get("/admin/gifts")
    assert '<a href="/admin/gifts" aria-current="page">Gifts</a>' in empty.text
    assert "No gift vouchers yet" in text_of(empty.text)
    gift = await issued(client)
    code = code_of(gift)
    shown = await client.get("/admin/gifts", params={"code": code.lower().replace("-", "")})
    text = text_of(shown.text)
    assert gift["supplierReference"] in text and "50.00 EUR" in text and "Ada Lovelace" in text
    assert "Grace Hopper" in text and "Reseller A" in text and code not in shown.text
    assert "Outstanding now" in text and "50.00 EUR" in text
    nothing = text_of((await client.get("/admin/gifts", params={"buyer": "nobody"})).text)
    assert "Nothing matches" in nothing
    wrong = await client.get("/admin/gifts", params={"status": "LOST"})
    assert wrong.status_code == 200 and "'LOST' is not a gift's status" in text_of(wrong.text)


async def test_a_vouchers_page_shows_its_ledger_and_an_operator_cancels_it(
    app: FastAPI, client: httpx.AsyncClient, csrf: str, selling: Services
) -> None:
    used = await issued(client)
    booking = await _pay(client, code_of(used), 1500)
    used_id = await _gift_id(client, used["supplierReference"])
    page = await client.get(f"/admin/gifts/{used_id}")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "Paid a booking" in text and "35.00 EUR" in text and "a refund is made by hand" in text
    assert f'href="/admin/bookings/{booking["id"]}"' in page.text
    assert "gift voucher" in text  # its email

    unused = await issued(client, amount=2000)
    unused_id = await _gift_id(client, unused["supplierReference"])
    await member(selling, "viewer@example.com", Role.VIEWER)
    viewer = second_client(app)
    viewer_csrf = await signed_in(viewer, "viewer@example.com")
    read_only = await viewer.get(f"/admin/gifts/{unused_id}")
    assert "does not allow cancelling gift vouchers" in text_of(read_only.text)
    refused = await viewer.post(f"/admin/gifts/{unused_id}/cancel", data={"csrf_token": viewer_csrf})
    assert refused.status_code == 403
    await viewer.aclose()

    form = await client.get(f"/admin/gifts/{unused_id}")
    assert "data-confirm=" in form.text and 'name="reason"' in form.text
    done = await client.post(
        f"/admin/gifts/{unused_id}/cancel", data={"csrf_token": csrf, "reason": "bought twice"}
    )
    assert done.status_code == 303
    after = await client.get(done.headers["location"])
    assert "refund it by hand" in (notice_of(after.text) or "")
    assert "CANCELLED" in after.text and "bought twice" in text_of(after.text)
    again = await client.post(f"/admin/gifts/{used_id}/cancel", data={"csrf_token": csrf})
    assert again.status_code == 400 and "cancel them first" in text_of(again.text)
    assert (await client.get("/admin/gifts/nope")).status_code == 404


async def test_the_dashboard_and_the_monthly_report_show_the_liability(
    client: httpx.AsyncClient, csrf: str, selling: Services
) -> None:
    gift = await issued(client)
    await _pay(client, code_of(gift), 1000)
    dashboard = text_of((await client.get("/admin")).text)
    assert "Gift vouchers outstanding" in dashboard and "40.00 EUR" in dashboard
    report = await client.get("/admin/gift-report", params={"month": "2026-06"})
    text = text_of(report.text)
    assert "Gifts report, June 2026" in text and "50.00 EUR" in text and "40.00 EUR" in text
    exported = await client.get("/admin/gift-report.csv", params={"month": "2026-06"})
    rows = list(csv.reader(io.StringIO(exported.content.decode("utf-8-sig"))))
    assert rows == [
        ["Month", "Currency", "Opening liability", "Issued", "Redeemed", "Reversed", "Expired", "Cancelled",
         "Closing liability"],
        ["2026-06", "EUR", "0.00", "50.00", "10.00", "0.00", "0.00", "0.00", "40.00"],
    ]  # fmt: skip
    bad = await client.get("/admin/gift-report", params={"month": "June"})
    assert bad.status_code == 303 and bad.headers["location"] == "/admin/gift-report"
