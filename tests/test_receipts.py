"""What a guest's receipt tells (issue 49 §3), sent by the mail worker to a real SMTP server on
loopback: where and when to be (a pickup's point and time, as the ticket says), the price and the
free-cancellation terms only for the supplier's own sales (a reseller's guest is sent to the
reseller), and never a reseller's own note of why it cancelled."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import GUEST, reservation, reserve
from tests.builders import catalog, load
from tests.conftest import auth
from tests.mail_helpers import Sink, box_office, parts
from tests.pickups_helpers import COACH, DEPARTURE, GRAND, coach_tour
from tests.test_mail import confirm_with_receipt, send_all, settings, sink
from tests.test_tickets_server import SCREENSHOTS
from tests.tickets_helpers import pdf_text

__all__ = ["settings", "sink"]  # the SMTP server on loopback and the settings that send to it
PICKUPS = "octo/pickups"
# What the coach's ticket says of the Grand Hotel's pickup, and so the email: 45 minutes before
# the 10:00 departure, for 15 minutes; in English and in German.
GRAND_HOTEL = "Grand Hotel, 1 Princes Street, EH2 2EQ, Edinburgh, GB"
READ = {
    "en-GB": ("When: Tuesday, 2 June 2026, 10:00 BST", f"Pickup: {GRAND_HOTEL}, 09:15 BST to 09:30 BST",
           "Directions: Wait at the main entrance"),
    "de-DE": ("Wann: Dienstag, 2. Juni 2026, 10:00 BST", f"Abholung: {GRAND_HOTEL}, 09:15 BST bis 09:30 BST",
           "Wegbeschreibung: Wait at the main entrance"),
}  # fmt: skip


@pytest.fixture
async def coach(services: Services) -> Services:
    """The coach tour that collects its guests, delivering PDF tickets."""
    return await load(services, catalog({**coach_tour(), "deliveryFormats": ["QRCODE", "PDF_URL"]}))


@pytest.mark.parametrize("language", ["en-GB", "de-DE"])
async def test_a_pickup_receipt_says_where_and_when_to_be(
    client: httpx.AsyncClient, coach: Services, sink: Sink, language: str
) -> None:
    body = {**reservation(("adult",)), **COACH, "availabilityId": DEPARTURE, "pickupPointId": GRAND}
    held = await client.post("/octo/bookings", json=body, headers=auth(capabilities=PICKUPS))
    assert held.status_code == 200, held.text
    confirmed = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm",
        json={"contact": {**GUEST, "locales": [language]}, "emailReceipt": True},
        headers=auth(capabilities=PICKUPS),
    )
    assert confirmed.status_code == 200, confirmed.text
    assert await coach.mailer.send_due() == 1
    [email] = sink.received
    text, html = parts(email)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / f"receipt-coach-{language}.html").write_text(html, encoding="utf-8")  # to look at
    when, pickup, directions = READ[language]
    assert f"{when} (Europe/London)\r\n{pickup}\r\n{directions}\r\n" in text
    label, _, value = pickup.partition(": ")
    assert f'<th style="text-align: left; padding: 2px 12px 2px 0;">{label}</th><td>{value}</td>' in html
    # The ticket it carries says the same.
    [attachment] = list(email.iter_attachments())
    ticket = attachment.get_content()
    assert isinstance(ticket, bytes)
    assert pickup in pdf_text(ticket)[0] and directions in pdf_text(ticket)[0]


async def test_a_resellers_receipt_shows_no_price_and_sends_the_guest_to_the_reseller(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    """The supplier knows its retail price and its cutoff, not what the reseller charged nor
    the reseller's own terms: the receipt promises neither."""
    await confirm_with_receipt(client)
    assert await bookable.mailer.send_due() == 1
    for body in parts(sink.received[0]):
        assert "Cancellation: To cancel or change this booking, contact the agent you booked with." in (
            body.replace("</th><td>", ": ")
        )
        assert "Free cancellation" not in body
        assert "Price" not in body and "50.00" not in body


async def test_a_box_office_receipt_shows_the_price_and_the_terms(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    """The supplier's own sale: the guest paid the retail price, and cancels with the supplier."""
    await box_office(bookable)
    booking = await confirm_with_receipt(client)
    assert await bookable.mailer.send_due() == 1  # written out while the booking stands
    cancelled = await client.post(
        f"/octo/bookings/{booking['uuid']}/cancel", json={"reason": "Asked at the desk"}, headers=auth()
    )
    assert cancelled.status_code == 200, cancelled.text
    await send_all(bookable)
    receipt, notice = sink.received
    for body in parts(receipt):
        assert "€50.00" in body
        assert "Free cancellation until Monday, 1 June 2026, 10:00 BST" in body
        assert "agent" not in body
    text, _ = parts(notice)
    assert "It was cancelled by Test Supplier.\r\nFor any refund, contact Test Supplier.\r\n" in text
    assert "agent" not in text


async def test_a_resellers_reason_for_cancelling_is_not_quoted(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    booking = await confirm_with_receipt(client)
    reason = "Customer no-show risk, blacklisted card"
    response = await client.post(
        f"/octo/bookings/{booking['uuid']}/cancel", json={"reason": reason}, headers=auth()
    )
    assert response.status_code == 200
    await send_all(bookable)
    for body in parts(sink.received[-1]):
        assert "It was cancelled at the request of the agent you booked with." in body
        assert "blacklisted" not in body and "Reason" not in body


async def test_an_order_receipt_shows_no_price_for_a_reseller(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    order = await client.post(
        "/octo/orders", json={"currency": "EUR"}, headers=auth(capabilities="octo/cart")
    )
    assert order.status_code == 200, order.text
    await reserve(client, {**reservation(), "orderId": order.json()["id"]})
    confirmed: Any = await client.post(
        f"/octo/orders/{order.json()['id']}/confirm",
        json={"contact": GUEST, "emailReceipt": True},
        headers=auth(capabilities="octo/cart"),
    )
    assert confirmed.status_code == 200, confirmed.text
    assert await bookable.mailer.send_due() == 1
    text, _ = parts(sink.received[0])
    assert "contact the agent you booked with" in text and "€" not in text
