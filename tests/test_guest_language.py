"""Guests in their own language, end to end: German content that leaves fields out falls back
field by field to the product's own language on the PDF ticket and in the email; money and dates
in German; ticket links and files named by their unit; HEAD on a ticket URL; and the email's
sender when BERTH_MAIL_FROM is not set."""

from __future__ import annotations

import re
import subprocess
import warnings
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from berth.container import Services
from berth.settings import Settings
from tests.berth_process import BERTH, berth_environment
from tests.builders import catalog, load, supplier
from tests.conftest import auth
from tests.mail_helpers import Sink, box_office, parts
from tests.test_mail import sink
from tests.test_tickets_server import SCREENSHOTS, save_page
from tests.tickets_helpers import cruise_booking, overlap, pdf_text, text_box, ticketed_cruise

__all__ = ["sink"]  # the SMTP server on loopback, a fixture of the mail tests
GERMAN = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com", "locales": ["de-DE"]}
# The demo supplier's contact: its ticket footer is as long as a real one.
HARBOURSIDE = {
    "website": "https://harbourside.example", "email": "bookings@supplier.test", "telephone": "+442079460000",
}  # fmt: skip


@pytest.fixture
def settings(settings: Settings, sink: Sink) -> Settings:
    """SMTP set, BERTH_MAIL_FROM not: guests' emails come from the supplier."""
    return settings.model_copy(
        update={"smtp_url": SecretStr(f"smtp://127.0.0.1:{sink.port}"), "mail_from": None}
    )


@pytest.fixture
async def cruise(services: Services) -> Services:
    """The ticketed cruise whose German content is a title alone: no meeting point, no
    redemption instructions."""
    product = ticketed_cruise()
    product["content"]["de-DE"] = {"title": "Hafenrundfahrt"}
    return await load(services, catalog(product, owner=supplier(contact=HARBOURSIDE)))


def english_only(document: Any) -> Any:
    """The catalogue document with every content in English alone (no German anywhere)."""
    if isinstance(document, dict):
        return {
            key: {"en-GB": value["en-GB"]} if key == "content" and "en-GB" in value else english_only(value)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [english_only(value) for value in document]
    return document


async def booked(client: httpx.AsyncClient, **confirm: Any) -> dict[str, Any]:
    body = cruise_booking({"unitId": "adult"}, {"unitId": "child"}, {"unitId": "adult"})
    assert (await client.post("/octo/bookings", json=body, headers=auth())).status_code == 200
    confirmed = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm", json={"contact": GERMAN, **confirm}, headers=auth()
    )
    assert confirmed.status_code == 200, confirmed.text
    result: dict[str, Any] = confirmed.json()
    return result


def ticket_path(ticket: dict[str, Any], delivery_format: str = "PDF_URL") -> str:
    [url] = [o["deliveryValue"] for o in ticket["deliveryOptions"] if o["deliveryFormat"] == delivery_format]
    return "/tickets/" + str(url).rpartition("/tickets/")[2]


async def test_a_german_ticket_takes_what_its_german_content_lacks_from_the_english(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    booking = await booked(client)
    voucher = await client.get(ticket_path(booking["voucher"]))
    save_page(voucher.content, "ticket-german.png")
    for text in pdf_text(voucher.content):
        assert "Hafenrundfahrt" in text
        assert "Treffpunkt: Harbour Pier, 1 Harbour Walk, London" in text
        assert re.search("So lösen Sie das Ticket ein .? ?Show your code at the pier gate", text)
        assert "Dienstag, 2. Juni 2026, 10:00 BST bis 11:00 BST" in text
        assert "Referenz des Anbieters:" in text and "Supplier reference" not in text


async def test_a_german_email_has_the_meeting_point_german_money_and_tickets_named_by_unit(
    client: httpx.AsyncClient, cruise: Services, sink: Sink
) -> None:
    await box_office(cruise)  # the supplier's own sale: its receipt shows the price
    booking = await booked(client, emailReceipt=True)
    assert await cruise.mailer.send_due() == 1
    [email] = sink.received
    # No BERTH_MAIL_FROM: from the supplier, by its name and contact email in the catalogue.
    assert email["From"] == "Test Supplier <bookings@supplier.test>"
    text, html = parts(email)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "email-german.html").write_text(html, encoding="utf-8")  # to look at
    assert "Wo: Harbour Pier, 1 Harbour Walk, London" in text
    assert "Preis: 65,00\N{NO-BREAK SPACE}€" in text
    assert "Wann: Dienstag, 2. Juni 2026, 10:00 BST (Europe/London)" in text
    links = re.findall(r"^(Voucher[^:]*|Ticket [^:]*): (\S+)\r?$", text, re.M)
    assert [label for label, _ in links] == [
        "Voucher (alle Teilnehmer)", "Ticket Erwachsene 1", "Ticket Kind", "Ticket Erwachsene 2",
    ]  # fmt: skip
    items = booking["unitItems"]
    assert [url.rpartition("/tickets/")[2] for _, url in links[1:]] == [
        ticket_path(item["ticket"]).rpartition("/")[2] for item in items
    ]
    for label, url in links:
        assert f'<a href="{url}">{label}</a>' in html
    names = []
    for item in items:
        response = await client.get(ticket_path(item["ticket"]))
        names.append(response.headers["content-disposition"])
    reference = booking["supplierReference"]
    assert names == [
        f'inline; filename="{reference}-adult-1.pdf"',
        f'inline; filename="{reference}-child.pdf"',
        f'inline; filename="{reference}-adult-2.pdf"',
    ]


