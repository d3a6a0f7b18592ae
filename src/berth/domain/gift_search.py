"""What staff search gift vouchers by (the back office's Gifts page, the admin API): a code as
typed, a reference, the buyer, the recipient, the status and the day it was sold."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from berth.domain.bookings import Contact
from berth.domain.gift_codes import GROUP, NotAGiftCode, parse_code
from berth.domain.gifts import Gift, GiftStatus


@dataclass(frozen=True)
class GiftSearch:
    """Every field optional (None: any). `code`: a whole code as typed (`parse_code` forgives
    case, spaces, dashes, look-alike letters), else a supplier or reseller reference, or the
    code's last group; `buyer`, `recipient`: part of a name or an email address, any case."""

    code: str | None = None
    buyer: str | None = None
    recipient: str | None = None
    status: GiftStatus | None = None
    sold_from: datetime | None = None
    sold_before: datetime | None = None
    test_mode: bool | None = None

    def canonical_code(self) -> str | None:
        """The whole code `code` means, or None when it is no code (a reference, a last group)."""
        if self.code is None:
            return None
        try:
            return parse_code(self.code)
        except NotAGiftCode:
            return None


def _contact_has(contact: Contact | None, text: str) -> bool:
    if contact is None:
        return False
    wanted = text.strip().casefold()
    seen = (contact.full_name, contact.get("firstName"), contact.get("lastName"), contact.get("emailAddress"))
    return any(wanted in value.casefold() for value in seen if value)


def _plain(text: str) -> str:
    """`text` as compared: upper case, without spaces and dashes."""
    return "".join(c for c in text.upper() if c not in " -")


def reference_matches(gift: Gift, text: str) -> bool:
    """`text` is the gift's supplier or reseller reference, or its code's last group (any case)."""
    typed = _plain(text)
    references = (gift.supplier_reference, gift.reseller_reference)
    if any(ref and _plain(ref) == typed for ref in references):
        return True
    return len(typed) == GROUP and gift.code_hint is not None and gift.code_hint == typed


def matches(gift: Gift, search: GiftSearch, now: datetime) -> bool:
    """Whether `gift` is one `search` finds, its status taken as it stands at `now`. A whole code
    is matched by the store (its digest), not here."""
    if (
        search.code is not None
        and search.canonical_code() is None
        and not reference_matches(gift, search.code)
    ):
        return False
    if search.buyer and not _contact_has(gift.contact, search.buyer):
        return False
    if search.recipient and not _contact_has(gift.recipient, search.recipient):
        return False
    if search.status is not None and gift.status_at(now) is not search.status:
        return False
    if search.test_mode is not None and gift.test_mode != search.test_mode:
        return False
    if search.sold_from is not None and gift.created_at < search.sold_from:
        return False
    return search.sold_before is None or gift.created_at < search.sold_before
