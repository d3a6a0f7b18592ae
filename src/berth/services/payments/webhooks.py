"""What comes after the guest has gone: the provider's webhooks (a payment they name is read
and settled, each event once) and the sweep (what a crash, a closed tab or a slow provider left
half-way is settled, given up or asked again)."""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog

from berth.domain.bookings import ENDED
from berth.domain.catalog import Catalog
from berth.domain.errors import BadRequest, OctoError, ServiceUnavailable
from berth.domain.payments import (
    OPEN,
    PaymentStatus,
    RefundStatus,
)
from berth.services.payments.provider import ProviderRefused, ProviderUnavailable
from berth.services.payments.settling import CONFIRMED_ONES, Settling
from berth.store import payments_repo
from berth.store.payments_repo import Payment, Refund

log = structlog.get_logger("berth.payments")


# A payment written in the ledger whose provider payment was never made (a crash between the
# two): after this long nobody can be paying it, and the sweep closes it.
UNSTARTED_AFTER = timedelta(minutes=10)
# How long Stripe is asked to wait before delivering again an event Berth could not process.
WEBHOOK_RETRY_SECONDS = 60


class Webhooks(Settling):
    async def handle_webhook(self, payload: bytes, signature: str) -> None:
        """A provider's notification, checked and processed once (a payment it names is read
        from the provider and settled: the notification's content is not trusted for more
        than which payment to look at)."""
        card = self._card()
        try:
            event = card.event(payload, signature)
        except ProviderRefused as exc:
            raise BadRequest(exc.message) from exc
        async with self._db.transaction(write=False) as conn:
            seen = await payments_repo.event_seen(conn, card.name, event.id)
            payment = await payments_repo.by_provider_id(conn, event.payment_id) if event.payment_id else None
        if seen:
            return
        if payment is not None:
            catalog = (await self._catalogs.snapshot()).catalog
            try:
                await self.settle_payment(catalog, payment)
            except ProviderUnavailable as exc:
                # Not noted as processed: Stripe delivers it again (it retries an answer that
                # is not 2xx), and the sweep reads the payment meanwhile.
                raise ServiceUnavailable(
                    "Stripe cannot be reached to read the payment: deliver the event again later",
                    retry_after=WEBHOOK_RETRY_SECONDS,
                ) from exc
            except ProviderRefused as exc:
                log.warning("webhook's payment not read", payment=payment.id, reason=exc.message)
            for refund in await self._refunds_of(payment.id):
                if refund.status in (RefundStatus.REQUESTED, RefundStatus.PENDING):
                    await self.push_refund(refund)
        async with self._db.transaction(write=True) as conn:
            await payments_repo.first_time(conn, card.name, event.id, event.type, self._clock())

    async def _refunds_of(self, payment_id: str) -> list[Refund]:
        async with self._db.transaction(write=False) as conn:
            return await payments_repo.refunds_of(conn, [payment_id])

    async def sweep(self, catalog: Catalog, batch: int = 100) -> int:
        """Settle what was left half-way: captured payments with no outcome (a crash), open
        ones (a guest who closed the tab; given up once the booking's hold has ended), and
        refunds the provider has not finished. Answers how many it looked at."""
        if self.provider is None:
            return 0
        now = self._clock()
        async with self._db.transaction(write=False) as conn:
            payments = await payments_repo.unsettled(conn, now, batch)
            refunds = await payments_repo.unfinished_refunds(conn, batch)
        for payment in payments:
            try:
                await self._sweep_payment(catalog, payment, now)
            except (ProviderUnavailable, ProviderRefused, OctoError) as exc:
                # The others are swept all the same; this one is looked at again next time.
                log.warning("payment not settled by the sweep", payment=payment.id, reason=str(exc))
        for refund in refunds:
            await self.push_refund(refund)
        return len(payments) + len(refunds)

    async def _sweep_payment(self, catalog: Catalog, payment: Payment, now: datetime) -> None:
        if payment.provider_id is None:
            if payment.created_at < now - UNSTARTED_AFTER:
                await self._give_up(catalog, payment)
            return
        await self.settle_payment(catalog, payment)
        async with self._db.transaction(write=False) as conn:
            stands = await payments_repo.get_payment(conn, payment.id)
            booking = await self._find(conn, payment.booking_id)
            paid = bool(await self._claimed(conn, booking.id)) or booking.status in CONFIRMED_ONES
        assert stands is not None
        # Nobody pays an open one of a booking whose hold ended or that another payment paid.
        if stands.status is PaymentStatus.FAILED or (
            stands.status in OPEN and (booking.status in ENDED or paid)
        ):
            await self._give_up(catalog, stands)
            await self.settle_payment(catalog, stands)
