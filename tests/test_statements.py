"""A connection's monthly statement (issue 37): the admin API's JSON and CSV, the back office's
connection page, PDF and dashboard, and `berth statements`. Clock: 2026-06-01T08:00Z.

Reseller A sells three places on the cruise of 2 June (6500 retail, 5200 net, EUR), sells and
cancels one on the same day, holds one it never confirms, and sells one on 1 July; reseller B
sells one on 2 June."""

from __future__ import annotations

import asyncio
import csv
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pypdf
import pytest

from berth.container import Services
from berth.domain.offers import NetDiscount
from berth.domain.staff import COMMAND_LINE, Role
from tests.backoffice.helpers import sign_in, text_of
from tests.berth_process import berth
from tests.bookings_helpers import confirm, reservation, reserve
from tests.conftest import ADMIN, KEY_B, auth
from tests.statements_helpers import with_offer
from tests.test_contracts import put_contract
from tests.test_staff_roles import staff_token
from tests.test_statements_domain import offer

JUNE = "2026-06"


async def _sold(client: httpx.AsyncClient, units: tuple[str, ...], slot: str, key: str = "demo-reseller-a", **extra: Any) -> dict[str, Any]:  # fmt: skip
    booking = await reserve(
        client, reservation(units, availability_id=slot, currency="EUR", **extra), key=key
    )
    assert (await confirm(client, booking["uuid"], key=key)).status_code == 200
    return booking


@pytest.fixture
async def sales(client: httpx.AsyncClient, bookable: Services) -> dict[str, Any]:
    """The bookings of the module's docstring, and the two connections' ids."""
    first = await _sold(client, ("adult", "adult", "child"), "2026-06-02T10:00:00+01:00")
    cancelled = await _sold(
        client, ("adult",), "2026-06-02T14:00:00+01:00", resellerReference="=cmd|' /C calc'!A0"
    )
    gone = await client.post(f"/octo/bookings/{cancelled['uuid']}/cancel", json={}, headers=auth())
    assert gone.status_code == 200, gone.text
    await reserve(client, reservation(("adult",), availability_id="2026-06-02T16:00:00+01:00"))
    july = await _sold(client, ("adult",), "2026-07-01T10:00:00+01:00")
    await _sold(client, ("adult",), "2026-06-02T10:00:00+01:00", key=KEY_B)
    ids = {c["name"]: c["id"] for c in (await client.get("/admin/api/connections", headers=ADMIN)).json()}
    return {
        "first": first,
        "cancelled": cancelled,
        "july": july,
        "a": ids["Reseller A"],
        "b": ids["Reseller B"],
    }


async def test_the_statement_lists_what_was_sold_in_the_month(
    client: httpx.AsyncClient, sales: dict[str, Any]
) -> None:
    response = await client.get(f"/admin/api/connections/{sales['a']}/statements/{JUNE}", headers=ADMIN)
    assert response.status_code == 200, response.text
    found = response.json()
    assert (found["connection"], found["month"], found["basis"]) == (
        {"id": sales["a"], "name": "Reseller A", "address": None}, JUNE, "travel",
    )  # fmt: skip
    first, cancelled = found["lines"]
    assert first == {
        "supplierReference": sales["first"]["supplierReference"], "resellerReference": None,
        "productId": "thames-sightseeing", "product": "Thames Sightseeing", "optionId": "DEFAULT", "option": "DEFAULT",
        "travelDate": "2026-06-02", "localTime": "10:00", "timeZone": "Europe/London",
        "units": [{"unit": "Adult", "quantity": 2}, {"unit": "Child", "quantity": 1}], "unitCount": 3,
        "status": "NOT_REDEEMED", "currency": "EUR", "currencyPrecision": 2,
        "original": 6500, "discount": 0, "retail": 6500, "net": 5200, "commission": 1300, "netMissing": False,
        "rate": "20.0 %", "taxRetail": 1084, "taxNet": 866, "includes": [],
        "kind": "BOOKING", "giftPaid": 0, "owed": 5200,
    }  # fmt: skip
    assert (found["rateKind"], found["paymentTerms"], found["createdAt"]) == (
        "CATALOG_NET", "MONTHLY_INVOICE", "2026-06-01T08:00:00+00:00",
    )  # fmt: skip
    assert (cancelled["supplierReference"], cancelled["status"], cancelled["localTime"]) == (
        sales["cancelled"]["supplierReference"], "CANCELLED", "14:00",
    )  # fmt: skip
    assert (cancelled["retail"], cancelled["net"], cancelled["commission"]) == (0, 0, 0)
    assert found["totals"] == [
        {
            "currency": "EUR",
            "currencyPrecision": 2,
            "original": 6500,
            "discount": 0,
            "retail": 6500,
            "net": 5200,
            "commission": 1300,
            "taxRetail": 1084,
            "taxNet": 866,
            "giftPaid": 0,
            "owed": 5200,
            "count": 2,
        }
    ]
    july = (await client.get("/admin/api/connections/Reseller A/statements/2026-07", headers=ADMIN)).json()
    assert [line["supplierReference"] for line in july["lines"]] == [sales["july"]["supplierReference"]]
    other = (await client.get(f"/admin/api/connections/{sales['b']}/statements/{JUNE}", headers=ADMIN)).json()
    assert [t["retail"] for t in other["totals"]] == [2500] and len(other["lines"]) == 1
    empty = (
        await client.get(f"/admin/api/connections/{sales['a']}/statements/2026-05", headers=ADMIN)
    ).json()
    assert (empty["lines"], empty["totals"]) == ([], [])


