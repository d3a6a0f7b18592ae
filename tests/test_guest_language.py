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
from tests.builders import catalog, load
from tests.conftest import auth
from tests.mail_helpers import Sink, parts
from tests.test_mail import sink
from tests.test_tickets_server import SCREENSHOTS, save_page
from tests.tickets_helpers import cruise_booking, pdf_text, ticketed_cruise

__all__ = ["sink"]  # the SMTP server on loopback, a fixture of the mail tests
GERMAN = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com", "locales": ["de-DE"]}


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
    return await load(services, catalog(product))


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
