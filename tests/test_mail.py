"""Guests' emails end to end: confirmed over HTTP, queued in the booking's transaction, sent by
the mail worker to a real SMTP server on loopback, and read back as the guest's mail program
would read them."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from berth.container import Services, build_services
from berth.delivery.mail.compose import NAME_LIMIT, Letter, Line, one_line, render
from berth.delivery.mail.smtp import build_email
from berth.domain.staff import Role
from berth.settings import Settings
from berth.store import mail_repo
from berth.store.tables import mail_messages
from tests.bookings_helpers import GUEST, SLOT, reservation, reserve
from tests.builders import load
from tests.conftest import ADMIN, START, auth
from tests.departures_helpers import cancel_departure, departure_path
from tests.mail_helpers import Sink, parts, smtp_sink
from tests.test_staff_roles import refused, staff_token
from tests.tickets_helpers import cruise_booking, decoded_codes, pdf_text, tickets_catalog


@pytest.fixture
async def sink() -> AsyncIterator[Sink]:
    async with smtp_sink() as running:
        yield running


@pytest.fixture
def settings(settings: Settings, sink: Sink) -> Settings:
    return settings.model_copy(
        update={
            "smtp_url": SecretStr(f"smtp://127.0.0.1:{sink.port}"),
            "mail_from": "Thames Co <mail@berth.test>",
        }
    )


async def confirm_with_receipt(
    client: httpx.AsyncClient, contact: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    booking = await reserve(client, reservation(currency="EUR"))
    response = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm",
        json={"contact": contact or GUEST, "emailReceipt": True, **extra},
        headers=auth(),
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def send_all(services: Services) -> None:
    """Send until nothing is due (a booking's later emails wait for its earlier ones)."""
    while await services.mailer.send_due():
        pass


async def messages(services: Services) -> list[mail_repo.Message]:
    found, _ = await _list(services)
    return found


async def _list(services: Services) -> tuple[list[mail_repo.Message], int]:
    async with services.database.transaction(write=False) as conn:
        return await mail_repo.list_messages(conn)


async def test_a_receipt_reaches_the_guest(client: httpx.AsyncClient, bookable: Services, sink: Sink) -> None:
    booking = await confirm_with_receipt(client)
    assert await bookable.mailer.send_due() == 1
    [email] = sink.received
    assert parseaddr(email["To"]) == ("Ada Lovelace", "ada@example.com")
    assert email["From"] == "Thames Co <mail@berth.test>"
    assert email["Content-Language"] == "en-GB"
    assert email["Subject"] == f"Your booking {booking['supplierReference']}: Thames Sightseeing Cruise"
    assert email.get_content_type() == "multipart/alternative"
    text, html = parts(email)
    assert text.startswith(
        "Hello Ada Lovelace,\r\nThank you for your booking."
    )  # a capital after the greeting
    for body in (text, html):
        assert booking["supplierReference"] in body
        assert "Tuesday, 2 June 2026, 10:00 BST (Europe/London)" in body
        assert "2 × Adult" in body  # noqa: RUF001
        # A reseller's sale: its price and terms are the reseller's (tests/test_receipts.py).
        assert "contact the agent you booked with" in body
        assert "Test Supplier" in body
    [stored] = await messages(bookable)
    assert stored.status == mail_repo.SENT and stored.booking_id == booking["id"]
    assert email["Message-ID"] == f"<{stored.id}@berth.test>"


async def test_german_guests_read_german(client: httpx.AsyncClient, bookable: Services, sink: Sink) -> None:
    await confirm_with_receipt(client, {**GUEST, "locales": ["de-AT", "en"]})
    await bookable.mailer.send_due()
    [email] = sink.received
    assert email["Content-Language"] == "de-DE"
    assert email["Subject"].startswith("Ihre Buchung ")
    assert email["Subject"].endswith(": Sightseeing-Bootsfahrt auf der Themse")
    text, _ = parts(email)
    assert "wenden Sie sich an den Vermittler, bei dem Sie gebucht haben." in text
    assert "Wann: Dienstag, 2. Juni 2026, 10:00 BST" in text
    assert "Guten Tag Ada Lovelace,\r\nVielen Dank für Ihre Buchung." in text


async def test_no_receipt_unless_asked(client: httpx.AsyncClient, bookable: Services, sink: Sink) -> None:
    booking = await reserve(client)
    response = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm", json={"contact": GUEST}, headers=auth()
    )
    assert response.status_code == 200
    await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth())
    assert await bookable.mailer.send_due() == 0
    assert await messages(bookable) == []


