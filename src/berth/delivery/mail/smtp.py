"""A queued message as the email it sends."""

from __future__ import annotations

from collections.abc import Sequence
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, parseaddr

from berth.delivery.mail.compose import NAME_LIMIT, one_line
from berth.delivery.mail.headers import UnsafeMessage, address, check_rendered, mailbox, token, unstructured
from berth.store.mail_repo import Message, Written

SUBJECT_LIMIT = 250


def sender_of(mail_from: str) -> tuple[str, str]:
    """BERTH_MAIL_FROM (`Name <address>`) as its display name and address, read as the text it
    is (an encoded word in it is not decoded)."""
    name, found = parseaddr(mail_from)
    try:
        return name, address(found)
    except UnsafeMessage:
        raise UnsafeMessage(
            f"not sent: BERTH_MAIL_FROM {mail_from!r} names no address to send from"
        ) from None


def message_id_header(message: Message, sender: str) -> str:
    """Stable: a message sent again after a crash carries the same Message-ID."""
    return f"<{message.id}@{sender.rpartition('@')[2]}>"


def build_email(
    message: Message,
    written: Written,
    mail_from: str,
    reply_to: str | None,
    attachments: Sequence[tuple[str, bytes]] = (),
) -> EmailMessage:
    """The email of a queued message, its header fields written by `headers` (none parsed from
    text); UnsafeMessage when an address cannot be written in one."""
    assert written.recipient is not None
    name, sender = sender_of(mail_from)
    email = EmailMessage(policy=SMTP)
    email["Subject"] = unstructured("Subject", written.subject, SUBJECT_LIMIT)
    email["From"] = mailbox("From", name, sender)
    email["To"] = mailbox("To", one_line(written.recipient_name, NAME_LIMIT), written.recipient)
    if reply_to:
        email["Reply-To"] = mailbox("Reply-To", None, reply_to)
    email["Date"] = token("Date", format_datetime(message.created_at))
    email["Message-ID"] = token("Message-ID", message_id_header(message, sender))
    email["Auto-Submitted"] = token("Auto-Submitted", "auto-generated")
    email.set_content(written.text_body)
    email.add_alternative(written.html_body, subtype="html")
    for filename, content in attachments:
        email.add_attachment(
            content, maintype="application", subtype="pdf", filename=one_line(filename, NAME_LIMIT)
        )
    # After the body: setting it clears Content-* fields.
    email["Content-Language"] = token("Content-Language", written.language)
    return email


def flattened(email: EmailMessage) -> bytes:
    """The email as sent, checked last (`check_rendered`): UnsafeMessage if broken."""
    data = email.as_bytes()
    check_rendered(data, email.keys())
    return data