async def test_a_german_guest_of_a_product_without_german_reads_german_labels(
    client: httpx.AsyncClient, services: Services, sink: Sink
) -> None:
    """Berth's own words (labels, dates, money) follow the guest's language whenever Berth has
    texts in it; the product's content, having no German, is read in English, field by field."""
    await load(services, catalog(english_only(ticketed_cruise())))
    # German first, English second: German labels, not the English content's language.
    booking = await booked(client, emailReceipt=True, contact={**GERMAN, "locales": ["de-DE", "en"]})
    voucher = await client.get(ticket_path(booking["voucher"]))
    [page, *_] = pdf_text(voucher.content)
    assert "Harbour Cruise" in page and "Morning sailing" in page  # the content: English
    assert "Dienstag, 2. Juni 2026, 10:00 BST bis 11:00 BST" in page
    assert "Treffpunkt: Harbour Pier, 1 Harbour Walk, London" in page
    assert "Teilnehmer: 2 × Adult, 1 × Child" in page  # noqa: RUF001
    assert re.search("So lösen Sie das Ticket ein .? ?Show your code at the pier gate", page)
    assert "Referenz des Anbieters:" in page and "Zeigen Sie diese Seite vor" in page
    assert "Meeting point" not in page and "Supplier reference" not in page
    assert await services.mailer.send_due() == 1
    [email] = sink.received
    assert email["Content-Language"] == "de"
    text, _ = parts(email)
    assert "Wann: Dienstag, 2. Juni 2026, 10:00 BST (Europe/London)" in text
    assert "== Harbour Cruise ==" in text
    assert re.search(r"^Voucher \(alle Teilnehmer\): ", text, re.M)
    assert re.search(r"^Ticket Adult 1: ", text, re.M)  # the ticket's name as its page says


async def test_the_german_footer_keeps_the_contact_apart_from_the_instruction(
    client: httpx.AsyncClient, cruise: Services
) -> None:
    """A4, a German guest, the demo supplier's contact: on every page, the supplier's contact
    and "Zeigen Sie diese Seite vor ..." are drawn where neither covers the other, and inside
    the page's margins."""
    booking = await booked(client)
    voucher = await client.get(ticket_path(booking["voucher"]))
    pages = pdf_text(voucher.content)
    assert len(pages) == 4  # the voucher, then one page a guest
    for number in range(len(pages)):
        show = text_box(
            voucher.content, "Zeigen Sie diese Seite vor, gedruckt oder auf dem Bildschirm", number
        )
        contact = text_box(
            voucher.content, "+442079460000 | bookings@supplier.test | https://harbourside.example", number
        )
        assert not overlap(show, contact), (number, show, contact)
        for box in (show, contact):
            assert box[0] >= 42 and box[2] <= 595 - 42 and box[1] > 0, box  # A4, 15 mm margins


