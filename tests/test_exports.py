"""CSV exports for staff (issue 21): the bookings search and a departure's manifest, streamed
in batches, with local times and cells guarded against formula injection."""

from __future__ import annotations

import csv
import io
import uuid
from dataclasses import replace
from decimal import Decimal
from typing import Any

import httpx

from berth.container import Services
from berth.domain.bookings import BookingStatus
from berth.domain.statements import Basis, statement
from berth.store.bookings_reads import BookingFilter, find_bookings
from berth.views.exports import HEADER, csv_text, safe_cell
from berth.views.statements import csv_header, statement_csv
from tests.bookings_helpers import GUEST, SLOT, booking_products, confirm, reservation, reserve
from tests.builders import catalog, load, product
from tests.conftest import ADMIN, KEY_B, auth
from tests.departures_helpers import departure_path
from tests.test_statements_domain import CATALOG, CONNECTION, JUNE, booking, price, unit_line

VOUCHER = {"productId": "open-voucher", "optionId": "DEFAULT"}


async def with_voucher(services: Services) -> Services:
    """The booking tests' products and a voucher sold without a departure."""
    return await load(
        services, catalog(*booking_products(), product(VOUCHER["productId"], availabilityRequired=False))
    )


def rows_of(response: httpx.Response) -> list[list[str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"].startswith("attachment; filename=")
    assert response.content.startswith(b"\xef\xbb\xbf")  # so that Excel reads it as UTF-8
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))


def test_formula_cells_are_guarded() -> None:
    for risky in ("=1+1", "+447700900001", "-2", "@SUM(A1)", "\tx", "\rx"):
        assert safe_cell(risky) == "'" + risky
    for plain in ("Ada", "", "1+1", "a=b", "'quoted"):
        assert safe_cell(plain) == plain


def test_numbers_are_written_as_numbers_and_text_is_guarded() -> None:
    assert csv_text([[Decimal("-5.00"), -3, "-5.00", "=1+1", "5"]]) == "-5.00,-3,'-5.00,'=1+1,5\r\n"


async def test_a_statements_negative_amount_is_a_number_a_spreadsheet_sums() -> None:
    """A line sold before nets above retail were refused (issue 37) has a negative commission:
    the CSV writes it as a number, not as text behind the formula guard."""
    sold = booking(1, BookingStatus.CONFIRMED, (unit_line(0, price(500, 1000)),))
    sold = replace(sold, reseller_reference="-5.00")
    found = statement(CONNECTION, "Reseller", JUNE, Basis.TRAVEL, [sold], CATALOG)
    text = b"".join([chunk async for chunk in statement_csv(found)]).decode("utf-8-sig")
    header, row = csv.reader(io.StringIO(text))
    line = dict(zip(header, row, strict=True))
    assert tuple(header) == csv_header(found)
    assert (line["Retail"], line["Net"], line["Commission"], line["Unit count"]) == (
        "5.00",
        "10.00",
        "-5.00",
        "1",
    )
    assert line["Reseller reference"] == "'-5.00"  # what a reseller wrote is text, and guarded


