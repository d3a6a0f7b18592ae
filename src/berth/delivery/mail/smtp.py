"""A queued message as the email it sends."""

from __future__ import annotations

from collections.abc import Sequence
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime

from berth.store.mail_repo import Message, Written


def domain_of(mail_from: str) -> str:
    address = mail_from.rsplit("<", 1)[-1].rstrip(">").strip()
    return address.rpartition("@")[2] or "berth.invalid"


def message_id_header(message: Message, mail_from: str) -> str:
    """Stable: a message sent again after a crash carries the same Message-ID."""
    return f"<{message.id}@{domain_of(mail_from)}>"


def build_email(
    message: Message,
    written: Written,
    mail_from: str,
    reply_to: str | None,
    attachments: Sequence[tuple[str, bytes]] = (),
) -> EmailMessage:
    """The email of a queued message. Header values come only from checked addresses and
    one-line texts; the email package refuses a line break in any of them all the same."""
    assert written.recipient is not None
    email = EmailMessage(policy=SMTP)
    email["Subject"] = written.subject
    email["From"] = mail_from
    email["To"] = Address(display_name=written.recipient_name or "", addr_spec=written.recipient)
    if reply_to:
        email["Reply-To"] = reply_to
    email["Date"] = format_datetime(message.created_at)
    email["Message-ID"] = message_id_header(message, mail_from)
    email["Auto-Submitted"] = "auto-generated"
    email.set_content(written.text_body)
    email.add_alternative(written.html_body, subtype="html")
    for filename, content in attachments:
        email.add_attachment(content, maintype="application", subtype="pdf", filename=filename)
    email["Content-Language"] = written.language  # after the body: setting it clears Content-*
    return email