async def test_accept_language_chooses_when_the_contact_names_no_locales(
    client: httpx.AsyncClient, cruise: Services, sink: Sink
) -> None:
    """The confirming request's Accept-Language is kept with the contact (not shown to the
    reseller) and chooses the guest's language when the contact names no `locales`; the
    contact's `locales` come first."""
    english = {key: value for key, value in GERMAN.items() if key != "locales"}
    chosen, references = [], []
    for contact, header in ((english, "de-AT, en;q=0.5"), ({**english, "locales": ["en-GB"]}, "de")):
        body = cruise_booking({"unitId": "adult"})
        assert (await client.post("/octo/bookings", json=body, headers=auth())).status_code == 200
        confirmed = await client.post(
            f"/octo/bookings/{body['uuid']}/confirm",
            json={"contact": contact, "emailReceipt": True},
            headers=auth(**{"Accept-Language": header}),
        )
        assert confirmed.status_code == 200, confirmed.text
        assert confirmed.json()["contact"]["locales"] == contact.get("locales", [])
        voucher = await client.get(ticket_path(confirmed.json()["voucher"]))
        chosen.append("Referenz des Anbieters" in pdf_text(voucher.content)[0])
        references.append(confirmed.json()["supplierReference"])
    assert await cruise.mailer.send_due() == 2  # sent at once: in either order
    german, english_mail = sorted(
        sink.received, key=lambda email: references.index(email["Subject"].split()[2][:-1])
    )
    assert german["Content-Language"] == "de-DE" and german["Subject"].startswith("Ihre Buchung ")
    assert english_mail["Content-Language"] == "en-GB" and english_mail["Subject"].startswith("Your booking ")
    assert chosen == [True, False]  # the tickets the same


async def test_accept_language_of_an_orders_confirmation_chooses_for_its_guests(
    client: httpx.AsyncClient, cruise: Services, sink: Sink
) -> None:
    cart = auth(capabilities="octo/cart")
    order = await client.post("/octo/orders", json={"currency": "EUR"}, headers=cart)
    assert order.status_code == 200, order.text
    body = {**cruise_booking({"unitId": "adult"}), "orderId": order.json()["id"]}
    assert (await client.post("/octo/bookings", json=body, headers=cart)).status_code == 200
    english = {key: value for key, value in GERMAN.items() if key != "locales"}
    confirmed = await client.post(
        f"/octo/orders/{order.json()['id']}/confirm",
        json={"contact": english, "emailReceipt": True},
        headers={**cart, "Accept-Language": "de"},
    )
    assert confirmed.status_code == 200, confirmed.text
    [booking] = confirmed.json()["bookings"]
    assert booking["contact"]["locales"] == []
    voucher = await client.get(ticket_path(booking["voucher"]))
    assert "Referenz des Anbieters" in pdf_text(voucher.content)[0]
    assert await cruise.mailer.send_due() == 1
    assert sink.received[0]["Subject"].startswith("Ihre Buchung ")


async def test_head_answers_like_get_without_the_body(client: httpx.AsyncClient, cruise: Services) -> None:
    booking = await booked(client)
    for path in (ticket_path(booking["voucher"]), ticket_path(booking["unitItems"][1]["ticket"])):
        got, head = await client.get(path), await client.head(path)
        assert head.status_code == 200 and head.content == b""
        for header in ("content-type", "content-length", "content-disposition", "cache-control"):
            assert head.headers[header] == got.headers[header], header
    unknown = "/tickets/" + "A" * 43 + ".pdf"
    assert (await client.head(unknown)).status_code == (await client.get(unknown)).status_code == 404
    cancelled = await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth())
    assert cancelled.status_code == 200
    head = await client.head(ticket_path(booking["voucher"]))
    assert head.status_code == 410 and head.content == b""


def worker_start(database_url: str, **env: str) -> str:
    """What `berth worker` says on stderr as it starts (stopped once it is running)."""
    process = subprocess.Popen(
        [str(BERTH), "worker"],
        env=berth_environment(database_url, BERTH_SMTP_URL="smtp://127.0.0.1:9", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:  # ends when the process does
            if "Berth worker running" in line:
                break
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=60)
    return errors


def test_the_worker_warns_at_start_when_guests_mail_has_no_sender(database_url: str) -> None:
    """SMTP set, neither BERTH_MAIL_FROM nor a supplier email in the catalogue (none loaded)."""
    warned = worker_start(database_url)
    assert "neither BERTH_MAIL_FROM nor the catalogue's supplier contact email is set" in " ".join(
        warned.split()
    )
    assert "warning" not in worker_start(database_url, BERTH_MAIL_FROM="Thames Co <mail@thames.example>")


def test_the_api_document_has_one_operation_per_ticket_url(app: FastAPI) -> None:
    """HEAD is served, not documented: a second operation would repeat GET's operation id."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = app.openapi()["paths"]
    assert list(paths["/tickets/{name}"]) == ["get"]
