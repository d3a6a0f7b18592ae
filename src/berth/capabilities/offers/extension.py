"""A booking's offer (octo/offers): the code sent at reserve, update or confirm, else the best
automatic offer at reserve; kept with the booking as its terms (domain.discounts), which price
its lines' discount; its use counted against the offer's limits in the step's transaction.

A request that does not ask for octo/offers keeps the booking's offer and gets no automatic
one: a reseller that does not know offers sells at the prices it was shown (docs/offers.md).
`offerCode: ""` drops the booking's code: it gets the best automatic offer, as a reservation
without a code does. An automatic offer whose uses are all taken is passed over (counted when
the step begins; its limit is checked again under its lock when the booking is written).
"""

from __future__ import annotations

from typing import Any

from berth.capabilities.ids import OFFERS
from berth.domain.bookings import Booking, BookingStatus
from berth.domain.discounts import OfferTerms, best_offer, discounted
from berth.domain.errors import BadRequest
from berth.domain.offer_rules import Sale, Uses, automatic_offers, offer_for_code, uses_reason
from berth.domain.offers import Offer, OfferRefused
from berth.domain.price_lines import PriceLines, price_lines
from berth.domain.pricing import booking_parts
from berth.services.bookings.extensions import BookingExtension, ExtensionStep, Holding, Stage
from berth.services.bookings.locks import SlotLocks
from berth.services.clock import Clock
from berth.services.offers import OffersService
from berth.store import offers_repo
from berth.store.connection import DbConnection

CODE = "offerCode"


def terms_of(booking: Booking) -> OfferTerms | None:
    document = booking.extensions.get(OFFERS)
    return OfferTerms.from_document(document) if document else None


def _email(booking: Booking) -> str | None:
    email = booking.contact.get("emailAddress")
    return email.strip().lower() if email and email.strip() else None


class OfferExtension(BookingExtension):
    key = OFFERS

    def __init__(self, offers: OffersService, clock: Clock) -> None:
        self._offers = offers
        self._clock = clock
        self._automatic_uses: dict[str, int] = {}

    async def refresh(self) -> None:
        await self._offers.current()
        self._automatic_uses = await self._offers.automatic_uses()

    def _automatic(self, step: ExtensionStep) -> OfferTerms | None:
        """The automatic offer that takes most off the booking, of those with uses left when
        the step began."""
        document = self._offers.latest.document
        usable = [
            offer
            for offer in automatic_offers(document, self._sale(step))
            if offer.max_uses is None or self._automatic_uses.get(offer.id, 0) < offer.max_uses
        ]
        best = self._best(usable, step)
        return self._terms(best, step) if best is not None else None

    def _sale(self, step: ExtensionStep) -> Sale:
        booking = step.booking
        current = self._offers.latest
        total = None
        if booking.currency is not None:
            total = sum(p.price.retail for p in booking_parts(step.product, step.option, booking))
        precision = next(
            (
                p.currency_precision
                for u in step.option.units
                for p in u.prices
                if p.currency == booking.currency
            ),
            2,
        )
        return Sale(
            channel=booking.connection_id,
            shop=booking.connection_id == current.shop_connection_id,
            product_id=booking.product_id,
            option_id=booking.option_id,
            travel_date=booking.local_date,
            now=self._clock(),
            currency=booking.currency,
            unit_ids=tuple(item.unit_id for item in booking.unit_items),
            total=total,
            precision=precision,
        )

    def _terms(self, offer: Offer, step: ExtensionStep) -> OfferTerms:
        return OfferTerms.of(offer, step.product.id, step.option.id, step.booking.currency)

    @staticmethod
    def _best(offers: list[Offer], step: ExtensionStep) -> Offer | None:
        """The automatic offer that takes most off this booking."""
        lines = price_lines(booking_parts(step.product, step.option, step.booking), ())
        return best_offer(offers, step.product.id, step.option.id, step.booking.currency, lines)

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        kept = terms_of(step.booking)
        sent = step.sent
        code = sent.get(CODE) if sent is not None else None
        if code is not None and not isinstance(code, str):
            raise BadRequest(f"{CODE} must be a string; {type(code).__name__} given")
        document = self._offers.latest.document
        if code is not None and code.strip():
            if kept is not None and kept.code == code.strip().upper():
                terms: OfferTerms | None = kept
            else:
                terms = self._terms(offer_for_code(document, code, self._sale(step)), step)
        elif code is not None:  # "": the booking drops its code, and gets what it would without one
            terms = kept if kept is not None and kept.code is None else self._automatic(step)
        elif kept is not None:
            terms = kept
        elif step.stage is Stage.RESERVE and sent is not None:
            terms = self._automatic(step)
        else:
            terms = None
        if terms is not None and terms is kept:
            reason = terms.units_reason([item.unit_id for item in step.booking.unit_items])
            if reason is not None:
                raise OfferRefused(terms.code or terms.title(None), reason)
        return terms.to_document() if terms is not None else None

    def lines(self, booking: Booking, lines: PriceLines) -> PriceLines:
        return discounted(lines, terms_of(booking))

    async def hold(self, conn: DbConnection, locks: SlotLocks, holding: Holding) -> None:
        after, before, now = holding.after, holding.before, holding.now
        terms, had = terms_of(after), terms_of(before) if before is not None else None
        if terms is None:
            if had is not None:
                await offers_repo.record_use(conn, after.id, None, None, now)
            return
        if after.status in (BookingStatus.CANCELLED, BookingStatus.EXPIRED, BookingStatus.REJECTED):
            return  # an ended booking uses nothing: its use is given back as its places are
        email = _email(after)
        anew = before is None or had is None or had.offer_id != terms.offer_id or not before.holds_places(now)
        if not anew and (before is None or _email(before) == email):
            return
        offer = self._offers.latest.document.by_id(terms.offer_id)
        limited = offer is not None and (offer.max_uses is not None or offer.max_uses_per_email is not None)
        if offer is not None and limited and not after.test_mode:
            await offers_repo.lock_offer(conn, offer.id)
            counted: Uses = await offers_repo.uses(conn, offer.id, email, now, excluding=after.id)
            reason = uses_reason(offer, counted)
            if reason is not None:
                raise OfferRefused(terms.code or terms.title(None), reason)
        await offers_repo.record_use(conn, after.id, terms.offer_id, email, now)
