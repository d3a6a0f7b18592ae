"""Gift vouchers on a reseller's monthly statement (issue 51), through the OCTO flows: reseller A
(its contract sells gifts at 20 % commission) sells a 50.00 voucher and a 20.00 one it cancels,
on 1 June; a booking of 2 June is paid 30.00 with the first voucher; another paid 10.00 with it is
then cancelled (the payment given back). Reseller B pays a booking of its own with A's voucher.
Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pypdf
import pytest

from berth.container import Services
from tests.backoffice.helpers import sign_in
from tests.bookings_helpers import GUEST, reservation
from tests.conftest import ADMIN, KEY_A, KEY_B, auth
from tests.gifts_helpers import GIFTS, code_of, issued, sell_gifts, send

JUNE = "2026-06"


async def _paid(client: httpx.AsyncClient, code: str, amount: int, key: str = KEY_A) -> dict[str, Any]:
    """A booking of two adults on 2 June held and confirmed with `amount` paid by the voucher."""
    held = await client.post("/octo/bookings", json=reservation(), headers=auth(key, capabilities=GIFTS))
    assert held.status_code == 200, held.text
    paid = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/confirm",
        json={"contact": GUEST, "giftPayment": {"giftCode": code, "amount": amount, "currency": "EUR"}},
        headers=auth(key, capabilities=GIFTS),
    )
    assert paid.status_code == 200, paid.text
    booking: dict[str, Any] = paid.json()
    return booking


@pytest.fixture
async def sold(client: httpx.AsyncClient, bookable: Services) -> dict[str, Any]:
    await sell_gifts(bookable)
    voucher = await issued(client, amount=5000, resellerReference="gift-1")
    dropped = await issued(client, amount=2000)
    assert (await send(client, "POST", f"/gifts/{dropped['uuid']}/cancel")).status_code == 200
    code = code_of(voucher)
    paid = await _paid(client, code, 3000)
    undone = await _paid(client, code, 1000)
    gone = await client.post(f"/octo/bookings/{undone['uuid']}/cancel", json={}, headers=auth())
    assert gone.status_code == 200, gone.text
    other = await _paid(client, code, 500, key=KEY_B)
    return {"voucher": voucher, "dropped": dropped, "paid": paid, "undone": undone, "other": other}


async def test_the_statement_lists_the_vouchers_sold_and_what_vouchers_paid(
    client: httpx.AsyncClient, sold: dict[str, Any]
) -> None:
    found = (await client.get(f"/admin/api/connections/Reseller A/statements/{JUNE}", headers=ADMIN)).json()
    by_reference = {line["supplierReference"]: line for line in found["lines"]}
    paid = by_reference[sold["paid"]["supplierReference"]]
    assert (paid["kind"], paid["giftPaid"], paid["owed"]) == ("BOOKING", 3000, paid["net"] - 3000)
    undone = by_reference[sold["undone"]["supplierReference"]]
    assert (undone["status"], undone["net"], undone["giftPaid"], undone["owed"]) == ("CANCELLED", 0, 0, 0)
    voucher = by_reference[sold["voucher"]["supplierReference"]]
    assert {k: voucher[k] for k in ("kind", "product", "status", "resellerReference", "currency")} == {
        "kind": "GIFT", "product": "Gift voucher", "status": "ISSUED", "resellerReference": "gift-1",
        "currency": "EUR",
    }  # fmt: skip
    assert (voucher["original"], voucher["retail"], voucher["net"], voucher["commission"]) == (
        5000,
        5000,
        4000,
        1000,
    )
    assert (voucher["giftPaid"], voucher["owed"], voucher["rate"], voucher["travelDate"]) == (
        0,
        4000,
        "20.0 %",
        None,
    )
    dropped = by_reference[sold["dropped"]["supplierReference"]]
    assert (dropped["kind"], dropped["status"], dropped["retail"], dropped["net"]) == (
        "GIFT",
        "CANCELLED",
        0,
        0,
    )
    assert [line["kind"] for line in found["lines"]] == ["BOOKING", "BOOKING", "GIFT", "GIFT"]
    (total,) = found["totals"]
    for field in ("original", "discount", "retail", "net", "commission", "giftPaid", "owed"):
        assert total[field] == sum(line[field] for line in found["lines"]), field
    assert (total["giftPaid"], total["owed"], total["count"]) == (3000, total["net"] - 3000, 4)
    # B's booking shows what A's voucher paid; A's voucher is on A's statement only
    other = (await client.get(f"/admin/api/connections/Reseller B/statements/{JUNE}", headers=ADMIN)).json()
    assert [(line["kind"], line["giftPaid"]) for line in other["lines"]] == [("BOOKING", 500)]
    july = (await client.get("/admin/api/connections/Reseller A/statements/2026-07", headers=ADMIN)).json()
    assert july["lines"] == []


async def test_the_csv_and_the_pdf_show_the_vouchers_and_the_owed_total(
    client: httpx.AsyncClient, sold: dict[str, Any]
) -> None:
    response = await client.get(
        f"/admin/api/connections/Reseller A/statements/{JUNE}", headers={**ADMIN, "Accept": "text/csv"}
    )
    assert response.status_code == 200, response.text
    header, *rows = csv.reader(io.StringIO(response.content.decode("utf-8-sig")))
    assert header[-3:] == ["Kind", "Paid by gift voucher", "Owed"]
    by_reference = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    paid = by_reference[sold["paid"]["supplierReference"]]
    assert (paid["Kind"], paid["Paid by gift voucher"]) == ("BOOKING", "30.00")
    voucher = by_reference[sold["voucher"]["supplierReference"]]
    assert [voucher[k] for k in ("Kind", "Product", "Status", "Retail", "Net", "Commission", "Owed")] == [
        "GIFT", "Gift voucher", "ISSUED", "50.00", "40.00", "10.00", "40.00",
    ]  # fmt: skip
    bought = (await client.get(f"/admin/api/connections/Reseller A/statements/{JUNE}", headers=ADMIN)).json()
    await sign_in(client)
    pdf = await client.get(f"/admin/connections/{bought['connection']['id']}/statements/{JUNE}.pdf")
    assert pdf.status_code == 200, pdf.text
    text = " ".join(
        " ".join(page.extract_text().split()) for page in pypdf.PdfReader(io.BytesIO(pdf.content)).pages
    )
    assert "Gift voucher" in text and "Paid by gift voucher" in text and "30.00" in text
    assert "Owed: net - paid by gift voucher" in text
    assert "net total less what gift vouchers paid" in text
    owed = bought["totals"][0]["owed"]
    assert f"EUR {owed / 100:.2f}" in text
    # the channel report's sold columns are the statements' totals
    report = csv.DictReader(
        io.StringIO((await client.get(f"/admin/sales.csv?month={JUNE}")).text.lstrip("\ufeff"))
    )
    channels = {row["Channel"]: row for row in report}
    a = bought["totals"][0]
    assert [channels["Reseller A"][k] for k in ("Lines sold", "Net", "Paid by gift voucher", "Owed")] == [
        "4", f"{a['net'] / 100:.2f}", "30.00", f"{owed / 100:.2f}",
    ]  # fmt: skip
    assert channels["Reseller B"]["Paid by gift voucher"] == "5.00"
    page = (await client.get(f"/admin/sales?month={JUNE}")).text
    assert "Paid by gift voucher" in page and "Owed" in page
