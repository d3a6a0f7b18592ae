"""Tickets as documents (PDF_URL, PKPASS_URL): the random tokens that name them, and their URLs.

A booking's voucher and each of its unit items' tickets get a token when the booking is
issued (CONFIRMED). The token is random and stored: nothing about the booking or its guests can
be read from it or guessed from what a reseller knows."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from berth.domain.bookings import Booking, BookingStatus
from berth.domain.catalog import DeliveryFormat, DeliveryMethod, Product
from berth.domain.catalog.rules import CatalogRule

# The key of the voucher's token among a booking's tokens (a unit item's is its uuid).
VOUCHER = ""

# What each URL format's document is called after its token.
SUFFIXES = {DeliveryFormat.PDF_URL: "pdf", DeliveryFormat.PKPASS_URL: "pkpass"}

TOKEN_BYTES = 32  # 256 bits: 43 URL-safe characters


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def ticket_path(token: str, delivery_format: DeliveryFormat) -> str:
    return f"/tickets/{token}.{SUFFIXES[delivery_format]}"


@dataclass(frozen=True)
class IssuedTickets:
    """A booking's ticket tokens by key (VOUCHER, or a unit item's uuid) and the base URL their
    documents are served under."""

    base_url: str = ""
    tokens: Mapping[str, str] = field(default_factory=dict)

    def url(self, key: str, delivery_format: DeliveryFormat) -> str | None:
        token = self.tokens.get(key)
        if token is None:
            return None
        return self.base_url.rstrip("/") + ticket_path(token, delivery_format)


# A booking's tickets exist once it is issued; a redeemed booking keeps them.
ISSUED = (BookingStatus.CONFIRMED, BookingStatus.REDEEMED)


def issues_documents(product: Product) -> bool:
    return any(f in SUFFIXES for f in product.delivery_formats)


def ticket_keys(product: Product, booking: Booking) -> list[str]:
    """The keys of the documents an issued booking has: its voucher's and its unit items'
    (as the product's delivery methods say); none when the product delivers no documents."""
    if booking.status not in ISSUED or not issues_documents(product):
        return []
    keys = [VOUCHER] if DeliveryMethod.VOUCHER in product.delivery_methods else []
    if DeliveryMethod.TICKET in product.delivery_methods:
        keys.extend(item.uuid for item in booking.unit_items)
    return keys


@dataclass(frozen=True)
class TicketLine:
    """One labelled line of what a booking shows: on its printed tickets, and to staff at the
    gate and on the manifest (a capability's part: the pickup, the extras, the answers).
    `staff_only`: shown to staff, never printed for the guest (an answer such as a date of
    birth)."""

    label: str
    text: str
    staff_only: bool = False
    # `text` as a message of Berth's catalogues (marked N_) and its values, when it has words of
    # Berth's own ("09:15 BST to 09:30 BST"): guests read it in their language, staff as `text`.
    message: str | None = None
    values: tuple[tuple[str, str], ...] = ()

    def in_words(self, words: Callable[..., str]) -> tuple[str, str]:
        """The label and the text as `words` (a language's Words) writes them."""
        return words(self.label), words(self.message, **dict(self.values)) if self.message else self.text


def local_time(moment: datetime) -> str:
    """`10:00 GMT`: a local time with its zone's abbreviation (`moment` carries its zone)."""
    return moment.strftime("%H:%M %Z").strip()


def local_date_time(moment: datetime) -> str:
    """`Saturday 12 December 2026, 10:00 GMT`."""
    return f"{moment.strftime('%A')} {moment.day} {moment.strftime('%B %Y')}, {local_time(moment)}"


NO_TICKETS = IssuedTickets()


class WalletPasses(CatalogRule):
    """Added to the catalogue's rules once Apple Wallet passes can be signed: PKPASS_URL is
    deliverable then."""

    delivery_formats = frozenset({DeliveryFormat.PKPASS_URL})
