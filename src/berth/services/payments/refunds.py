"""Refunds: staff's refund of a paid booking, the cancellation of a paid booking with its
refund in one transaction, the guest's letter saying why, and asking the provider for a refund
written in the ledger (`push_refund`, never twice)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from datetime import datetime

import structlog

from berth.domain.bookings import ENDED, Booking
from berth.domain.catalog import Catalog
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.payments import (
    Outcome,
    RefundCause,
    RefundStatus,
)
from berth.domain.staff import Actor
from berth.read_models.bookings import BookingDetails
from berth.services.payments.base import GUEST, PaymentsBase, new_id, target_of
from berth.services.payments.provider import ProviderRefused, ProviderUnavailable
from berth.store import audit_repo, mail_repo, payments_repo
from berth.store.connection import DbConnection
from berth.store.mail_repo import NewMessage
from berth.store.payments_repo import Payment, Refund

log = structlog.get_logger("berth.payments")


REFUNDED_MAIL = "refunded"


class Refunds(PaymentsBase):
    async def refund(
        self, catalog: Catalog, booking_uuid: str, amount: int | None, reason: str, actor: Actor
    ) -> Refund:
        """Refund `amount` (None: all that is left) of the booking's card payment; the booking
        itself is not changed (see `cancel`)."""
        async with self._db.transaction(write=True) as conn:
            booking = await self._find(conn, booking_uuid)
            booking = await self._locked(conn, booking.id)
            refund = await self._add_refund(conn, booking, amount, reason, actor, tell_guest=True)
        await self.push_refund(refund)
        return await self._refund_now(refund.id)

    async def cancel(
        self,
        catalog: Catalog,
        booking_uuid: str,
        *,
        refund: int | None,
        reason: str,
        actor: Actor | None,
        force: bool = False,
    ) -> tuple[BookingDetails, Refund | None]:
        """Cancel a paid booking with a refund of `refund` (None: in full; 0: none) in one
        transaction, then ask the provider for the refund. `actor` None: the guest, inside the
        product's cancellation window (`force` is staff's, past it)."""
        if refund is not None and refund < 0:
            raise BadRequest("refund: a refund is 0 or more (minor units)")
        by = actor.name if actor is not None else GUEST
        async with self._db.transaction(write=True) as conn:
            booking = await self._find(conn, booking_uuid)
            booking = await self._locked(conn, booking.id)

            def step(c: DbConnection, b: Booking) -> Awaitable[Booking]:
                who = "supplier" if actor is not None else "reseller"
                return self._steps.cancel_in(
                    c, catalog, b, reason, force=force and actor is not None, actor=who
                )

            cancelled = await self._steps.with_companions(
                conn, catalog, booking, "cancel", step, lambda c, b, _: step(c, b), staff=actor is not None,
                skip=ENDED,
            )  # fmt: skip
            made = None
            if refund != 0 and await self._refundable(conn, booking.id) > 0:
                # Staff's refund is told with its reason; the guest who cancelled is told by the
                # cancellation's letter.
                made = await self._add_refund(
                    conn, booking, refund, reason, actor, tell_guest=actor is not None
                )
            if actor is not None:
                await audit_repo.record(
                    conn, actor, "booking.cancel",
                    target_of(booking), {"reason": reason, "refund": made.amount if made else 0, "by": by},
                    at=self._clock(),
                )  # fmt: skip
            details = await self._loader.one(conn, catalog, cancelled)
        if made is not None:
            await self.push_refund(made)
            made = await self._refund_now(made.id)
        return details, made

    async def _claimed(self, conn: DbConnection, booking_id: str) -> list[Payment]:
        """The booking's card payments that paid for it (one, but for a booking paid again)."""
        return [
            p for p in await payments_repo.payments_for_booking(conn, booking_id)
            if p.provider != "desk" and p.outcome is Outcome.CLAIMED
        ]  # fmt: skip

    async def _refundable(self, conn: DbConnection, booking_id: str) -> int:
        paid = await self._claimed(conn, booking_id)
        refunds = await payments_repo.refunds_of(conn, [p.id for p in paid])
        given = sum(r.amount for r in refunds if r.status is not RefundStatus.FAILED)
        return sum(p.amount for p in paid) - given

    async def _add_refund(
        self,
        conn: DbConnection,
        booking: Booking,
        amount: int | None,
        reason: str,
        actor: Actor | None,
        *,
        tell_guest: bool,
    ) -> Refund:
        """A refund of the booking's card payment written in the ledger (and, `tell_guest`,
        the guest's letter saying so and why), for the provider to be asked after the commit."""
        if not reason.strip():
            raise BadRequest("reason: say why the payment is refunded")
        paid = await self._claimed(conn, booking.id)
        if not paid:
            raise UnprocessableEntity(f"Booking {booking.supplier_reference} has no card payment to refund")
        payment = paid[-1]
        left = await self._refundable(conn, booking.id)
        wanted = left if amount is None else amount
        if wanted <= 0 or wanted > left:
            raise UnprocessableEntity(
                f"A refund of booking {booking.supplier_reference} is between 1 and {left} "
                f"({payment.currency}, minor units); {wanted} asked"
            )
        refund = new_refund(
            payment, wanted, reason.strip()[:500], actor.name if actor else GUEST, self._clock()
        )
        await payments_repo.add_refund(conn, refund)
        if tell_guest and actor is not None:
            await queue_refund_letter(conn, booking, refund, RefundCause.STAFF, actor.name, self._clock())
        if actor is not None:
            await audit_repo.record(
                conn, actor, "payment.refund", target_of(booking),
                {"refund": refund.id, "amount": wanted, "currency": payment.currency, "reason": reason},
                at=self._clock(),
            )  # fmt: skip
        return refund

    async def _refund_now(self, refund_id: str) -> Refund:
        async with self._db.transaction(write=False) as conn:
            found = await payments_repo.get_refund(conn, refund_id)
        assert found is not None
        return found

    async def push_refund(self, refund: Refund) -> None:
        """Ask the provider for a refund written in the ledger, or how it stands; record the
        answer. A crash between asking and writing the answer down is found again by the
        refund's reference, kept with it at the provider, so a refund is never asked twice."""
        card = self._card()
        async with self._db.transaction(write=False) as conn:
            payment = await payments_repo.get_payment(conn, refund.payment_id)
        assert payment is not None and payment.provider_id is not None
        try:
            if refund.provider_id is not None:
                answer = await card.read_refund(refund.provider_id)
            else:
                found = await card.find_refund(payment.provider_id, refund.id)
                answer = found or await card.refund(
                    payment.provider_id, refund.amount, refund.idempotency_key,
                    {"berth_refund": refund.id, "berth_booking": payment.booking_id},
                )  # fmt: skip
        except ProviderUnavailable as exc:
            log.warning("refund not asked yet", refund=refund.id, reason=str(exc))
            return
        except ProviderRefused as exc:
            async with self._db.transaction(write=True) as conn:
                await payments_repo.set_refund_state(
                    conn, refund.id, RefundStatus.FAILED, self._clock(), failure_reason=exc.message[:500]
                )
            log.error("refund refused", refund=refund.id, reason=exc.message)
            return
        status = {
            "succeeded": RefundStatus.SUCCEEDED,
            "failed": RefundStatus.FAILED,
            "canceled": RefundStatus.FAILED,
        }.get(answer.status, RefundStatus.PENDING)
        async with self._db.transaction(write=True) as conn:
            await payments_repo.set_refund_state(
                conn, refund.id, status, self._clock(), provider_id=answer.id,
                failure_reason=(answer.failure_reason or answer.status) if status is RefundStatus.FAILED else None,
            )  # fmt: skip


def new_refund(payment: Payment, amount: int, reason: str, actor: str, now: datetime) -> Refund:
    refund_id = new_id()
    return Refund(
        id=refund_id, payment_id=payment.id, provider_id=None, idempotency_key=f"berth-refund-{refund_id}",
        amount=amount, currency=payment.currency, status=RefundStatus.REQUESTED, reason=reason[:500],
        actor=actor, failure_reason=None, created_at=now, updated_at=now,
    )  # fmt: skip


async def queue_refund_letter(
    conn: DbConnection, booking: Booking, refund: Refund, cause: RefundCause, actor: str, now: datetime
) -> None:
    """Queue the guest's letter of a refund, saying why (`cause`; staff's own words with it)."""
    facts = {
        "amount": refund.amount,
        "currency": refund.currency,
        "cause": cause.value,
        "reason": refund.reason,
    }
    message = NewMessage(f"mail_{uuid.uuid4().hex}", REFUNDED_MAIL, booking.id, None, actor, facts)
    await mail_repo.add_message(conn, message, now)