async def test_the_statement_as_csv_goes_through_the_guarded_writer(
    client: httpx.AsyncClient, sales: dict[str, Any]
) -> None:
    response = await client.get(
        f"/admin/api/connections/{sales['a']}/statements/{JUNE}", headers={**ADMIN, "Accept": "text/csv"}
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert (
        # named as `berth statements` names it (issue 49 §4: the connection's id here, its name there)
        response.headers["content-disposition"] == f'attachment; filename="statement-Reseller-A-{JUNE}.csv"'
    )
    assert response.content.startswith(b"\xef\xbb\xbf")
    header, first, cancelled = csv.reader(io.StringIO(response.content.decode("utf-8-sig")))
    # the catalogue's net is a net rate: retail - net is the reseller's margin, not a commission
    assert header == [
        "Supplier reference", "Reseller reference", "Product", "Option", "Travel date", "Local time",
        "Time zone", "Units", "Unit count", "Includes", "Status", "Currency", "Original", "Discount",
        "Retail", "Net", "Margin", "Margin %", "Tax in retail", "Tax in net", "Net missing",
        "Kind", "Paid by gift voucher", "Owed",
    ]  # fmt: skip
    assert first == [
        sales["first"]["supplierReference"], "", "Thames Sightseeing", "DEFAULT", "2026-06-02", "10:00",
        "Europe/London", "2 \N{MULTIPLICATION SIGN} Adult, 1 \N{MULTIPLICATION SIGN} Child", "3", "",
        "NOT_REDEEMED", "EUR", "65.00", "0.00", "65.00", "52.00", "13.00", "20.0 %", "10.84", "8.66", "",
        "BOOKING", "0.00", "52.00",
    ]  # fmt: skip
    assert cancelled[1] == "'=cmd|' /C calc'!A0" and cancelled[10:17] == [
        "CANCELLED", "EUR", "0.00", "0.00", "0.00", "0.00", "0.00",
    ]  # fmt: skip


async def test_a_bad_month_or_connection_is_refused_and_viewers_read(
    client: httpx.AsyncClient, sales: dict[str, Any], bookable: Services
) -> None:
    for month in ("2026-13", "june", "2026-6"):
        refused = await client.get(f"/admin/api/connections/{sales['a']}/statements/{month}", headers=ADMIN)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"] == "BAD_REQUEST" and repr(month) in refused.json()["errorMessage"]
    unknown = await client.get(f"/admin/api/connections/no-such/statements/{JUNE}", headers=ADMIN)
    assert unknown.status_code == 404 and unknown.json()["error"] == "NOT_FOUND", unknown.text
    assert "no-such" in unknown.json()["errorMessage"]
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    read = await client.get(f"/admin/api/connections/{sales['a']}/statements/{JUNE}", headers=viewer)
    assert read.status_code == 200 and len(read.json()["lines"]) == 2
    reseller = await client.get(f"/admin/api/connections/{sales['a']}/statements/{JUNE}", headers=auth())
    assert reseller.json()["error"] == "UNAUTHORIZED"


async def test_the_back_office_shows_the_months_the_pdf_and_this_months_net_sales(
    client: httpx.AsyncClient, sales: dict[str, Any], bookable: Services
) -> None:
    await sign_in(client)
    listed = await client.get("/admin/connections")
    assert f'href="/admin/connections/{sales["a"]}"' in listed.text
    page = await client.get(f"/admin/connections/{sales['a']}")
    assert page.status_code == 200, page.text
    text = text_of(page.text)
    assert "July 2026 EUR 1 0.00 EUR 25.00 EUR 20.00 EUR 5.00 EUR PDF · CSV · JSON" in text
    assert "June 2026 EUR 2 0.00 EUR 65.00 EUR 52.00 EUR 13.00 EUR PDF · CSV · JSON" in text
    assert text.index("July 2026") < text.index("June 2026")
    base = f"/admin/connections/{sales['a']}/statements/{JUNE}"
    for suffix in (".pdf", ".csv", ".json"):
        assert f'href="{base}{suffix}"' in page.text
    as_json = await client.get(base + ".json")
    assert as_json.json()["totals"][0]["net"] == 5200
    as_csv = await client.get(base + ".csv")
    assert as_csv.status_code == 200 and as_csv.text.count("\r\n") == 3
    pdf = await client.get(base + ".pdf")
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
    words = " ".join(
        " ".join(p.extract_text().split()) for p in pypdf.PdfReader(io.BytesIO(pdf.content)).pages
    )
    supplier = (await bookable.catalog.snapshot()).catalog.supplier.name
    for expected in (supplier, "Reseller: Reseller A", "Period: June 2026", sales["first"]["supplierReference"],
                     "65.00", "52.00", "13.00", "Total, 2 lines", "CANCELLED",
                     # issue 49 §4: the tax, a net rate's margin, when it was made, who owes whom, the pages
                     "Tax in retail", "10.84", "8.66", "Margin · rate", "20.0 %", "Created: 01 Jun 2026 08:00 UTC",
                     f"Payment terms: Monthly invoice: Reseller A owes {supplier} the net total (EUR 52.00)",
                     "Statement 2026-06 · Reseller A · Page 1 of 1"):  # fmt: skip
        assert expected in words, (expected, words)
    assert "Commission" not in words  # the catalogue's net is a net rate
    assert pdf.headers["content-disposition"] == f'inline; filename="statement-Reseller-A-{JUNE}.pdf"'
    missing = await client.get(f"/admin/connections/no-such/statements/{JUNE}.pdf")
    assert missing.status_code == 404
    dashboard = text_of((await client.get("/admin")).text)
    assert "Net sales in June 2026 by channel" in dashboard
    assert "Reseller A EUR 2 52.00 EUR" in dashboard and "Reseller B EUR 1 20.00 EUR" in dashboard


async def test_berth_statements_writes_csv_and_pdf_per_connection(
    sales: dict[str, Any], database_url: str, tmp_path: Path
) -> None:
    def run(*args: str) -> Any:
        return asyncio.to_thread(lambda: berth("statements", *args, database_url=database_url, timeout=60))

    done = await run(JUNE, "--out", str(tmp_path / "all"))
    assert done.returncode == 0, done.stderr
    assert "Reseller A: 2 line(s); EUR retail 65.00, net 52.00, commission 13.00 (2 line(s))" in done.stdout
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [
        f"statement-Reseller-A-{JUNE}.csv", f"statement-Reseller-A-{JUNE}.pdf",
        f"statement-Reseller-B-{JUNE}.csv", f"statement-Reseller-B-{JUNE}.pdf",
    ]  # fmt: skip
    rows = list(
        csv.reader(
            io.StringIO((tmp_path / "all" / f"statement-Reseller-A-{JUNE}.csv").read_text("utf-8-sig"))
        )
    )
    assert len(rows) == 3 and rows[1][12:17] == ["65.00", "0.00", "65.00", "52.00", "13.00"]
    assert (tmp_path / "all" / f"statement-Reseller-B-{JUNE}.pdf").read_bytes().startswith(b"%PDF")
    one = await run(JUNE, "--connection", sales["b"], "--out", str(tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    assert len(list((tmp_path / "one").iterdir())) == 2
    unknown = await run(JUNE, "--connection", "Nobody")
    assert unknown.returncode == 1 and "No connection with id or name 'Nobody'" in unknown.stderr
    assert "berth connection list" in unknown.stderr and "Traceback" not in unknown.stderr
    bad = await run("2026-13")
    assert bad.returncode == 1 and "'2026-13'" in bad.stderr and "Traceback" not in bad.stderr


async def test_berth_statements_names_each_file_once_and_prints_names_as_they_are(
    sales: dict[str, Any], bookable: Services, database_url: str, tmp_path: Path
) -> None:
    """Two names that fold to one file name get their connection's id, so that neither file
    overwrites the other; names are printed as they are, never read as Rich markup or emoji."""
    ids = {}
    for name in ("adv x/y", "adv x:y", "Gifts :x: [bold]and[/bold] more"):
        ids[name] = (await bookable.connections.create(name, actor=COMMAND_LINE))[0].id

    done = await asyncio.to_thread(
        lambda: berth(
            "statements", JUNE, "--out", str(tmp_path / "out"), database_url=database_url, timeout=60
        )
    )
    assert done.returncode == 0, done.stderr
    stems = [
        "statement-Reseller-A", "statement-Reseller-B", f"statement-adv-x-y-{ids['adv x/y']}",
        f"statement-adv-x-y-{ids['adv x:y']}", "statement-Gifts--x---bold-and--bold--more",
    ]  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{stem}-{JUNE}.{suffix}" for stem in stems for suffix in ("csv", "pdf")
    )
    assert "Wrote 10 file(s)" in done.stdout
    for name in ids:
        assert f"{name}: 0 line(s); nothing sold" in done.stdout, done.stdout

    listed = await asyncio.to_thread(
        lambda: berth("connection", "list", database_url=database_url, COLUMNS="200")
    )
    assert listed.returncode == 0, listed.stderr
    for name in ids:
        assert name in listed.stdout, listed.stdout


async def test_the_contract_gives_the_statement_its_terms_rate_and_the_resellers_address(
    client: httpx.AsyncClient, sales: dict[str, Any], bookable: Services
) -> None:
    """Issue 49 §4: a prepaid commission contract with the reseller's address: the statement
    says so, calls retail - net a commission, and prints the address under the reseller."""
    document = {
        "rate": {"commission": "20"},
        "paymentTerms": "PREPAID",
        "resellerAddress": "Reseller A Ltd\r\n1 Quay Street\nBristol BS1 4DJ",
    }
    saved = await put_contract(client, bookable, "demo-reseller-a", document)
    assert saved.status_code == 200, saved.text
    found = (await client.get(f"/admin/api/connections/{sales['a']}/statements/{JUNE}", headers=ADMIN)).json()
    assert found["connection"]["address"] == "Reseller A Ltd\r\n1 Quay Street\nBristol BS1 4DJ"
    assert (found["rateKind"], found["paymentTerms"]) == ("COMMISSION", "PREPAID")
    await sign_in(client)
    pdf = await client.get(f"/admin/connections/{sales['a']}/statements/{JUNE}.pdf")
    words = " ".join(
        " ".join(p.extract_text().split()) for p in pypdf.PdfReader(io.BytesIO(pdf.content)).pages
    )
    supplier = (await bookable.catalog.snapshot()).catalog.supplier.name
    for expected in (
        "Reseller: Reseller A Reseller A Ltd 1 Quay Street Bristol BS1 4DJ",
        f"Payment terms: Prepaid: Reseller A paid the net of these bookings (EUR 52.00) in advance; "
        f"nothing more is owed to {supplier} for them.",
        "Commission · rate",
    ):
        assert expected in words, (expected, words)
    page = text_of((await client.get(f"/admin/connections/{sales['a']}/contract")).text)
    assert "Reseller's address Reseller A Ltd 1 Quay Street Bristol BS1 4DJ" in page, page


async def test_a_discounted_sale_shows_the_retail_before_its_discount_everywhere(
    client: httpx.AsyncClient, sales: dict[str, Any], bookable: Services, database_url: str, tmp_path: Path
) -> None:
    """Issue 51: reseller A also sells two adults and a child on 3 June with a 10 % offer whose
    net falls in proportion to the retail (PRORATED): 65.00 before the discount, 6.50 off, 58.50
    retail, 46.80 net, 11.70 margin; the JSON, the CSV, the PDF, the channel report and `berth
    statements` show it, and the totals are the sums of the lines."""
    sold = await _sold(client, ("adult", "adult", "child"), "2026-06-03T10:00:00+01:00")
    await with_offer(bookable, sold["id"], offer(NetDiscount.PRORATED, percent=Decimal(10)))
    path = f"/admin/api/connections/{sales['a']}/statements/{JUNE}"
    found = (await client.get(path, headers=ADMIN)).json()
    amounts = ("original", "discount", "retail", "net", "commission")
    assert [tuple(line[key] for key in amounts) for line in found["lines"]] == [
        (6500, 0, 6500, 5200, 1300), (0, 0, 0, 0, 0), (6500, 650, 5850, 4680, 1170),
    ]  # fmt: skip
    (total,) = found["totals"]
    assert tuple(total[key] for key in amounts) == (13000, 650, 12350, 9880, 2470) and total["count"] == 3

    response = await client.get(path, headers={**ADMIN, "Accept": "text/csv"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    columns = ("Original", "Discount", "Retail", "Net", "Margin")
    assert [rows[-1][column] for column in columns] == ["65.00", "6.50", "58.50", "46.80", "11.70"]
    assert [sum(Decimal(row[column]) for row in rows) for column in columns] == [
        Decimal(total[key]).scaleb(-2) for key in amounts
    ]

    await sign_in(client)
    pdf = await client.get(f"/admin/connections/{sales['a']}/statements/{JUNE}.pdf")
    words = " ".join(
        " ".join(p.extract_text().split()) for p in pypdf.PdfReader(io.BytesIO(pdf.content)).pages
    )
    for expected in ("Currency Original Discount Retail Tax in retail Net Tax in net Margin · rate Paid by gift voucher",
                     "EUR 65.00 6.50 58.50", "46.80", "11.70 20.0 %",
                     "Total, 3 lines EUR 130.00 6.50 123.50"):  # fmt: skip
        assert expected in words, (expected, words)

    page = text_of((await client.get(f"/admin/connections/{sales['a']}")).text)
    assert "June 2026 EUR 3 6.50 EUR 123.50 EUR 98.80 EUR 24.70 EUR PDF · CSV · JSON" in page
    # the channel report sells what the statements sell: B's one adult beside A's three lines
    report = text_of((await client.get(f"/admin/sales?month={JUNE}")).text)
    assert "Reseller A EUR 3 130.00 EUR 6.50 EUR 123.50 EUR 98.80 EUR 24.70 EUR" in report, report
    assert "Reseller B EUR 1 25.00 EUR 0.00 EUR 25.00 EUR 20.00 EUR 5.00 EUR" in report
    assert "Total EUR 4 155.00 EUR 6.50 EUR 148.50 EUR 118.80 EUR 29.70 EUR" in report
    exported = csv.DictReader(
        io.StringIO((await client.get(f"/admin/sales.csv?month={JUNE}")).text.lstrip("\ufeff"))
    )
    assert [(row["Channel"], *(row[c] for c in ("Lines sold", *columns[:-1], "Commission"))) for row in exported] == [
        ("Reseller A", "3", "130.00", "6.50", "123.50", "98.80", "24.70"),
        ("Reseller B", "1", "25.00", "0.00", "25.00", "20.00", "5.00"),
    ]  # fmt: skip

    done = await asyncio.to_thread(
        lambda: berth("statements", JUNE, "--connection", sales["a"], "--out", str(tmp_path),
                      database_url=database_url, timeout=60)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "Reseller A: 3 line(s); EUR original 130.00, discount 6.50, retail 123.50, net 98.80, "
        "commission 24.70 (3 line(s))" in done.stdout
    ), done.stdout
