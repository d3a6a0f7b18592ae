"""A large document does not hold up the event loop (issue 47): once a month of thousands of
bookings has been read for its statement's PDF, resellers' OCTO reads sent one after the other
go on being answered while it renders. Ordering, not timing: the 50th read is answered before
the PDF.

The app runs in this test's own event loop (ASGITransport): a statement read or rendered in the
loop would let nothing else run, this test's own code included, until the PDF was done. The test
knows the month was read from the statements sent to the database (`tests.statement_counts`):
the transaction that read the bookings has ended."""

from __future__ import annotations

import asyncio
import csv
import io

import httpx
import pypdf
import pytest

from berth.container import Services
from berth.store import bookings_repo
from tests.backoffice.helpers import sign_in
from tests.bookings_helpers import confirm, reservation, reserve
from tests.conftest import auth
from tests.statement_counts import Statements, counting
from tests.statements_helpers import sold_copies

JUNE = "2026-06"
COPIES = 5000
READS = 50


@pytest.fixture
async def large_month(client: httpx.AsyncClient, bookable: Services) -> str:
    """Reseller A's June: one booking sold over HTTP and COPIES copies of it; the statements'
    base URL, for staff signed in."""
    sold = await reserve(client, reservation(("adult", "adult"), currency="EUR"))
    assert (await confirm(client, sold["uuid"])).status_code == 200
    connection = await bookable.statements.connection("Reseller A")
    async with bookable.database.transaction(write=False) as conn:
        booking = await bookings_repo.get_by_uuid(conn, connection.id, sold["uuid"])
    assert booking is not None
    await sold_copies(bookable, booking, COPIES)
    await sign_in(client)
    return f"/admin/connections/{connection.id}/statements/{JUNE}"


async def _month_read(sent: Statements, document: asyncio.Task[httpx.Response]) -> None:
    """Until the transaction that read the month's bookings has ended (or the document is done)."""
    while not document.done():
        kinds = sent.kinds()
        if "SELECT bookings" in kinds and "COMMIT" in kinds[kinds.index("SELECT bookings") :]:
            return
        await asyncio.sleep(0.001)


async def test_octo_reads_are_answered_while_a_large_statement_renders(
    client: httpx.AsyncClient, bookable: Services, large_month: str
) -> None:
    with counting(bookable.database) as sent:
        document = asyncio.create_task(client.get(large_month + ".pdf"))
        await _month_read(sent, document)
    for _ in range(READS):
        read = await client.get("/octo/products", headers=auth())
        assert read.status_code == 200, read.text
    assert not document.done(), "the PDF was made before the reads sent meanwhile were answered"
    pdf = await document
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf", pdf.text[:300]
    last = pypdf.PdfReader(io.BytesIO(pdf.content)).pages[-1].extract_text()
    assert f"Total, {COPIES + 1} lines" in " ".join(last.split())


async def test_a_large_statement_as_csv_and_json_is_whole(
    client: httpx.AsyncClient, large_month: str
) -> None:
    """Made and sent in batches of lines: every line is there once, the JSON one object."""
    as_csv = await client.get(large_month + ".csv")
    rows = list(csv.reader(io.StringIO(as_csv.content.decode("utf-8-sig"))))
    assert len(rows) == COPIES + 2 and len({row[0] for row in rows[1:]}) == COPIES + 1
    as_json = (await client.get(large_month + ".json")).json()
    assert len({line["supplierReference"] for line in as_json["lines"]}) == COPIES + 1
    assert as_json["totals"][0]["count"] == COPIES + 1 and as_json["month"] == JUNE
