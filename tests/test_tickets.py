"""PDF_URL: ticket documents through the OCTO routes and their URLs, read back as a guest's
device would: the text with pypdf, every barcode decoded with zxing-cpp. Clock:
2026-06-01T08:00Z; the departure is 2026-06-02 10:00 BST."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import event, func, select

from berth.container import Services
from berth.domain.catalog import DeliveryFormat
from berth.domain.tickets import TicketLine
from berth.store.tables import tickets
from berth.tickets.pdf import MARGIN, PAPER_SIZES, Paper, render_pdf
from berth.tickets.sheet import TicketPage
from berth.translations import Words
from tests.builders import load
from tests.conftest import ADMIN, auth
from tests.tickets_helpers import (
    TICKET_URL,
    cruise_booking,
    decoded_codes,
    overlap,
    page_sizes,
    pdf_text,
    text_box,
    tickets_catalog,
)

CAPABILITIES = "octo/pickups, octo/extras"
LEAD = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com", "locales": ["de-DE"]}
PIER = "0d3f1a6c-2b7e-4c55-9a10-7a1c2e3f4a01"


@pytest.fixture
async def cruise(services: Services) -> Services:
    return await load(services, tickets_catalog())


async def booked(client: httpx.AsyncClient, body: dict[str, Any], contact: dict[str, Any] = LEAD) -> Any:
    held = await client.post("/octo/bookings", json=body, headers=auth(capabilities=CAPABILITIES))
    assert held.status_code == 200, held.text
    confirmed = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm", json={"contact": contact}, headers=auth()
    )
    assert confirmed.status_code == 200, confirmed.text
    return confirmed.json()


def options(ticket: dict[str, Any]) -> dict[str, str]:
    return {o["deliveryFormat"]: o["deliveryValue"] for o in ticket["deliveryOptions"]}


def path_of(url: str) -> str:
    match = TICKET_URL.match(url)
    assert match, url
    return f"/tickets/{match['token']}.{match['suffix']}"


def guests() -> list[dict[str, Any]]:
    return [
        {"unitId": "adult", "contact": {"fullName": "Ada Lovelace"}, "extraItems": [{"extraId": "lunch"}]},
        {"unitId": "child", "contact": {"firstName": "Byron", "lastName": "King"}},
    ]


async def test_a_confirmed_booking_delivers_pdf_urls_beside_its_codes(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    body = cruise_booking(*guests())
    held = await client.post("/octo/bookings", json=body, headers=auth())
    assert held.json()["voucher"]["deliveryOptions"] == []  # nothing is issued on hold
    confirmed = (
        await client.post(f"/octo/bookings/{body['uuid']}/confirm", json={"contact": LEAD}, headers=auth())
    ).json()
    voucher = options(confirmed["voucher"])
    code = confirmed["supplierReference"]
    assert [o["deliveryFormat"] for o in confirmed["voucher"]["deliveryOptions"]] == [
        "QRCODE", "AZTECCODE", "CODE128", "PDF_URL",
    ]  # fmt: skip
    assert voucher["QRCODE"] == voucher["AZTECCODE"] == voucher["CODE128"] == code
    urls = [voucher["PDF_URL"], *(options(i["ticket"])["PDF_URL"] for i in confirmed["unitItems"])]
    matches = [TICKET_URL.match(url) for url in urls]
    assert all(matches) and len({m["token"] for m in matches if m}) == 3
    assert {m["base"] for m in matches if m} == {cruise.settings.tickets_url}
    # No personal data, no reference in the path: only the random token.
    for url in urls:
        assert code not in url and "Ada" not in url and body["uuid"] not in url
    # Stable: the booking answers the same URLs whenever it is read.
    again = (await client.get(f"/octo/bookings/{body['uuid']}", headers=auth())).json()
    assert options(again["voucher"])["PDF_URL"] == voucher["PDF_URL"]
    assert [options(i["ticket"])["PDF_URL"] for i in again["unitItems"]] == urls[1:]


async def test_the_voucher_pdf_has_a_page_per_ticket_with_everything_in_the_booking_language(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    body = cruise_booking(*guests(), pickupPointId=PIER, extraItems=[{"extraId": "photos"}])
    booking = await booked(client, body)
    response = await client.get(path_of(options(booking["voucher"])["PDF_URL"]))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["cache-control"] == "private"
    assert response.headers["x-robots-tag"] == "noindex"
    pages = pdf_text(response.content)
    assert len(pages) == 3  # the voucher, then one ticket per guest
    assert page_sizes(response.content) == [(595, 842)] * 3  # A4 by default
    voucher, first, second = pages
    for text in pages:
        for expected in (
            "Test Supplier", "Hafenrundfahrt", "Morgenfahrt", "Dienstag, 2. Juni 2026, 10:00 BST bis 11:00 BST",
            "Treffpunkt: Harbour Pier, 1 Harbour Walk, London", "Tower Hotel", "09:30 BST bis 09:40 BST",
            "So lösen Sie das Ticket ein", "Zeigen Sie diese Seite vor",
            "Zeigen Sie Ihren Code am Tor", booking["supplierReference"],
        ):  # fmt: skip
            assert expected in text, (expected, text)
    assert (
        "Voucher" in voucher
        and "Teilnehmer: 1 \N{MULTIPLICATION SIGN} Erwachsene, 1 \N{MULTIPLICATION SIGN} Kind" in voucher
    )
    assert "Ada Lovelace, Byron King" in voucher
    assert "1 \N{MULTIPLICATION SIGN} Photo package, 1 \N{MULTIPLICATION SIGN} Two-course lunch" in voucher
    assert "Ticket 1 von 2" in first and "Kategorie: Erwachsene" in first and "Gast: Ada Lovelace" in first
    assert "Two-course lunch" in first and "Two-course lunch" not in second
    assert "Ticket 2 von 2" in second and "Kind" in second and "Byron King" in second
    # Every format the product names is drawn, and each decodes to the page's code.
    code = booking["supplierReference"]
    assert decoded_codes(response.content, 0) == {"QRCode": code, "Aztec": code, "Code128": code}
    item_code = booking["unitItems"][1]["supplierReference"]
    assert decoded_codes(response.content, 2) == {
        "QRCode": item_code,
        "Aztec": item_code,
        "Code128": item_code,
    }


async def test_a_ticket_url_answers_its_unit_items_page_only(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(client, cruise_booking(*guests()))
    item = booking["unitItems"][0]
    response = await client.get(path_of(options(item["ticket"])["PDF_URL"]))
    assert response.status_code == 200
    pages = pdf_text(response.content)
    assert len(pages) == 1 and "Ticket 1 von 2" in pages[0] and "Ada Lovelace" in pages[0]
    assert "Byron" not in pages[0]
    assert decoded_codes(response.content)["QRCode"] == item["supplierReference"]
    # Each unit's ticket downloads under its own name: the booking's, then its unit's.
    assert (
        response.headers["content-disposition"]
        == f'inline; filename="{booking["supplierReference"]}-adult.pdf"'
    )
    child = await client.get(path_of(options(booking["unitItems"][1]["ticket"])["PDF_URL"]))
    assert (
        child.headers["content-disposition"] == f'inline; filename="{booking["supplierReference"]}-child.pdf"'
    )
    voucher = await client.get(path_of(options(booking["voucher"])["PDF_URL"]))
    assert voucher.headers["content-disposition"] == f'inline; filename="{booking["supplierReference"]}.pdf"'


async def test_english_when_the_guest_asks_for_no_language(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(
        client, cruise_booking(), contact={"fullName": "Grace Hopper", "emailAddress": "grace@example.com"}
    )
    text = pdf_text((await client.get(path_of(options(booking["voucher"])["PDF_URL"]))).content)[0]
    assert (
        "Harbour Cruise" in text and "Morning sailing" in text and "1 \N{MULTIPLICATION SIGN} Adult" in text
    )
    assert "Show your code at the pier gate" in text and "Hafenrundfahrt" not in text


async def test_letter_paper_from_the_setting(services: Services, client: httpx.AsyncClient) -> None:
    services.tickets._paper = "LETTER"  # as BERTH_TICKET_PAPER=LETTER builds it
    await load(services, tickets_catalog())
    booking = await booked(client, cruise_booking())
    content = (await client.get(path_of(options(booking["voucher"])["PDF_URL"]))).content
    assert page_sizes(content) == [(612, 792)] * 2


HOSTILE = {
    "fullName": "<b>Bold</b> & <script>alert(1)</script>\r\nBcc: victim@example.com " + "W" * 900,
    "emailAddress": "guest@example.com",
}


async def test_hostile_names_are_set_as_text_and_never_break_the_pdf(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    body = cruise_booking(
        {"unitId": "adult", "contact": {"fullName": "</para><font size='90'>x</font>\n\n\x1b\t"}}
    )
    booking = await booked(client, body, contact=HOSTILE)
    response = await client.get(path_of(options(booking["voucher"])["PDF_URL"]))
    assert response.status_code == 200
    voucher, ticket = pdf_text(response.content)
    assert "<b>Bold</b> & <script>alert(1)</script> Bcc: victim@example.com WWW" in voucher
    assert "W" * 400 not in voucher  # a long name is cut
    assert "</para><font size='90'>x</font>" in ticket
    assert decoded_codes(response.content, 0)["QRCode"] == booking["supplierReference"]
    assert decoded_codes(response.content, 1)["QRCode"] == booking["unitItems"][0]["supplierReference"]


async def test_a_cancelled_bookings_tickets_answer_410_in_words_without_a_code(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(client, cruise_booking(*guests()))
    urls = [options(booking["voucher"])["PDF_URL"], options(booking["unitItems"][0]["ticket"])["PDF_URL"]]
    cancelled = await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth())
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["voucher"]["deliveryOptions"] == []
    for url in urls:
        with counted_statements(cruise) as statements:
            response = await client.get(path_of(url))
        assert response.status_code == 410
        assert response.headers["content-type"].startswith("text/html")
        assert "no longer valid" in response.text and "The booking was cancelled." in response.text
        assert booking["supplierReference"] not in response.text and "%PDF" not in response.text
        assert (
            response.headers["cache-control"] == "private" and response.headers["x-robots-tag"] == "noindex"
        )
        assert len(statements) == 1  # one lookup, nothing rendered


async def test_a_unit_item_taken_off_the_booking_loses_its_ticket(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(client, cruise_booking(*guests()))
    child_url = options(booking["unitItems"][1]["ticket"])["PDF_URL"]
    kept = booking["unitItems"][0]
    changed = await client.patch(
        f"/octo/bookings/{booking['uuid']}",
        json={"unitItems": [{"unitId": "adult", "uuid": kept["uuid"]}, {"unitId": "adult"}]},
        headers=auth(),
    )
    assert changed.status_code == 200, changed.text
    items = changed.json()["unitItems"]
    assert options(items[0]["ticket"])["PDF_URL"] == options(kept["ticket"])["PDF_URL"]
    new_url = options(items[1]["ticket"])["PDF_URL"]
    assert new_url not in (child_url, options(kept["ticket"])["PDF_URL"])
    assert (await client.get(path_of(new_url))).status_code == 200
    gone = await client.get(path_of(child_url))
    assert gone.status_code == 410 and "taken off its booking" in gone.text


@pytest.mark.parametrize(
    "path",
    [
        "/tickets/" + "A" * 43 + ".pdf",  # well formed, unknown
        "/tickets/short.pdf",
        "/tickets/" + "A" * 43,
        "/tickets/" + "A" * 43 + ".png",
        "/tickets/%3Cscript%3E.pdf",
    ],
)
async def test_an_unknown_ticket_answers_404_and_tells_nothing(
    client: httpx.AsyncClient, cruise: Services, path: str
) -> None:
    with counted_statements(cruise) as statements:
        response = await client.get(path)
    assert response.status_code == 404
    assert response.text == "Not found\n"
    assert response.headers["cache-control"] == "private" and response.headers["x-robots-tag"] == "noindex"
    assert len(statements) <= 1


async def test_a_format_the_product_does_not_deliver_is_not_found(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(client, cruise_booking())
    url = options(booking["voucher"])["PDF_URL"]
    assert (await client.get(path_of(url).replace(".pdf", ".pkpass"))).status_code == 404


async def test_products_without_document_formats_issue_no_tokens(
    services: Services, client: httpx.AsyncClient
) -> None:
    await load(services, tickets_catalog(formats=["QRCODE"], methods=["TICKET"]))
    booking = await booked(client, cruise_booking(*guests()))
    assert [options(i["ticket"]) for i in booking["unitItems"]] == [
        {"QRCODE": i["supplierReference"]} for i in booking["unitItems"]
    ]
    assert booking["voucher"] is None
    async with services.database.transaction(write=False) as conn:
        assert await conn.scalar(select(func.count()).select_from(tickets)) == 0


async def test_ticket_methods_decide_which_documents_exist(
    services: Services, client: httpx.AsyncClient
) -> None:
    await load(services, tickets_catalog(methods=["VOUCHER"]))
    booking = await booked(client, cruise_booking(*guests()))
    assert all(item["ticket"] is None for item in booking["unitItems"])
    content = (await client.get(path_of(options(booking["voucher"])["PDF_URL"]))).content
    assert len(pdf_text(content)) == 1  # the voucher alone: no per-guest tickets


async def test_the_mail_can_have_a_bookings_pdf_and_links(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(client, cruise_booking(*guests()))
    found = await cruise.tickets.for_booking(booking["id"])
    assert found is not None
    assert (
        found.pdf.media_type == "application/pdf"
        and found.pdf.filename == f"{booking['supplierReference']}.pdf"
    )
    assert len(pdf_text(found.pdf.content)) == 3
    assert [(link.label, link.url) for link in found.links] == [
        ("Voucher (alle Teilnehmer)", options(booking["voucher"])["PDF_URL"]),
        ("Ticket Erwachsene", options(booking["unitItems"][0]["ticket"])["PDF_URL"]),
        ("Ticket Kind", options(booking["unitItems"][1]["ticket"])["PDF_URL"]),
    ]
    assert await cruise.tickets.for_booking(str(uuid.uuid4())) is None


async def test_webhook_payloads_carry_the_ticket_urls(client: httpx.AsyncClient, cruise: Services) -> None:
    """The URLs exist before the confirmation is announced: the webhook's payload has them."""
    from tests.receivers import receiver
    from tests.test_webhooks import drain, subscribe

    async with receiver() as hooks:
        await subscribe(client, hooks.url)
        booking = await booked(client, cruise_booking())
        await drain(cruise)
        payloads = [
            p["booking"] for p in hooks.payloads() if p.get("booking", {}).get("status") == "CONFIRMED"
        ]
    assert payloads and options(payloads[-1]["voucher"])["PDF_URL"] == options(booking["voucher"])["PDF_URL"]


