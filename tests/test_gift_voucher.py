"""A gift voucher's PDF and email: queued in the confirmation's transaction, written out by the
mail worker in the language of the person it goes to (the recipient with an address, else the
buyer), sent to a real SMTP server on loopback with the voucher attached: the code as a QR code
and as text, the value, the validity, the message, for whom."""

from __future__ import annotations

from collections.abc import AsyncIterator
from email.utils import parseaddr
from pathlib import Path

import httpx
import pypdfium2
import pytest
from pydantic import SecretStr

from berth.container import Services
from berth.settings import Settings
from tests.gifts_helpers import BUYER, FRIEND, answered, code_of, gift_body, issued, sell_gifts, send
from tests.mail_helpers import Sink, parts, smtp_sink
from tests.tickets_helpers import decoded_codes, pdf_text


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


@pytest.fixture
async def selling(bookable: Services) -> Services:
    await sell_gifts(bookable)
    return bookable


async def test_the_recipient_gets_the_voucher_with_its_code(
    client: httpx.AsyncClient, selling: Services, sink: Sink, tmp_path: Path
) -> None:
    created = answered(await send(client, "POST", "/gifts", gift_body()))
    assert await selling.mail.messages_of_gift(created["id"]) == []
    gift = answered(await send(client, "POST", f"/gifts/{created['uuid']}/confirm"))
    code = code_of(gift)
    [queued] = await selling.mail.messages_of_gift(gift["id"])  # in the confirmation's transaction
    assert (queued.kind, queued.status, queued.booking_id, queued.order_id) == (
        "gift voucher",
        "pending",
        None,
        None,
    )
    assert await selling.mailer.send_due() == 1
    [email] = sink.received
    assert parseaddr(email["To"]) == ("Grace Hopper", FRIEND["emailAddress"])
    supplier = (await selling.catalog.snapshot()).catalog.supplier.name
    assert email["Subject"] == f"A gift voucher for you from {supplier}"
    text, html = parts(email)
    for body in (text, html):
        assert "Ada Lovelace sends you a gift voucher of €50.00" in body
        assert code in body and "Happy birthday!" in body and "1 June 2029" in body
    [attachment] = list(email.iter_attachments())
    assert attachment.get_filename() == f"{gift['supplierReference']}.pdf"
    pdf = attachment.get_content()
    assert isinstance(pdf, bytes)
    assert decoded_codes(pdf)["QRCode"] == code
    [page] = pdf_text(pdf)
    for shown in ("€50.00", "Gift voucher", "Valid until Friday, 1 June 2029", "Grace Hopper", "Ada Lovelace",
                  "Happy birthday!", code, gift["supplierReference"], "How to redeem"):  # fmt: skip
        assert shown in page, shown
    [sent] = await selling.mail.messages_of_gift(gift["id"])
    assert (sent.status, sent.recipient) == ("sent", FRIEND["emailAddress"])
    # Kept as a picture of the page, to look at (tests/README: documents are looked at).
    document = pypdfium2.PdfDocument(pdf)
    document[0].render(scale=1.5).to_pil().save(tmp_path / "gift-voucher.png")
    document.close()


async def test_german_readers_read_german_and_the_buyer_gets_it_without_a_recipient(
    client: httpx.AsyncClient, selling: Services, sink: Sink
) -> None:
    await issued(client, recipient=None, contact={**BUYER, "locales": ["de-DE"]}, amount=12345)
    gift = await issued(client, recipient={**FRIEND, "locales": ["de"]})
    assert await selling.mailer.send_due() == 2
    to_buyer, to_friend = sink.received
    assert parseaddr(to_buyer["To"])[1] == BUYER["emailAddress"]
    assert to_buyer["Subject"].startswith("Ihr Geschenkgutschein für")
    assert "Hier ist Ihr Geschenkgutschein über 123,45\N{NO-BREAK SPACE}€" in parts(to_buyer)[0]
    assert to_friend["Subject"].startswith("Ein Geschenkgutschein für Sie von")
    [attachment] = list(to_friend.iter_attachments())
    [page] = pdf_text(attachment.get_content())
    assert "Gültig bis Freitag, 1. Juni 2029" in page and "Geschenkgutschein" in page
    assert code_of(gift) in page


async def test_the_request_language_when_no_one_names_one(
    client: httpx.AsyncClient, selling: Services, sink: Sink
) -> None:
    created = answered(await send(client, "POST", "/gifts", gift_body()))
    headers = {"Authorization": "Bearer demo-reseller-a", "Accept-Language": "de-CH, en;q=0.5"}
    answered(await client.post(f"/octo/gifts/{created['uuid']}/confirm", json={}, headers=headers), caps="")
    assert await selling.mailer.send_due() == 1
    assert sink.received[0]["Subject"].startswith("Ein Geschenkgutschein")


async def test_no_email_unless_asked_and_none_for_a_voucher_cancelled_before_it_went(
    client: httpx.AsyncClient, selling: Services, sink: Sink
) -> None:
    quiet = await issued(client, emailReceipt=False)
    assert await selling.mail.messages_of_gift(quiet["id"]) == []
    gift = await issued(client)
    answered(await send(client, "POST", f"/gifts/{gift['uuid']}/cancel"))
    assert await selling.mailer.send_due() == 1
    assert sink.received == []
    [message] = await selling.mail.messages_of_gift(gift["id"])
    assert message.status == "failed" and "not to be spent" in (message.error or "")
    assert selling.mail.gifts is not None and await selling.mail.gifts.pdf(gift["id"]) is None
