"""Staff's gift vouchers in the admin API (issue 51, "Staff"): the search (a code as typed,
forgiving like the shop; a reference; the buyer; the recipient; the status; the days sold), one
voucher with its ledger and emails, the cancel of operators and admins (audited), and the
month's liability report. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import GUEST, reservation
from tests.conftest import ADMIN, Clock, auth
from tests.gifts_helpers import BUYER, GIFTS, code_of, issued, sell_gifts

OPERATOR_EMAIL = "op@example.com"


@pytest.fixture
async def selling(bookable: Services) -> Services:
    await sell_gifts(bookable)
    return bookable


async def _search(client: httpx.AsyncClient, **query: str) -> dict[str, Any]:
    found = await client.get("/admin/api/gifts", params=query, headers=ADMIN)
    assert found.status_code == 200, found.text
    body: dict[str, Any] = found.json()
    return body


async def _pay(client: httpx.AsyncClient, code: str, amount: int) -> dict[str, Any]:
    held = await client.post("/octo/bookings", json=reservation(("adult",)), headers=auth(capabilities=GIFTS))
    assert held.status_code == 200, held.text
    paid = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/confirm",
        json={"contact": GUEST, "giftPayment": {"giftCode": code, "amount": amount, "currency": "EUR"}},
        headers=auth(capabilities=GIFTS),
    )
    assert paid.status_code == 200, paid.text
    booking: dict[str, Any] = paid.json()
    return booking


async def test_staff_find_a_voucher_by_its_code_as_typed_its_reference_and_its_people(
    client: httpx.AsyncClient, selling: Services, clock: Clock
) -> None:
    first = await issued(client)
    clock.advance(days=2)
    other = await issued(
        client, amount=2000, contact={**BUYER, "firstName": "Mary", "emailAddress": "mary@example.com"},
        recipient=None, resellerReference="R-77",
    )  # fmt: skip
    code = code_of(first)
    sloppy = code.lower().replace("-", " ").replace("1", "l").replace("0", "o")
    by_code = await _search(client, code=sloppy)
    assert [g["supplierReference"] for g in by_code["gifts"]] == [first["supplierReference"]]
    assert by_code["gifts"][0]["codeHint"] == code[-4:] and code not in str(by_code)  # never the code
    assert (await _search(client, code=first["supplierReference"].lower()))["total"] == 1
    assert (await _search(client, code="r-77"))["gifts"][0]["supplierReference"] == other["supplierReference"]
    assert (await _search(client, code=code[-4:]))["total"] == 1
    assert (await _search(client, code=code[:-1] + "X"))["total"] == 0  # a mistyped code finds nothing
    assert (await _search(client, buyer="LOVELACE"))["total"] == 2
    assert (await _search(client, buyer="mary@"))["total"] == 1
    assert (await _search(client, recipient="grace"))["total"] == 1
    everyone = await _search(client)
    assert [g["supplierReference"] for g in everyone["gifts"]] == [
        other["supplierReference"],
        first["supplierReference"],
    ]  # newest first
    assert everyone["gifts"][1]["balance"] == 5000 and everyone["gifts"][1]["status"] == "CONFIRMED"
    assert (await _search(client, **{"from": "2026-06-02"}))["total"] == 1
    assert (await _search(client, to="2026-06-01"))["total"] == 1
    assert (await _search(client, status="cancelled"))["total"] == 0
    clock.advance(days=3 * 366)  # past their validity: EXPIRED as they stand, before the sweep
    assert (await _search(client, status="EXPIRED"))["total"] == 2

    for query, said in (
        ({"status": "GONE"}, "'GONE' is not a gift's status"),
        ({"from": "2026-13-01"}, "is not a date like 2026-06-02"),
        ({"from": "2026-06-03", "to": "2026-06-01"}, "The last day is before the first day"),
    ):
        refused = await client.get("/admin/api/gifts", params=query, headers=ADMIN)
        assert refused.status_code == 400 and said in refused.json()["errorMessage"], refused.text


async def test_one_voucher_shows_its_ledger_with_the_bookings_and_its_email(
    client: httpx.AsyncClient, selling: Services
) -> None:
    gift = await issued(client)
    booking = await _pay(client, code_of(gift), 1500)
    found = (await _search(client, code=gift["supplierReference"]))["gifts"][0]
    shown = await client.get(f"/admin/api/gifts/{found['id']}", headers=ADMIN)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert body["gift"]["balance"] == 3500
    assert [(m["kind"], m["amount"]) for m in body["movements"]] == [("ISSUE", 5000), ("REDEMPTION", -1500)]
    assert body["movements"][1]["bookingId"] == booking["id"]
    assert [e["kind"] for e in body["emails"]] == ["gift voucher"]
    missing = await client.get("/admin/api/gifts/nope", headers=ADMIN)
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND", missing.text

    used = await client.post(f"/admin/api/gifts/{found['id']}/cancel", json={}, headers=ADMIN)
    assert used.status_code == 400 and "cancel them first" in used.json()["errorMessage"], used.text


async def test_an_operator_cancels_an_unused_voucher_and_the_audit_says_so(
    client: httpx.AsyncClient, selling: Services
) -> None:
    gift = await issued(client)
    gift_id = (await _search(client, code=gift["supplierReference"]))["gifts"][0]["id"]
    cancelled = await client.post(
        f"/admin/api/gifts/{gift_id}/cancel", json={"reason": "bought twice"}, headers=ADMIN
    )
    assert cancelled.status_code == 200, cancelled.text
    body = cancelled.json()
    assert (body["gift"]["status"], body["gift"]["balance"]) == ("CANCELLED", 0)
    assert body["gift"]["cancellationReason"] == "bought twice"
    assert body["movements"][-1]["kind"] == "CANCELLATION" and body["movements"][-1]["amount"] == -5000
    audit = (await client.get("/admin/api/audit", params={"action": "gift.cancel"}, headers=ADMIN)).json()
    assert [(e["target"]["label"], e["details"]["cancelled"]) for e in audit["entries"]] == [
        (gift["supplierReference"], 5000)
    ]
    again = await client.post(f"/admin/api/gifts/{gift_id}/cancel", headers=ADMIN)
    assert again.status_code == 200 and again.json()["gift"]["status"] == "CANCELLED"  # as it is


async def test_the_months_report_adds_up_per_currency(
    client: httpx.AsyncClient, selling: Services, clock: Clock
) -> None:
    kept = await issued(client)
    await _pay(client, code_of(kept), 1000)
    cancelled = await issued(client, amount=2000)
    gift_id = (await _search(client, code=cancelled["supplierReference"]))["gifts"][0]["id"]
    assert (await client.post(f"/admin/api/gifts/{gift_id}/cancel", headers=ADMIN)).status_code == 200
    june = (await client.get("/admin/api/gifts/report/2026-06", headers=ADMIN)).json()
    assert june == {
        "month": "2026-06",
        "currencies": [
            {"currency": "EUR", "opening": 0, "issued": 7000, "redeemed": 1000, "reversed": 0, "expired": 0,
             "cancelled": 2000, "closing": 4000},
        ],
    }  # fmt: skip
    july = (await client.get("/admin/api/gifts/report/2026-07", headers=ADMIN)).json()
    assert july["currencies"][0]["opening"] == july["currencies"][0]["closing"] == 4000
    assert (await client.get("/admin/api/gifts/report/2026-06", headers=ADMIN)).status_code == 200
    bad = await client.get("/admin/api/gifts/report/june", headers=ADMIN)
    assert bad.status_code == 400 and "YYYY-MM" in bad.json()["errorMessage"]