async def test_cancellation_tells_who_and_why(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    booking = await confirm_with_receipt(client)
    response = await client.post(
        f"/octo/bookings/{booking['uuid']}/cancel", json={"reason": "Guest fell ill"}, headers=auth()
    )
    assert response.status_code == 200
    await send_all(bookable)
    receipt, cancelled = sink.received
    assert (
        cancelled["Subject"]
        == f"Cancelled: booking {booking['supplierReference']}, Thames Sightseeing Cruise"
    )
    text, _ = parts(cancelled)
    assert "It was cancelled at the request of the agent you booked with." in text
    assert "Guest fell ill" not in text  # the reseller's own note (tests/test_receipts.py)
    # The supplier cannot know what the agent refunds: it promises nothing.
    assert "Any refund is handled by the agent you booked with." in text and "refunded in full" not in text
    assert receipt["Message-ID"] != cancelled["Message-ID"]


async def test_a_departure_cancellation_says_so(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    await confirm_with_receipt(client)
    response = await cancel_departure(client, "Storm on the river")
    assert response.status_code == 200, response.text
    await send_all(bookable)
    text, _ = parts(sink.received[-1])
    assert "Test Supplier cancelled the departure." in text
    assert "Reason: Storm on the river" in text


async def test_tickets_cancelled_with_their_departure_after_boarding_began_are_told(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    """One of two guests through the gate, the departure cancelled with their tickets not through:
    the guest is told which tickets went, by whom and why, and what stands; no tickets attached."""
    booking = await confirm_with_receipt(client)
    first, second = booking["unitItems"]
    body = {"code": first["supplierReference"], "nonce": uuid.uuid4().hex, "admitAnotherDay": True}
    assert (await client.post("/admin/api/checkin", json=body, headers=ADMIN)).json()["result"] == "ADMITTED"
    response = await client.post(
        departure_path(suffix="/cancel"),
        json={"reason": "Storm on the river", "notThrough": "CANCEL"},
        headers=ADMIN,
    )
    assert response.status_code == 200, response.text
    await send_all(bookable)
    told = sink.received[-1]
    assert told["Subject"] == (
        f"Tickets cancelled: booking {booking['supplierReference']}, Thames Sightseeing Cruise"
    )
    text, html = parts(told)
    said = (
        "The tickets of your booking for guests who had not boarded have been cancelled: "
        f"{second['supplierReference']}."
    )
    assert said in text and said in html
    assert "Test Supplier cancelled the departure." in text and "Reason: Storm on the river" in text
    assert "Guests: 1 × Adult" in text  # noqa: RUF001 (what stands: the guest through the gate)
    assert list(told.iter_attachments()) == []


async def test_a_move_in_time_is_told(client: httpx.AsyncClient, bookable: Services, sink: Sink) -> None:
    booking = await confirm_with_receipt(client)
    moved = "2026-06-02T14:00:00+01:00"
    response = await client.patch(
        f"/octo/bookings/{booking['uuid']}", json={"availabilityId": moved}, headers=auth()
    )
    assert response.status_code == 200, response.text
    await send_all(bookable)
    changed = sink.received[-1]
    assert changed["Subject"].startswith("New time for booking ")
    text, _ = parts(changed)
    assert "When: Tuesday, 2 June 2026, 14:00 BST" in text
    assert "Previously: Tuesday, 2 June 2026, 10:00 BST" in text


async def test_hostile_contact_fields(client: httpx.AsyncClient, bookable: Services, sink: Sink) -> None:
    name = "<script>alert(1)</script>\r\nBcc: victim@example.com"
    contact = {"fullName": name, "firstName": "A", "lastName": "B", "emailAddress": "ada@example.com"}
    await confirm_with_receipt(client, contact)
    # The longest name the API takes (a 10,000-character one is refused: see the next test).
    await confirm_with_receipt(client, {**GUEST, "fullName": "Z" * 1000})
    assert await bookable.mailer.send_due() == 2
    # One batch sends both at once: they arrive in either order.
    [hostile] = [message for message in sink.received if "Z" not in message["To"]]
    [long] = [message for message in sink.received if "Z" in message["To"]]
    assert [rcpt for _, rcpt in sink.envelopes] == [["ada@example.com"], ["ada@example.com"]]
    assert hostile["Bcc"] is None
    assert parseaddr(hostile["To"]) == (
        "<script>alert(1)</script> Bcc: victim@example.com",
        "ada@example.com",
    )
    text, html = parts(hostile)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Hello <script>alert(1)</script> Bcc: victim@example.com," in text
    # A long name is folded into several encoded words; its letters are all there.
    assert parseaddr(long["To"])[0].replace(" ", "") == "Z" * 199 + "…"
    text, _ = parts(long)
    assert "Z" * 199 + "…" in text and "Z" * 200 not in text


async def test_a_ten_thousand_character_name(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    """Refused by the API with a clear error; and were one stored (the box office, an import),
    the message stays whole: the name is cut in the greeting and the header."""
    booking = await reserve(client)
    response = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm",
        json={"contact": {**GUEST, "fullName": "Z" * 10_000}, "emailReceipt": True},
        headers=auth(),
    )
    assert response.status_code == 400
    assert response.json()["errorMessage"] == "contact.fullName: must be at most 1000 characters"
    line = Line("Cruise", None, "REF", "", None, [], [], None, "")
    supplier: dict[str, str | None] = dict.fromkeys(("email", "telephone", "website", "address"))
    _, text, html = render(Letter("receipt", "en", "Z" * 10_000, [line], {**supplier, "name": "Test"}))
    assert "Hello " + "Z" * 199 + "…," in text and "Z" * 200 not in html
    message = mail_repo.Message(
        id="mail_long", sequence=1, kind="receipt", booking_id=None, order_id=None, requested_by="reseller",
        facts={}, status="sending", attempts=0, error=None, created_at=START, next_attempt_at=None, sent_at=None,
        written=None, attachments=[],
    )  # fmt: skip
    written = mail_repo.Written("ada@example.com", one_line("Z" * 10_000, NAME_LIMIT), "en", "s", text, html)
    email = build_email(message, written, "Berth <mail@berth.test>", None)
    assert all(len(line) <= 998 for line in email.as_string().splitlines())


async def test_not_an_address_gets_no_email(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    booking = await confirm_with_receipt(client, {**GUEST, "emailAddress": "ada at example"})
    assert booking["status"] == "CONFIRMED"
    assert await bookable.mailer.send_due() == 1
    assert sink.received == []
    [stored] = await messages(bookable)
    assert stored.status == mail_repo.UNDELIVERABLE and stored.attempts == 1
    assert stored.error == "the contact's emailAddress 'ada at example' is not an email address"


async def test_an_unreachable_server_loses_nothing(
    client: httpx.AsyncClient, bookable: Services, sink: Sink, clock: Any
) -> None:
    sink.replies.extend(["451 try again later"])
    await confirm_with_receipt(client)
    await bookable.mailer.send_due()
    [stored] = await messages(bookable)
    assert stored.status == mail_repo.PENDING and stored.attempts == 1
    assert stored.error is not None and "451" in stored.error
    assert sink.received == []
    clock.advance(seconds=73)  # the first retry: 60 s ± 20 %
    assert await bookable.mailer.send_due() == 1
    [stored] = await messages(bookable)
    assert stored.status == mail_repo.SENT and stored.attempts == 2
    assert len(sink.received) == 1


async def test_a_refusal_is_final(client: httpx.AsyncClient, bookable: Services, sink: Sink) -> None:
    sink.replies.extend(["550 no such mailbox"])
    await confirm_with_receipt(client)
    await bookable.mailer.send_due()
    [stored] = await messages(bookable)
    assert stored.status == mail_repo.FAILED and stored.error is not None and "550" in stored.error


async def test_order_receipt_lists_its_bookings(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    order = await client.post(
        "/octo/orders", json={"currency": "EUR"}, headers=auth(capabilities="octo/cart")
    )
    assert order.status_code == 200, order.text
    order_id = order.json()["id"]
    for availability in (SLOT, "2026-06-02T12:00:00+01:00"):
        await reserve(client, {**reservation(availability_id=availability), "orderId": order_id})
    response = await client.post(
        f"/octo/orders/{order_id}/confirm",
        json={"contact": GUEST, "emailReceipt": True},
        headers=auth(capabilities="octo/cart"),
    )
    assert response.status_code == 200, response.text
    assert await bookable.mailer.send_due() == 1
    [email] = sink.received
    text, _ = parts(email)
    assert f"Order reference: {response.json()['supplierReference']}" in text
    assert "10:00 BST" in text and "12:00 BST" in text
    async with bookable.database.transaction(write=False) as conn:
        rows = (await conn.execute(select(mail_messages.c.order_id))).all()
    assert [row.order_id for row in rows] == [order_id]


async def test_a_receipt_attaches_and_links_the_tickets(
    services: Services, client: httpx.AsyncClient, sink: Sink
) -> None:
    await load(services, tickets_catalog())
    body = cruise_booking({"unitId": "adult"}, {"unitId": "child"})
    assert (await client.post("/octo/bookings", json=body, headers=auth())).status_code == 200
    contact = {**GUEST, "locales": ["de"]}
    confirmed = await client.post(
        f"/octo/bookings/{body['uuid']}/confirm",
        json={"contact": contact, "emailReceipt": True},
        headers=auth(),
    )
    assert confirmed.status_code == 200, confirmed.text
    reference = confirmed.json()["supplierReference"]
    assert await services.mailer.send_due() == 1
    [email] = sink.received
    assert email.get_content_type() == "multipart/mixed"
    [attachment] = list(email.iter_attachments())
    assert attachment.get_filename() == f"{reference}.pdf"
    assert attachment.get_content_type() == "application/pdf"
    attached = attachment.get_content()
    assert isinstance(attached, bytes)
    assert len(pdf_text(attached)) == 3  # the voucher, then one page a guest
    assert "Hafenrundfahrt" in pdf_text(attached)[0]
    text, html = parts(email)
    assert "Ihre Tickets hängen als PDF an" in text
    links = re.findall(r"^(Voucher \(alle Teilnehmer\)|Ticket \w+): (\S+)\r?$", text, re.M)
    # Each ticket's link names its unit, in the guest's language.
    assert [label for label, _ in links] == ["Voucher (alle Teilnehmer)", "Ticket Erwachsene", "Ticket Kind"]
    for _, url in links:
        assert f'href="{url}"' in html
    voucher = await client.get(urlsplit(links[0][1]).path)  # opened as the guest would: no login
    assert voucher.status_code == 200 and voucher.headers["content-type"] == "application/pdf"
    assert pdf_text(voucher.content) == pdf_text(attached)
    assert decoded_codes(voucher.content)["QRCode"] == decoded_codes(attached)["QRCode"]


async def test_a_cancellation_carries_no_tickets(
    services: Services, client: httpx.AsyncClient, sink: Sink
) -> None:
    await load(services, tickets_catalog())
    body = cruise_booking()
    await client.post("/octo/bookings", json=body, headers=auth())
    await client.post(
        f"/octo/bookings/{body['uuid']}/confirm",
        json={"contact": GUEST, "emailReceipt": True},
        headers=auth(),
    )
    await client.post(f"/octo/bookings/{body['uuid']}/cancel", json={"reason": "rain"}, headers=auth())
    await send_all(services)
    receipt, cancelled = sink.received
    assert receipt["Subject"].startswith("Your booking ")
    assert list(receipt.iter_attachments()) == []  # cancelled before it was sent: its tickets are void
    assert "/tickets/" not in parts(receipt)[0] and "/tickets/" not in parts(cancelled)[0]
    assert list(cancelled.iter_attachments()) == []


async def test_a_dropped_kept_connection_is_replaced(client: httpx.AsyncClient, bookable: Services) -> None:
    """The worker keeps its SMTP connections between emails; one the server has closed since
    is replaced at once, and the email goes out on its first attempt."""
    async with smtp_sink(idle_timeout=0.3) as short:
        services = build_services(
            bookable.settings.model_copy(update={"smtp_url": SecretStr(f"smtp://127.0.0.1:{short.port}")}),
            bookable.clock,
        )
        try:
            for _ in range(2):
                await confirm_with_receipt(client)
                assert await services.mailer.send_due() == 1
                await asyncio.sleep(0.6)  # the server drops the idle connection
        finally:
            await services.close()
        assert len(short.received) == 2
        assert [m.attempts for m in await messages(bookable)] == [1, 1]


async def test_a_relay_that_takes_fewer_connections_costs_no_attempt(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """The worker opens up to BERTH_MAIL_CONCURRENCY connections, and no more than the relay
    takes: the emails the relay had no connection for (421) wait for one of the worker's own
    and go out on their first attempt."""
    async with smtp_sink(max_connections=2) as relay:
        services = build_services(
            bookable.settings.model_copy(
                update={"smtp_url": SecretStr(f"smtp://127.0.0.1:{relay.port}"), "mail_concurrency": 6}
            ),
            bookable.clock,
        )
        try:
            for _ in range(6):
                await confirm_with_receipt(client)
            assert await services.mailer.send_due() == 6
        finally:
            await services.close()
        assert len(relay.received) == 6
        assert relay.turned_away > 0 and relay.most_connections == 2
    assert {(m.status, m.attempts) for m in await messages(bookable)} == {(mail_repo.SENT, 1)}


async def test_the_box_office_sends_a_receipt(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    booking = await reserve(client)
    await client.post(f"/octo/bookings/{booking['uuid']}/confirm", json={"contact": GUEST}, headers=auth())
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    refused(await client.post(f"/admin/api/bookings/{booking['id']}/receipt", headers=viewer), "operator")
    operator = await staff_token(bookable, "operator@example.com", Role.OPERATOR)
    sent = await client.post(f"/admin/api/bookings/{booking['id']}/receipt", headers=operator)
    assert sent.status_code == 200, sent.text
    assert sent.json()["to"] == "ada@example.com" and sent.json()["requestedBy"] == "operator@example.com"
    assert sent.json()["subject"].startswith("Your booking ")
    await bookable.mailer.send_due()
    assert len(sink.received) == 1
    listed = await client.get(f"/admin/api/bookings/{booking['id']}/mail", headers=ADMIN)
    assert [m["status"] for m in listed.json()["messages"]] == ["sent"]
    audit = await client.get("/admin/api/audit", headers=ADMIN)
    assert any(e["action"] == "booking.receipt" for e in audit.json()["entries"])
    missing = await client.post("/admin/api/bookings/nope/receipt", headers=ADMIN)
    assert missing.status_code == 404
    held = await reserve(client)
    on_hold = await client.post(f"/admin/api/bookings/{held['id']}/receipt", headers=ADMIN)
    assert on_hold.status_code == 400 and on_hold.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "is ON_HOLD: only a confirmed" in on_hold.json()["errorMessage"]
    assert (await client.get("/admin/api/mail?status=bogus", headers=ADMIN)).status_code == 400
    assert (await client.get("/admin/api/mail/nope", headers=ADMIN)).status_code == 404
