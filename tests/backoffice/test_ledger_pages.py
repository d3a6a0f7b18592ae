"""The payments page (filters, totals, pages), its CSV export (the columns a supplier matches to
Stripe's reports, no formula in any cell) and the monthly sales report per channel, with card
payments and refunds through a real localstripe and payments taken at the desk (issue 48 §3, §4)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

from berth.domain.staff import COMMAND_LINE
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.payments_helpers import Office, office_paying
from tests.bookings_helpers import SLOT
from tests.builders import confirmed_booking
from tests.conftest import KEY_A, Clock
from tests.stripe_helpers import localstripe

__all__ = ["localstripe", "office_paying"]

GUEST = {"firstName": "Grace", "lastName": "Hopper", "emailAddress": "grace@example.com"}


async def _desk_sold(office: Office, reference: str, amount: int = 2500, method: str = "cash") -> str:
    """A booking of reseller A paid at the desk; its supplier reference."""
    sold = await confirmed_booking(
        office.services, ("Reseller A", KEY_A), "thames-sightseeing", SLOT, ["adult"], GUEST
    )
    await office.services.payments.record_desk_payment(
        sold.booking.id, method, amount, "EUR", COMMAND_LINE, reference
    )
    return sold.booking.supplier_reference


def _rows(body: bytes) -> list[dict[str, str]]:
    text = body.decode("utf-8")
    assert text.startswith("\ufeff")  # Excel reads it as UTF-8
    return list(csv.DictReader(io.StringIO(text[1:])))


async def test_the_payments_page_lists_filters_and_totals_the_ledger(
    office_paying: Office, clock: Clock
) -> None:
    services = office_paying.services
    card_id = await office_paying.paid()
    [card] = (await services.payments.payments_for_booking(card_id)).payments
    await office_paying.later(clock, days=1)
    await office_paying.post(f"/admin/bookings/{card_id}/refund", amount="10", reason="Late start")
    [refund] = (await services.payments.payments_for_booking(card_id)).refunds
    desk_reference = await _desk_sold(office_paying, "T-1", method="card_terminal")
    assert card.provider_id is not None and refund.provider_id is not None

    def listed(page: str) -> list[str]:
        return [line for line in (card.provider_id or "", refund.provider_id or "", "T-1") if line in page]

    everything = text_of((await office_paying.client.get("/admin/payments")).text)
    assert "3 payments and refunds, newest first" in everything
    assert "EUR 75.00 EUR (2) 10.00 EUR (1) 65.00 EUR" in everything  # received, refunded, net
    assert listed(everything) == [card.provider_id, refund.provider_id, "T-1"]
    assert "-10.00 EUR" in everything  # a refund is money going out
    cases = {
        "type=refund": [refund.provider_id],
        "type=payment": [card.provider_id, "T-1"],
        "method=card_terminal": ["T-1"],
        "method=card": [card.provider_id, refund.provider_id],
        f"channel={office_paying.shop_id}": [card.provider_id, refund.provider_id],
        f"q={card.provider_id}": [card.provider_id, refund.provider_id],  # a payment finds its refunds
        f"q={refund.provider_id}": [refund.provider_id],
        f"q={desk_reference.lower()}": ["T-1"],
        "q=T-1": ["T-1"],
        "status=succeeded&currency=eur": [card.provider_id, refund.provider_id, "T-1"],
        "currency=USD": [],
        "from=2026-06-01&to=2026-06-01": [card.provider_id],
        "from=2026-06-02": [refund.provider_id, "T-1"],
    }
    for query, expected in cases.items():
        page = text_of((await office_paying.client.get(f"/admin/payments?{query}")).text)
        assert listed(page) == expected, query
    problems = {
        "from=2026-13-01": "The first day '2026-13-01' is not a date like 2026-06-02.",
        "from=2026-06-05&to=2026-06-01": "The last day is before the first day.",
        "method=cheque": "'cheque' is not a way of paying.",
        "type=gift": "'gift' is neither a payment nor a refund.",
        "status=lost": "'lost' is not a payment's or a refund's status.",
        "currency=EURO": "'EURO' is not a currency code like EUR.",
    }
    for query, said in problems.items():
        answer = await office_paying.client.get(f"/admin/payments?{query}")
        assert answer.status_code == 200 and said in text_of(answer.text), query
        export = await office_paying.client.get(f"/admin/payments.csv?{query}")
        assert export.status_code == 303
        assert notice_of((await office_paying.client.get(export.headers["location"])).text) == (
            f"Nothing exported: {said}"
        )


async def test_the_payments_page_pages(office_paying: Office) -> None:
    sold = await confirmed_booking(
        office_paying.services, ("Reseller A", KEY_A), "thames-sightseeing", SLOT, ["adult"], GUEST
    )
    for number in range(52):  # paid in instalments at the desk
        await office_paying.services.payments.record_desk_payment(
            sold.booking.id, "cash", 100, "EUR", COMMAND_LINE, f"R-{number:02d}"
        )
    first = text_of((await office_paying.client.get("/admin/payments")).text)
    assert "52 payments and refunds, 1-50 shown" in first and "Page 1 of 2" in first
    second = text_of((await office_paying.client.get("/admin/payments?page=2")).text)
    assert "51-52 shown" in second and "Page 2 of 2" in second
    beyond = text_of((await office_paying.client.get("/admin/payments?page=9")).text)
    assert "There are 52 matching payments and refunds" in beyond
    export = await office_paying.client.get("/admin/payments.csv")
    assert sorted(row["Desk reference"] for row in _rows(export.content)) == [f"R-{n:02d}" for n in range(52)]


async def test_the_csv_matches_stripe_and_carries_no_formula(office_paying: Office, clock: Clock) -> None:
    services = office_paying.services
    card_id = await office_paying.paid()
    [card] = (await services.payments.payments_for_booking(card_id)).payments
    await office_paying.later(clock, hours=2)
    await office_paying.post(
        f"/admin/bookings/{card_id}/cancel",
        reason='=HYPERLINK("x")',
        refund="partial",
        amount="12.5",
        force="true",
    )
    [refund] = (await services.payments.payments_for_booking(card_id)).refunds
    clock.advance(minutes=1)
    await services.connections.ensure("@Evil channel", "evil-key")
    evil = await confirmed_booking(
        services, ("@Evil channel", "evil-key"), "thames-sightseeing", SLOT, ["adult"], GUEST
    )
    await services.payments.record_desk_payment(
        evil.booking.id, "cash", 2500, "EUR", COMMAND_LINE, "+1 555 0100"
    )

    export = await office_paying.client.get("/admin/payments.csv?from=2026-06-01&to=2026-06-30")
    assert export.status_code == 200
    assert export.headers["content-type"] == "text/csv; charset=utf-8"
    assert (
        export.headers["content-disposition"] == 'attachment; filename="payments-2026-06-01-2026-06-30.csv"'
    )
    rows = _rows(export.content)
    assert [
        (r["Type"], r["Provider id"], r["Payment intent"], r["Gross"], r["Currency"], r["Status"])
        for r in rows
    ] == [
        ("payment", card.provider_id, card.provider_id, "50.00", "EUR", "succeeded"),
        ("refund", refund.provider_id, card.provider_id, "-12.50", "EUR", "succeeded"),
        ("payment", "", "", "25.00", "EUR", "succeeded"),
    ]
    assert [r["Time (UTC)"] for r in rows] == [
        "2026-06-01 08:00:00",
        "2026-06-01 10:00:00",
        "2026-06-01 10:01:00",
    ]
    assert [r["Channel"] for r in rows] == ["Web shop", "Web shop", "'@Evil channel"]
    assert rows[1]["Reason"] == '\'=HYPERLINK("x")' and rows[1]["Berth id"] == refund.id
    assert rows[2]["Desk reference"] == "'+1 555 0100" and rows[2]["Method"] == "cash"
    for row in rows:
        assert not any(cell.startswith(("=", "+", "-", "@")) for key, cell in row.items() if key != "Gross")
    assert sum(Decimal(r["Gross"]) for r in rows) == Decimal("62.50")
    refunds_only = _rows((await office_paying.client.get("/admin/payments.csv?type=refund")).content)
    assert [r["Provider id"] for r in refunds_only] == [refund.provider_id]


async def test_the_monthly_sales_report_per_channel(office_paying: Office, clock: Clock) -> None:
    card_id = await office_paying.paid()
    await _desk_sold(office_paying, "T-1")
    dashboard = text_of((await office_paying.client.get("/admin")).text)
    assert "Net sales in June 2026 by channel Channel Currency Bookings Net" in dashboard
    assert "Reseller A EUR 1 20.00 EUR 25.00 EUR 5.00 EUR" in dashboard  # net, retail, commission
    assert "Web shop EUR 1 50.00 EUR 50.00 EUR 0.00 EUR" in dashboard  # sold at retail
    later = await confirmed_booking(
        office_paying.services, ("Reseller A", KEY_A), "thames-sightseeing", SLOT, ["adult"], GUEST
    )  # paid at the desk on the day
    await office_paying.later(clock, days=30)  # 1 July
    await office_paying.post(f"/admin/bookings/{card_id}/refund", amount="5", reason="Late start")
    await office_paying.services.payments.record_desk_payment(
        later.booking.id, "cash", 1000, "EUR", COMMAND_LINE, "T-2"
    )

    june = text_of((await office_paying.client.get("/admin/sales?month=2026-06")).text)
    assert "Sales in June 2026 by channel" in june
    assert "Reseller A EUR 1 25.00 EUR 0 0.00 EUR 25.00 EUR" in june
    assert "Web shop EUR 1 50.00 EUR 0 0.00 EUR 50.00 EUR" in june
    assert "Total EUR 2 75.00 EUR 0 0.00 EUR 75.00 EUR" in june
    july = text_of((await office_paying.client.get("/admin/sales")).text)  # this month, UTC
    assert "Sales in July 2026" in july
    assert "Web shop EUR 0 0.00 EUR 1 5.00 EUR -5.00 EUR" in july  # a refund counts in its own month
    assert "Total EUR 1 10.00 EUR 1 5.00 EUR 5.00 EUR" in july
    assert "Months with sales July 2026 · June 2026" in july
    empty = text_of((await office_paying.client.get("/admin/sales?month=2025-01")).text)
    assert "No payment or refund went through in January 2025." in empty
    bad = await office_paying.client.get("/admin/sales?month=2026-13")
    assert bad.status_code == 303
    assert "is not a month as YYYY-MM" in (
        notice_of((await office_paying.client.get(bad.headers["location"])).text) or ""
    )

    export = await office_paying.client.get("/admin/sales.csv?month=2026-07")
    assert export.headers["content-disposition"] == 'attachment; filename="sales-2026-07.csv"'
    nothing_sold = ["0", *["0.00"] * 7]  # in July, as the statements count it
    assert [list(r.values()) for r in _rows(export.content)] == [
        ["2026-07", "Reseller A", "EUR", "1", "10.00", "0", "0.00", "10.00", *nothing_sold],
        ["2026-07", "Web shop", "EUR", "0", "0.00", "1", "5.00", "-5.00", *nothing_sold],
    ]
    # what each channel sold in June, as its statement counts it (the desk's sale travels in June)
    assert "Reseller A EUR 2 50.00 EUR 0.00 EUR 50.00 EUR 40.00 EUR 10.00 EUR" in june
    assert "Total EUR 3 100.00 EUR 0.00 EUR 100.00 EUR 90.00 EUR 10.00 EUR" in june
    june_export = await office_paying.client.get("/admin/sales.csv?month=2026-06")
    assert [list(r.values())[8:] for r in _rows(june_export.content)] == [
        ["2", "50.00", "0.00", "50.00", "40.00", "10.00", "0.00", "40.00"],
        ["1", "50.00", "0.00", "50.00", "50.00", "0.00", "0.00", "50.00"],
    ]