@contextmanager
def counted_statements(services: Services) -> Iterator[list[str]]:
    """The SQL statements the database runs inside the block."""
    database = services.database
    engine = database._sqlite if database.is_sqlite else database._async.sync_engine  # type: ignore[union-attr]
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_any_text_renders_cut_and_escaped() -> None:
    """What the API would refuse still cannot break a page: a 10,000-character name, markup,
    control characters, text beyond the font (drawn as missing glyphs, never an error)."""
    page = TicketPage(
        heading="Ticket 1 of 1",
        supplier="S" * 10_000,
        supplier_contact="\n".join(["+44 20 7946 0000"] * 50),
        product="<para>" * 2_000,
        option="日本語のツアー 🚢",
        when="Tuesday 2 June 2026, 10:00 BST",
        lines=tuple(TicketLine("Guest", "N" * 10_000 + "\r\n&amp;") for _ in range(60)),
        instructions=("x " * 5_000,) * 20,
        code="ABCDEFGH",
        formats=(DeliveryFormat.QRCODE, DeliveryFormat.AZTECCODE, DeliveryFormat.CODE128),
        language="ja",
        words=Words("ja"),
    )
    content = render_pdf([page], "A4", "<title>")
    (text,) = pdf_text(content)
    assert "Guest: " + "N" * 30 in text and "…" in text
    assert 0 < text.count("<para>") <= 20  # the title is cut at 120 characters
    assert decoded_codes(content) == {"QRCode": "ABCDEFGH", "Aztec": "ABCDEFGH", "Code128": "ABCDEFGH"}


