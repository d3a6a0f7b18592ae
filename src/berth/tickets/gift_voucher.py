"""A gift voucher's page, in the tickets' house style (the same PDF as tickets: berth.tickets.pdf):
its value as the title, for whom, until when, the buyer's message, and its code as a QR code and
as text, in the language of the person it is sent to."""

from __future__ import annotations

from berth.domain.catalog import DeliveryFormat, Supplier
from berth.domain.gifts import Gift
from berth.domain.tickets import TicketLine
from berth.tickets.pdf import MAX_TEXT, Paper, render_pdf
from berth.tickets.sheet import TicketPage
from berth.translations import Words


def voucher_page(gift: Gift, code: str, supplier: Supplier, words: Words) -> TicketPage:
    """The page of `gift`, whose code is `code`, in `words`' language."""
    contact = supplier.contact
    buyer = gift.contact.full_name
    recipient = gift.recipient.full_name if gift.recipient is not None else None
    lines = [
        TicketLine(words("For"), recipient) if recipient else None,
        TicketLine(words("From"), buyer) if buyer else None,
        TicketLine(words("Message"), gift.message[:MAX_TEXT]) if gift.message else None,
        TicketLine(words("Gift code"), code),
        TicketLine(words("Reference"), gift.supplier_reference),
    ]
    return TicketPage(
        heading=words("Gift voucher"),
        supplier=supplier.name,
        supplier_contact=" | ".join(p for p in (contact.telephone, contact.email, contact.website) if p)
        or None,
        product=words.money(gift.amount, gift.currency, gift.currency_precision),
        option=words("Gift voucher"),
        when=words("Valid until {date}", date=words.date(gift.expires_at.date())),
        lines=tuple(line for line in lines if line is not None),
        instructions=(
            words("Give this code when you book: it pays for all or part of the price."),
            words("What you do not spend stays on the voucher until it expires."),
        ),
        code=code,
        formats=(DeliveryFormat.QRCODE,),
        language=words.language,
        words=words,
    )


def voucher_pdf(gift: Gift, code: str, supplier: Supplier, words: Words, paper: Paper = "A4") -> bytes:
    return render_pdf([voucher_page(gift, code, supplier, words)], paper, title=words("Gift voucher"))
