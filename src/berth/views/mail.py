"""Guests' emails as the admin API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from berth.store.mail_repo import Message


def _utc(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def message_json(message: Message, *, bodies: bool = False) -> dict[str, Any]:
    written = message.written  # None until the mail worker wrote it out
    out: dict[str, Any] = {
        "id": message.id,
        "kind": message.kind,
        "status": message.status,
        "bookingId": message.booking_id,
        "orderId": message.order_id,
        "to": written.recipient if written else None,
        "toName": written.recipient_name if written else None,
        "language": written.language if written else None,
        "subject": written.subject if written else None,
        "attachments": [a["filename"] for a in message.attachments],
        "requestedBy": message.requested_by,
        "attempts": message.attempts,
        "error": message.error,
        "utcCreatedAt": _utc(message.created_at),
        "utcNextAttemptAt": _utc(message.next_attempt_at),
        "utcSentAt": _utc(message.sent_at),
    }
    if bodies:
        out["text"] = written.text_body if written else None
        out["html"] = written.html_body if written else None
    return out