async def test_bookings_csv_follows_the_search(client: httpx.AsyncClient, bookable: Services) -> None:
    a = await reserve(client, reservation(("adult", "child"), resellerReference='=HYPERLINK("http://x")'))
    contact = {**GUEST, "firstName": "@Ada", "phoneNumber": "+447700900001"}
    await confirm(client, a["uuid"], contact=contact)
    b = await reserve(client, reservation(availability_id="2026-06-03T14:00:00+01:00"), key=KEY_B)
    await client.post(
        f"/octo/bookings/{b['uuid']}/cancel", json={"reason": "-changed plans"}, headers=auth(KEY_B)
    )
    everything = rows_of(await client.get("/admin/api/bookings.csv", headers=ADMIN))
    assert tuple(everything[0]) == HEADER
    assert [r[0] for r in everything[1:]] == [a["supplierReference"], b["supplierReference"]]
    first = dict(zip(HEADER, everything[1], strict=True))
    assert first == {
        "Supplier reference": a["supplierReference"], "Reseller reference": "'=HYPERLINK(\"http://x\")",
        "Status": "CONFIRMED", "Product": "Thames Sightseeing", "Option": "DEFAULT", "Availability id": SLOT,
        "Departure (local time)": "2026-06-02 10:00", "Time zone": "Europe/London", "Lead guest": "@Ada Lovelace".replace("@", "'@"),
        "Email": "ada@example.com", "Phone": "'+447700900001", "Units": "1 x Adult, 1 x Child", "Guests": "2",
        "Places": "2", "Reseller": "Reseller A", "Booked at (local time)": "2026-06-01 09:00", "Test booking": "",
        "Cancellation reason": "",
        # what it was sold at (issue 49 §4: the file had no amount): 25.00 + 15.00, net 4/5
        "Currency": "EUR", "Retail": "40.00", "Net": "32.00", "Tax included": "6.67",
    }  # fmt: skip
    second = dict(zip(HEADER, everything[2], strict=True))
    assert (second["Status"], second["Reseller"], second["Cancellation reason"]) == (
        "CANCELLED",
        "Reseller B",
        "'-changed plans",
    )
    confirmed = rows_of(
        await client.get("/admin/api/bookings.csv", params={"status": "CONFIRMED"}, headers=ADMIN)
    )
    assert [r[0] for r in confirmed[1:]] == [a["supplierReference"]]
    by_day = rows_of(
        await client.get("/admin/api/bookings.csv", params={"localDate": "2026-06-03"}, headers=ADMIN)
    )
    assert [r[0] for r in by_day[1:]] == [b["supplierReference"]]
    nothing = rows_of(
        await client.get("/admin/api/bookings.csv", params={"reference": "none"}, headers=ADMIN)
    )
    assert nothing == [list(HEADER)]
    bad = await client.get("/admin/api/bookings.csv", params={"localDate": "tomorrow"}, headers=ADMIN)
    assert bad.status_code == 400 and bad.json()["error"] == "BAD_REQUEST"
    assert (await client.get("/admin/api/bookings.csv")).json()["error"] == "UNAUTHORIZED"


async def test_manifest_csv(client: httpx.AsyncClient, bookable: Services) -> None:
    on = await reserve(client)
    await reserve(client, reservation(availability_id="2026-06-02T12:00:00+01:00"))
    other = await reserve(client, reservation(("adult",)), key=KEY_B)
    rows = rows_of(await client.get(departure_path(suffix="/manifest.csv"), headers=ADMIN))
    assert sorted(r[0] for r in rows[1:]) == sorted([on["supplierReference"], other["supplierReference"]])
    response = await client.get(departure_path(suffix="/manifest.csv"), headers=ADMIN)
    assert (
        response.headers["content-disposition"]
        == 'attachment; filename="manifest-thames-sightseeing-DEFAULT-2026-06-02-1000.csv"'
    )
    missing = await client.get(
        departure_path(availability_id="2026-06-02T11:00:00+01:00", suffix="/manifest.csv"), headers=ADMIN
    )
    assert missing.json()["error"] == "INVALID_AVAILABILITY_ID"


async def test_exports_read_in_batches_in_search_order(client: httpx.AsyncClient, services: Services) -> None:
    await with_voucher(services)
    made: list[dict[str, Any]] = []
    for availability_id in ("2026-06-03T10:00:00+01:00", SLOT, "2026-06-02T14:00:00+01:00", SLOT):
        made.append(await reserve(client, reservation(availability_id=availability_id)))
    for _ in range(3):  # without a departure
        body = {"uuid": str(uuid.uuid4()), **VOUCHER, "unitItems": [{"unitId": "adult"}]}
        made.append(await reserve(client, body))
    catalogue = (await services.catalog.snapshot()).catalog
    batches = [batch async for batch in services.staff_bookings.export(catalogue, BookingFilter(), batch=2)]
    assert [len(b) for b in batches] == [2, 2, 2, 1]
    exported = [booking.id for batch in batches for booking, _ in batch]
    async with services.database.transaction(write=False) as conn:
        found, _ = await find_bookings(conn, BookingFilter())
    dated = [b.id for b in found if b.slot_start is not None]
    undated = sorted((b for b in found if b.slot_start is None), key=lambda b: (b.created_at, b.id))
    assert exported == dated + [b.id for b in undated]
    assert sorted(exported) == sorted(m["id"] for m in made)
    assert [
        len(b) for b in [x async for x in services.staff_bookings.export(catalogue, BookingFilter(), batch=7)]
    ] == [7]
