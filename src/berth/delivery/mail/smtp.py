"""The SMTP server from `BERTH_SMTP_URL`, and a queued message as the email it sends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from urllib.parse import parse_qs, unquote, urlsplit

from berth.store.mail_repo import Message

DEFAULT_PORTS = {"smtp": 587, "smtps": 465}


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool  # smtps://: TLS from the first byte
    require_starttls: bool  # smtp:// with credentials: never send them in clear
    username: str | None
    password: str | None
    cafile: str | None  # ?cafile=PATH: trust this CA (a private relay's own certificate)


def parse_smtp_url(url: str) -> SmtpServer:
    """`smtp://user:password@host:587` (STARTTLS, required with credentials; offered ones
    taken without), `smtps://user:password@host:465` (implicit TLS), `smtp://host:25` (a relay)."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError("BERTH_SMTP_URL must look like smtp://user:password@host:587 or smtps://host:465")
    username = unquote(parts.username) if parts.username else None
    cafile = parse_qs(parts.query).get("cafile", [None])[0]
    return SmtpServer(
        host=parts.hostname,
        port=parts.port or DEFAULT_PORTS[parts.scheme],
        implicit_tls=parts.scheme == "smtps",
        require_starttls=parts.scheme == "smtp" and username is not None,
        username=username,
        password=unquote(parts.password) if parts.password is not None else None,
        cafile=cafile,
    )


def domain_of(mail_from: str) -> str:
    address = mail_from.rsplit("<", 1)[-1].rstrip(">").strip()
    return address.rpartition("@")[2] or "berth.invalid"


def message_id_header(message: Message, mail_from: str) -> str:
    """Stable: a message sent again after a crash carries the same Message-ID."""
    return f"<{message.id}@{domain_of(mail_from)}>"


def build_email(
    message: Message, mail_from: str, reply_to: str | None, attachments: Sequence[tuple[str, bytes]] = ()
) -> EmailMessage:
    """The email of a queued message. Header values come only from checked addresses and
    one-line texts; the email package refuses a line break in any of them all the same."""
    assert message.recipient is not None
    email = EmailMessage(policy=SMTP)
    email["Subject"] = message.subject
    email["From"] = mail_from
    email["To"] = Address(display_name=message.recipient_name or "", addr_spec=message.recipient)
    if reply_to:
        email["Reply-To"] = reply_to
    email["Date"] = format_datetime(message.created_at)
    email["Message-ID"] = message_id_header(message, mail_from)
    email["Auto-Submitted"] = "auto-generated"
    email.set_content(message.text_body)
    email.add_alternative(message.html_body, subtype="html")
    for filename, content in attachments:
        email.add_attachment(content, maintype="application", subtype="pdf", filename=filename)
    email["Content-Language"] = message.language  # after the body: setting it clears Content-*
    return email