# A supplier's contact as the footer shows it: a short one, the demo supplier's, and one longer
# than the line (cut with an ellipsis).
CONTACTS = (
    "+44 20 7946 0000",
    "+442079460000 | bookings@harbourside.example | https://harbourside.example",
    "+44 20 7946 0000 | bookings@" + "harbourside" * 10 + ".example | https://harbourside.example",
)


@pytest.mark.parametrize("paper", ["A4", "LETTER"])
@pytest.mark.parametrize("language", ["en", "de"])
def test_the_footer_draws_the_contact_and_the_instruction_apart(paper: Paper, language: str) -> None:
    """The supplier's contact and "Show this page ..." never cover each other (the German
    instruction is half again as long), nor run past the page's margins."""
    words = Words(language)
    instruction = words("Show this page, printed or on screen")
    width = PAPER_SIZES[paper][0]
    for contact in CONTACTS:
        page = TicketPage(
            heading=words("Voucher"), supplier="Harbourside Adventures", supplier_contact=contact,
            product="Thames Sightseeing Cruise", option=None, when=None, lines=(), instructions=(),
            code="ABCDEFGH", formats=(DeliveryFormat.QRCODE,), language=language, words=words,
        )  # fmt: skip
        content = render_pdf([page], paper)
        show = text_box(content, instruction)
        start = text_box(content, contact[:16])
        end = text_box(content, contact[-27:] if contact in pdf_text(content)[0] else "…")
        drawn = (start[0], min(start[1], end[1]), end[2], max(start[3], end[3]))
        assert not overlap(show, drawn), (contact, show, drawn)
        for box in (show, drawn):
            assert box[0] >= MARGIN - 1 and box[2] <= width - MARGIN + 1 and box[1] > 0, (contact, box)


async def test_a_booking_the_supplier_accepts_gets_its_tickets_then(
    services: Services, client: httpx.AsyncClient
) -> None:
    await load(services, tickets_catalog(instantConfirmation=False))
    booking = await booked(client, cruise_booking(*guests()))
    assert booking["status"] == "PENDING" and booking["voucher"]["deliveryOptions"] == []
    accepted = await client.post(f"/admin/api/bookings/{booking['id']}/accept", headers=ADMIN)
    assert accepted.status_code == 200, accepted.text
    again = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert again["status"] == "CONFIRMED"
    content = (await client.get(path_of(options(again["voucher"])["PDF_URL"]))).content
    assert decoded_codes(content)["QRCode"] == booking["supplierReference"]
