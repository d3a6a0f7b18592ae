"""A gift voucher's email (octo/gifts): written out by the mail worker like a booking's receipt,
to the recipient when the gift names one with an email address, else to the buyer, in their
language, with the voucher's PDF attached (berth.tickets.gift_voucher)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from berth.delivery.mail.compose import (
    NAME_LIMIT,
    mail_address,
    mail_language,
    one_line,
    supplier_of,
    words_for,
)
from berth.domain.catalog import Catalog
from berth.domain.gifts import Gift, GiftStatus
from berth.domain.sealing import SecretBox
from berth.services.catalog import CatalogService
from berth.services.offload import off_loop
from berth.store import gifts_repo
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.mail_repo import Message, Written
from berth.translations import N_

if TYPE_CHECKING:
    from berth.tickets.pdf import Paper

SUBJECT_TO_RECIPIENT = N_("A gift voucher for you from {supplier}")
SUBJECT_TO_BUYER = N_("Your gift voucher for {supplier}")
_TEMPLATES = PackageLoader("berth.delivery.mail", "templates")
_HTML = Environment(
    loader=_TEMPLATES, autoescape=select_autoescape(default=True), undefined=StrictUndefined,
    trim_blocks=True, lstrip_blocks=True,
)  # fmt: skip
_TEXT = Environment(
    loader=_TEMPLATES, autoescape=False, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    keep_trailing_newline=True,
)  # fmt: skip


@dataclass(frozen=True)
class GiftFacts:
    """What the email says of the gift, in the addressee's words."""

    sender: str | None  # the buyer, when the email goes to someone else
    amount: str
    message: str | None
    code: str
    valid_until: str
    reference: str


def _fallback_language(catalog: Catalog) -> str:
    return catalog.products[0].locale if catalog.products else "en"


def gift_written(gift: Gift, code: str, catalog: Catalog) -> Written:
    """The email of `gift` (whose code is `code`), written out."""
    addressee = gift.addressee
    language = mail_language(addressee, catalog, _fallback_language(catalog))
    words = words_for(language)
    supplier = supplier_of(catalog)
    to_recipient = addressee is not gift.contact
    buyer = one_line(gift.contact.full_name, NAME_LIMIT) or None
    facts = GiftFacts(
        sender=buyer if to_recipient else None,
        amount=words.money(gift.amount, gift.currency, gift.currency_precision),
        message=one_line(gift.message, 2000) or None,
        code=code,
        valid_until=words.date(gift.expires_at.date()),
        reference=gift.supplier_reference,
    )
    subject = one_line(
        words(SUBJECT_TO_RECIPIENT if to_recipient else SUBJECT_TO_BUYER, supplier=supplier["name"] or ""),
        250,
    )
    name = one_line(addressee.full_name, NAME_LIMIT) or None
    context = {"letter": {"language": language, "supplier": supplier}, "gift": facts, "t": words,
               "name": name, "subject": subject}  # fmt: skip
    text = _TEXT.get_template("gift.txt").render(context)
    html = _HTML.get_template("gift.html").render(context)
    recipient, problem = mail_address(addressee.get("emailAddress"))
    attachments = [] if problem else [{"giftId": gift.id, "filename": f"{gift.supplier_reference}.pdf"}]
    return Written(recipient, name, language, subject, text, html, problem, attachments)


class GiftLetters:
    """Gift vouchers' emails and their PDFs, for the outbox and the mail worker."""

    def __init__(self, database: Database, catalogs: CatalogService, box: SecretBox, paper: Paper) -> None:
        self._db = database
        self._catalogs = catalogs
        self._box = box
        self._paper = paper

    def _code(self, gift: Gift) -> str | None:
        return None if gift.code_sealed is None else self._box.open(gift.code_sealed, f"gift:{gift.id}")

    async def write_in(self, conn: DbConnection, message: Message) -> Written | None:
        """The message's email, written out (None: its gift is gone, or not to be spent: never
        issued, cancelled or expired since)."""
        assert message.gift_id is not None
        gift = await gifts_repo.by_id(conn, message.gift_id)
        code = self._code(gift) if gift is not None else None
        if gift is None or code is None or gift.status is not GiftStatus.CONFIRMED:
            return None
        catalog = (await self._catalogs.snapshot_in(conn)).catalog
        return gift_written(gift, code, catalog)

    async def pdf(self, gift_id: str) -> bytes | None:
        """The voucher's PDF, rendered now in the language of the person it goes to; None for a
        voucher no longer to be spent (cancelled, expired)."""
        async with self._db.transaction(write=False) as conn:
            gift = await gifts_repo.by_id(conn, gift_id)
            catalog = (await self._catalogs.snapshot_in(conn)).catalog
        code = self._code(gift) if gift is not None else None
        if gift is None or code is None or gift.status is not GiftStatus.CONFIRMED:
            return None
        language = mail_language(gift.addressee, catalog, _fallback_language(catalog))
        # reportlab and the barcode libraries load with the first PDF, not with every process.
        from berth.tickets.gift_voucher import voucher_pdf

        return await off_loop(voucher_pdf, gift, code, catalog.supplier, words_for(language), self._paper)
