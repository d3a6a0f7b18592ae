"""No input can break a guest's email's header fields: encoded words (q and b, any case), line
and paragraph separators, NUL and very long texts, in every field that reaches a header (the
contact's names from a reseller's checkout, the product's title, the supplier's email,
BERTH_MAIL_FROM). Each message is read back as the loopback SMTP server received it: exactly
Berth's header fields, Berth's body, the guest's text shown as text."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from email import message_from_bytes
from email.header import decode_header, make_header
from email.message import EmailMessage
from email.policy import compat32
from email.utils import parseaddr
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from berth.container import Services
from berth.delivery.mail.compose import NAME_LIMIT, mail_address, one_line
from berth.delivery.mail.headers import UnsafeMessage, check_rendered, mailbox, unstructured
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import CatalogFileError
from berth.settings import Settings
from berth.store import mail_repo
from tests.bookings_helpers import GUEST, booking_products, reservation, reserve
from tests.builders import catalog, load, supplier
from tests.conftest import auth
from tests.mail_helpers import Sink, parts, smtp_sink
from tests.test_mail import confirm_with_receipt, messages, send_all

# The fields of every receipt, in the order Berth writes them (the supplier's email replies).
FIELDS = [
    "Subject", "From", "To", "Reply-To", "Date", "Message-ID", "Auto-Submitted", "MIME-Version",
    "Content-Type", "Content-Language",
]  # fmt: skip


def _b(text: str, charset: str = "utf-8", flag: str = "b") -> str:
    return f"=?{charset}?{flag}?{base64.b64encode(text.encode()).decode()}?="


INJECTED = (
    "Guest\r\nReply-To: attacker@evil.example\r\nContent-Type: text/html\r\n\r\n<h1>Pay again here</h1>"
)
HOSTILE = {
    "q": "=?utf-8?q?Guest=0D=0AReply-To=3A_attacker@evil.example=0D=0AContent-Type=3A_text/html"
    "=0D=0A=0D=0A<h1>Pay_again_here</h1>?=",
    "Q": "=?UTF-8?Q?Guest=0D=0ABcc=3A_victim@evil.example=0A=0A<h1>Pay_again_here</h1>?=",
    "b": _b(INJECTED),
    "B": _b(INJECTED, "UTF-8", "B"),
    "latin-1 q": "=?iso-8859-1?q?G=FCest=0ABcc=3A_victim@evil.example?=",
    "separators": "Guest\u2028Bcc: victim@evil.example\u2029Reply-To: attacker@evil.example\x85X",
    "NUL": "Guest\x00\r\nBcc: victim@evil.example\x00",
    "raw CRLF": "Guest\r\nBcc: victim@evil.example",
    "long": "Zoë =?utf-8?q?=0D=0ABcc=3A_v@evil.example?= \u2028\x00" * 20,  # 960 characters
}


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


def hostile_catalog(title: str = "Thames Sightseeing Cruise", **owner: Any) -> Catalog:
    cruise, *others = booking_products()
    content = {**cruise["content"], "en-GB": {**cruise["content"]["en-GB"], "title": title}}
    return catalog({**cruise, "content": content}, *others, owner=supplier(**owner))


def display_name(raw: bytes, field: str) -> str:
    """The display name of `field` as an RFC 2047 reader gets it (the email package's own
    parser adds a space between adjacent encoded words of a display name)."""
    value = str(message_from_bytes(raw, policy=compat32)[field]).replace("\r\n", "")
    phrase = value.rpartition("<")[0].strip()
    if phrase.startswith('"'):
        return parseaddr(value)[0]
    return str(make_header(decode_header(phrase)))


def message_id(email: EmailMessage) -> str:
    return str(email["Message-ID"]).strip("<>").partition("@")[0]


async def check_received(services: Services, sink: Sink) -> None:
    """Every message received holds exactly Berth's fields, goes to the guest alone, and
    carries the bodies Berth wrote."""
    stored = {m.id: m for m in await messages(services)}
    assert len(sink.received) == len(stored)
    for email, (_, recipients) in zip(sink.received, sink.envelopes, strict=True):
        assert email.keys() == FIELDS
        assert recipients == ["ada@example.com"]
        assert email["To"].addresses[0].addr_spec == "ada@example.com"
        assert [str(a) for a in email["Reply-To"].addresses] == ["bookings@supplier.test"]
        assert email["Content-Type"].content_type == "multipart/alternative"
        written = stored[message_id(email)].written
        assert written is not None
        # As SMTP carries them: lines end with CRLF, and the last one too.
        sent = [body.replace("\r\n", "\n").rstrip("\n") for body in parts(email)]
        assert sent == [written.text_body.rstrip("\n"), written.html_body.rstrip("\n")]
        assert [part.get_content_type() for part in email.iter_parts()] == ["text/plain", "text/html"]


@pytest.mark.parametrize("where", ["firstName", "lastName", "fullName"])
async def test_a_contact_name_never_breaks_a_header(
    client: httpx.AsyncClient, services: Services, sink: Sink, where: str
) -> None:
    await load(services, hostile_catalog())
    sent = {}
    for value in HOSTILE.values():
        if "\x00" not in value:
            sent[(await confirm_with_receipt(client, {**GUEST, where: value}))["id"]] = value
    await send_all(services)
    await check_received(services, sink)
    about = {m.id: m.booking_id for m in await messages(services)}
    for email, raw in zip(sink.received, sink.raw, strict=True):
        contact = {**GUEST, where: sent[about[message_id(email)]]}
        name = contact.get("fullName") or f"{contact['firstName']} {contact['lastName']}"
        assert display_name(raw, "To") == one_line(name, NAME_LIMIT)
        assert "\u2028" not in display_name(raw, "To")
    # NUL is refused by the API (a name written by an older version: see the stored message).
    booking = await reserve(client, reservation(currency="EUR"))
    refused = await client.post(
        f"/octo/bookings/{booking['uuid']}/confirm",
        json={"contact": {**GUEST, where: HOSTILE["NUL"]}, "emailReceipt": True},
        headers=auth(),
    )
    assert refused.status_code == 400 and "NUL" in refused.json()["errorMessage"]


async def test_a_product_title_never_breaks_the_subject(
    client: httpx.AsyncClient, services: Services, sink: Sink
) -> None:
    for value in HOSTILE.values():
        if "\x00" in value:  # a catalogue refuses it (tests/test_catalog_import.py)
            with pytest.raises(CatalogFileError):
                hostile_catalog(title=value)
            continue
        await load(services, hostile_catalog(title=value))
        booking = await confirm_with_receipt(client)
        await send_all(services)
        subject = sink.received[-1]["Subject"]
        assert subject == one_line(f"Your booking {booking['supplierReference']}: {value}", 250)
    await check_received(services, sink)


async def test_a_supplier_email_with_an_encoded_word_gets_no_reply_to(
    client: httpx.AsyncClient, services: Services, sink: Sink
) -> None:
    hostile = '"=?utf-8?q?x=0D=0ABcc=3A_v@evil.example?="@supplier.test'
    await load(services, hostile_catalog(name=HOSTILE["q"], contact={"email": hostile}))
    await confirm_with_receipt(client)
    await send_all(services)
    [email] = sink.received
    assert email.keys() == [f for f in FIELDS if f != "Reply-To"]
    assert email["Bcc"] is None


async def test_an_encoded_word_in_mail_from_stays_text(
    client: httpx.AsyncClient, services: Services, sink: Sink
) -> None:
    services.settings.mail_from = f"{HOSTILE['b']} <mail@berth.test>"
    await load(services, hostile_catalog())
    await confirm_with_receipt(client)
    await send_all(services)
    [raw] = sink.raw
    assert display_name(raw, "From") == HOSTILE["b"]
    await check_received(services, sink)


# Control characters but NUL, which PostgreSQL cannot store (the API and the catalogue refuse it).
NAMED = "Guest\x1b\r\nBcc: v@evil.example\x7f\u2029" + HOSTILE["q"]


def test_a_nul_never_reaches_a_header() -> None:
    assert unstructured("Subject", "a\x00\r\nBcc: b").lines == ("a Bcc: b",)
    assert mailbox("To", "A\x00\nB", "ada@example.com").lines == ('"A B" <ada@example.com>',)


async def test_a_stored_message_is_checked_again_when_sent(
    client: httpx.AsyncClient, services: Services, sink: Sink
) -> None:
    """A message written before (by an older version, a changed row) is checked again when
    sent: a name is made one line of text; an address that would break its header is not
    sent, and the outbox says why."""
    await load(services, hostile_catalog())
    await confirm_with_receipt(client)
    await confirm_with_receipt(client)
    broken, named = await messages(services)
    rows = {
        broken.id: mail_repo.Written(
            "ada@example.com\r\nBcc: v@evil.example", "Ada", "en", "s", "t", "<p>h</p>"
        ),
        named.id: mail_repo.Written("ada@example.com", NAMED, "en", "s", "t", "<p>h</p>"),
    }
    async with services.database.transaction(write=True) as conn:
        for message_id, written in rows.items():
            await mail_repo.record_written(conn, message_id, written)
    await send_all(services)
    [email] = sink.received
    assert email.keys() == FIELDS and email["Bcc"] is None
    assert display_name(sink.raw[0], "To") == "Guest Bcc: v@evil.example " + HOSTILE["q"]
    found = {m.id: m for m in await messages(services)}
    assert found[named.id].status == mail_repo.SENT
    failed = found[broken.id]
    assert failed.status == mail_repo.FAILED and failed.attempts == 1
    assert failed.error == (
        "not sent: the address 'ada@example.com\\r\\nBcc: v@evil.example' cannot be written in a header"
    )


GOOD = b"Subject: Hello\r\nTo: =?utf-8?q?A?=\r\n <a@b.test>\r\nMIME-Version: 1.0\r\n\r\nbody\r\nmore\r\n"


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (GOOD.replace(b"Hello", b"Hello\nBcc: x@y"), "a bare CR or LF"),
        (GOOD.replace(b"Hello", b"Hello\rBcc: x@y"), "a bare CR or LF"),
        (GOOD.replace(b"body\r\n", b"body\n"), "a bare CR or LF"),
        (GOOD.replace(b"Hello", b"Hello\r\nBcc: x@y"), "the header fields are Subject, Bcc, To"),
        (GOOD.replace(b"Hello", b"Hello\r\n\r\n<h1>Pay</h1>"), "the header fields are Subject, not"),
        (GOOD.replace(b"Hello", b"Hel\0lo"), "holds a NUL"),
        (GOOD.replace(b"Hello\r\n", b"Hello\r\nno colon\r\n"), "a line that is no header field"),
        (GOOD.replace(b"\r\n\r\n", b"\r\n"), "no blank line"),
    ],
)
def test_the_last_check_refuses_a_broken_header_block(data: bytes, why: str) -> None:
    check_rendered(GOOD, ["Subject", "To", "MIME-Version"])
    with pytest.raises(UnsafeMessage) as refused:
        check_rendered(data, ["Subject", "To", "MIME-Version"])
    assert why in str(refused.value) and str(refused.value).startswith("not sent: ")


@pytest.mark.parametrize(
    ("given", "sent", "why"),
    [
        ("ada@bücher.de", "ada@xn--bcher-kva.de", None),  # the email package wrote an encoded word there
        ("jürgen@example.com", None, "is not an email address"),
        ('"ada lovelace"@example.com', None, "Berth can send to (printable ASCII without spaces)"),
        ('"=?utf-8?q?x=0D=0A?="@example.com', None, "is not an email address"),
        ("x=?utf-8?q?=0A?=@example.com", None, "Berth can send to (printable ASCII without spaces)"),
        ("ada@" + "ü" * 70 + ".de", None, "Berth can send to (its domain is no IDNA name)"),
    ],
)
def test_addresses_berth_can_write_in_a_header(given: str, sent: str | None, why: str | None) -> None:
    found, problem = mail_address(given)
    assert found == sent
    assert (problem is None) if why is None else (problem is not None and why in problem)


async def test_an_international_domain_is_sent_as_idna(
    client: httpx.AsyncClient, services: Services, sink: Sink
) -> None:
    """The email package wrote `ada@=?utf-8?q?b=C3=BCcher?=.de` into the To header."""
    await load(services, hostile_catalog())
    await confirm_with_receipt(client, {**GUEST, "emailAddress": "ada@bücher.de"})
    await send_all(services)
    [email] = sink.received
    assert sink.envelopes[0][1] == ["ada@xn--bcher-kva.de"]
    assert email["To"].addresses[0].addr_spec == "ada@xn--bcher-kva.de"
    assert email.keys() == FIELDS
