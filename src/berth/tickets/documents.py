"""A booking's ticket documents, rendered: what a ticket URL answers, and what an email
attaches and links (`for_booking`). Rendering runs in the process's bounded pool of threads
(`berth.services.offload`): the event loop goes on answering meanwhile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from berth.domain.catalog import DeliveryFormat
from berth.domain.tickets import SUFFIXES, VOUCHER
from berth.services.offload import off_loop
from berth.services.tickets import EndedTicket, IssuedTicket, TicketService
from berth.tickets.pkpass import PassSigner
from berth.tickets.sheet import document_names, ticket_pages

if TYPE_CHECKING:
    from berth.tickets.pdf import Paper

MEDIA_TYPES = {
    DeliveryFormat.PDF_URL: "application/pdf",
    DeliveryFormat.PKPASS_URL: "application/vnd.apple.pkpass",
}
FORMAT_OF_SUFFIX = {suffix: delivery_format for delivery_format, suffix in SUFFIXES.items()}


@dataclass(frozen=True)
class Document:
    content: bytes
    media_type: str
    filename: str


@dataclass(frozen=True)
class TicketLink:
    """A document's URL, and what it covers: `Voucher (every guest)` or `Adult ticket`."""

    label: str
    delivery_format: DeliveryFormat
    url: str


@dataclass(frozen=True)
class BookingTickets:
    """What an email carries of an issued booking: the PDF of all its tickets (voucher first,
    then one page per unit item) and the URLs of its documents, as the booking shows them."""

    pdf: Document
    links: tuple[TicketLink, ...]


def _filename(ticket: IssuedTicket, suffix: str) -> str:
    """The voucher's file is named by the booking, a unit item's by its unit as well."""
    details = ticket.details
    return f"{document_names(details)[ticket.key].filename}.{suffix}"


class TicketDocuments:
    def __init__(self, service: TicketService, paper: Paper = "A4", passes: PassSigner | None = None) -> None:
        self._service = service
        self._paper = paper
        self._passes = passes  # None: Apple Wallet passes are not configured

    async def by_url(self, token: str, suffix: str) -> Document | EndedTicket | None:
        """What `/tickets/{token}.{suffix}` answers: the document, the ended ticket (410), or
        None (404) when it names nothing, or a format the booking's product does not deliver."""
        delivery_format = FORMAT_OF_SUFFIX.get(suffix)
        if delivery_format is None:
            return None
        found = await self._service.by_token(token)
        if not isinstance(found, IssuedTicket):
            return found
        if delivery_format not in found.details.product.delivery_formats:
            return None
        if delivery_format is DeliveryFormat.PKPASS_URL:
            return await self.wallet_pass(found, token)
        return await self.pdf(found)

    async def wallet_pass(self, ticket: IssuedTicket, token: str) -> Document | None:
        """The ticket's Apple Wallet pass: the voucher's, or the unit item's (None: passes are
        not configured any more)."""
        if self._passes is None:
            return None
        only = None if ticket.key == VOUCHER else ticket.key
        page = ticket_pages(ticket.details, ticket.supplier, only)[0]
        content = await off_loop(self._passes.build, page, token)
        return Document(content, MEDIA_TYPES[DeliveryFormat.PKPASS_URL], _filename(ticket, "pkpass"))

    async def pdf(self, ticket: IssuedTicket) -> Document:
        """The PDF of the ticket: every page of the booking for its voucher, else the unit
        item's page."""
        only = None if ticket.key == VOUCHER else ticket.key
        pages = ticket_pages(ticket.details, ticket.supplier, only)
        title = f"{ticket.supplier.name}: {ticket.details.booking.supplier_reference}"
        # reportlab and the barcode libraries load with the first PDF, not with every process.
        from berth.tickets.pdf import render_pdf

        content = await off_loop(render_pdf, pages, self._paper, title)
        return Document(content, MEDIA_TYPES[DeliveryFormat.PDF_URL], _filename(ticket, "pdf"))

    async def for_booking(self, booking_id: str) -> BookingTickets | None:
        """An issued booking's PDF and ticket links (None: no such booking, or not issued).
        The links are those its product delivers (none without PDF_URL or PKPASS_URL)."""
        ticket = await self._service.by_booking(booking_id)
        return None if ticket is None else await self.for_issued(ticket)

    async def for_issued(self, ticket: IssuedTicket) -> BookingTickets:
        """`for_booking` of a booking already read (its voucher's ticket)."""
        details = ticket.details
        links = []
        names = document_names(details)
        for delivery_format in details.product.delivery_formats:
            if delivery_format not in SUFFIXES:
                continue
            for key in [VOUCHER, *(item.uuid for item in details.booking.unit_items)]:
                url = details.tickets.url(key, delivery_format)
                if url is not None:
                    links.append(TicketLink(names[key].label, delivery_format, url))
        return BookingTickets(await self.pdf(ticket), tuple(links))
