"""Settling: a payment read from the provider and recorded; a captured one given its one
outcome (`resolve`: claimed by the booking's confirmation, or refunded in full, as
`domain.payments.settle_action` decides); an open one no longer wanted given up; and how the
booking's payment stands, for the guest (`Settlement`)."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

import structlog

from berth.domain.bookings import Booking, BookingStatus, as_of
from berth.domain.catalog import Catalog
from berth.domain.errors import NotFound, OctoError
from berth.domain.payments import (
    OPEN,
    Action,
    Decision,
    Money,
    Outcome,
    PaymentStatus,
    RefundCause,
    payment_status,
    settle_action,
)
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import SYSTEM, ConfirmInput
from berth.services.payments.base import provider_unreachable
from berth.services.payments.provider import CardPayment, ProviderRefused, ProviderUnavailable
from berth.services.payments.refunds import Refunds, new_refund, queue_refund_letter
from berth.store import bookings_reads, payments_repo
from berth.store.connection import DbConnection
from berth.store.payments_repo import Payment, Refund

log = structlog.get_logger("berth.payments")


CONFIRMED_ONES = (
    BookingStatus.CONFIRMED,
    BookingStatus.PENDING,
    BookingStatus.REDEEMED,
)  # the guest's email of a payment refunded in full at once


class SettlementState(StrEnum):
    CONFIRMED = "CONFIRMED"  # paid and confirmed (or pending the supplier's acceptance)
    ACTION_REQUIRED = "ACTION_REQUIRED"  # the bank asks for 3-D Secure: confirmCardPayment(client_secret)
    PENDING = "PENDING"  # a payment under way: still processing, or the provider not reached
    UNPAID = "UNPAID"  # no payment under way: the card step not done, or its payment given up
    FAILED = "FAILED"  # this attempt took nothing (declined, authentication failed): try again
    REFUNDED = "REFUNDED"  # paid, but the booking could not be had: refunded in full


@dataclass(frozen=True)
class Settlement:
    state: SettlementState
    message: str  # for the guest
    booking: BookingDetails | None = None
    client_secret: str | None = None  # ACTION_REQUIRED: the payment's, for confirmCardPayment


class Settling(Refunds):
    async def settle(self, catalog: Catalog, booking_uuid: str) -> Settlement:
        """Read the booking's payments from the provider and act on what it says; answer how
        the booking's payment stands, for the guest."""
        async with self._db.transaction(write=False) as conn:
            booking = await self._find(conn, booking_uuid)
            payments = await payments_repo.payments_for_booking(conn, booking.id)
        settled = await self._settle_all(catalog, booking, payments)
        return settled or Settlement(SettlementState.UNPAID, "Waiting for the card to be given")

    async def _settle_all(
        self, catalog: Catalog, booking: Booking, payments: list[Payment]
    ) -> Settlement | None:
        unreachable = False
        for payment in payments:
            if payment.provider == "desk" or payment.provider_id is None or payment.outcome is not None:
                continue
            if payment.status is PaymentStatus.CANCELED:
                continue
            try:
                await self.settle_payment(catalog, payment)
            except ProviderUnavailable:
                unreachable = True
        return await self._standing(catalog, booking.id, unreachable)

    async def settle_payment(self, catalog: Catalog, payment: Payment) -> None:
        """Read one payment from the provider, record it, and settle it if it was captured."""
        assert payment.provider_id is not None
        stands = await self._card().read(payment.provider_id)
        await self._record(payment, stands)
        if stands.status == "succeeded":
            await self.resolve(catalog, payment.id, Money(stands.amount, stands.currency))

    async def _record(self, payment: Payment, stands: CardPayment) -> None:
        status = PaymentStatus.FAILED if stands.attempt_failed else payment_status(stands.status)
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            await payments_repo.set_status(
                conn, payment.id, status, now,
                failure_reason=(stands.last_error or "")[:500] or None if status is PaymentStatus.FAILED else None,
                captured_at=now if status is PaymentStatus.SUCCEEDED else None,
            )  # fmt: skip

    async def resolve(self, catalog: Catalog, payment_id: str, paid: Money) -> None:
        """Give a captured payment its one outcome: the booking's confirmation claims it, or it
        is refunded in full (`settle_action`). Safe to run again, and from many places at once:
        each decision is made under the booking's lock, on the ledger as it then stands."""
        async with self._db.transaction(write=True) as conn:
            payment = await payments_repo.get_payment(conn, payment_id)
            assert payment is not None
            booking = await self._locked(conn, payment.booking_id)
            payment = await payments_repo.get_payment(conn, payment_id)  # as it stands under the lock
            assert payment is not None
            others = await payments_repo.payments_for_booking(conn, booking.id)
            claimed = any(p.outcome is Outcome.CLAIMED and p.id != payment.id for p in others)
            decision = settle_action(booking, paid, payment.outcome, self._clock(), claimed_by_other=claimed)
        if decision.action is Action.NOTHING:
            return
        if decision.action in (Action.CONFIRM, Action.REINSTATE):
            try:
                await self._confirm(
                    catalog, payment.booking_id, reinstate=decision.action is Action.REINSTATE
                )
                return
            except OctoError as exc:
                decision = decision.refused(exc.message)
        refund = await self._refund_in_full(payment_id, paid, decision)
        if refund is not None:
            await self.push_refund(refund)

    async def _confirm(self, catalog: Catalog, booking_id: str, *, reinstate: bool) -> None:
        """Confirm the booking (its hold first taken again if it ran out), in one transaction
        whose confirmation claims the payment (`claims.PaidConfirmations`)."""
        await self._steps.refresh()
        now = self._clock()
        data = ConfirmInput(contact=None, email_receipt=True)
        async with self._db.transaction(write=True) as conn:
            booking = await self._locked(conn, booking_id)
            if reinstate and booking.status is BookingStatus.EXPIRED:
                wanted = now + timedelta(minutes=self._settings.payment_hold_minutes)
                booking = await self._steps.reinstate_in(conn, catalog, booking, wanted)

            def first(c: DbConnection, b: Booking) -> Awaitable[Booking]:
                return self._steps.confirm_in(c, catalog, b, data, now)

            def companion(c: DbConnection, b: Booking, _: Booking) -> Awaitable[Booking]:
                return self._steps.confirm_in(c, catalog, b, ConfirmInput(contact=None), now)

            await self._steps.with_companions(conn, catalog, booking, "confirm", first, companion)

    async def _refund_in_full(self, payment_id: str, paid: Money, decision: Decision) -> Refund | None:
        """Decide a full refund of a captured payment (once: None when it had an outcome by
        then), and queue the guest's email saying why, in one transaction."""
        now = self._clock()
        assert decision.cause is not None
        async with self._db.transaction(write=True) as conn:
            payment = await payments_repo.get_payment(conn, payment_id)
            assert payment is not None
            booking = await self._locked(conn, payment.booking_id)
            if not await payments_repo.set_outcome(conn, payment_id, Outcome.REFUND, now):
                return None
            refund = new_refund(payment, paid.amount, decision.reason, SYSTEM, now)
            await payments_repo.add_refund(conn, refund)
            # A second payment of a paid booking: its guest has the booking, and no letter.
            if booking.status not in CONFIRMED_ONES and decision.cause is not RefundCause.ALREADY_PAID:
                await queue_refund_letter(conn, booking, refund, decision.cause, SYSTEM, now)
        log.info("payment refunded in full", payment=payment_id, reason=decision.reason)
        return refund

    async def _standing(self, catalog: Catalog, booking_id: str, unreachable: bool) -> Settlement | None:
        """How the booking's payment stands, for the guest."""
        async with self._db.transaction(write=False) as conn:
            booking = as_of(await self._locked_read(conn, booking_id), self._clock())
            payments = await payments_repo.payments_for_booking(conn, booking_id)
            details = await self._loader.one(conn, catalog, booking)
        if any(p.outcome is Outcome.CLAIMED for p in payments):
            said = (
                "Paid: your booking is confirmed"
                if booking.status in (BookingStatus.CONFIRMED, BookingStatus.REDEEMED)
                else "Paid: your booking waits for the supplier's confirmation"
                if booking.status is BookingStatus.PENDING
                else f"Paid; the booking is {booking.status.value.lower()} since"
            )
            return Settlement(SettlementState.CONFIRMED, said, details)
        refunded = [p for p in payments if p.outcome is Outcome.REFUND]
        if refunded and not any(p.status in OPEN for p in payments):
            return Settlement(
                SettlementState.REFUNDED,
                "Your payment arrived after your places were given up and could not be confirmed: "
                "it is refunded in full, and we have emailed you",
                details,
            )
        if unreachable:
            return pending_unreachable(details)
        card = [p for p in payments if p.provider != "desk"]
        if not card:
            return None
        latest = card[-1]
        if latest.status is PaymentStatus.REQUIRES_ACTION and latest.provider_id is not None:
            try:
                stands = await self._card().read(latest.provider_id)
            except ProviderUnavailable:
                return pending_unreachable(details)
            return Settlement(
                SettlementState.ACTION_REQUIRED, "Your bank asks you to confirm the payment", details,
                client_secret=stands.client_secret,
            )  # fmt: skip
        if latest.status is PaymentStatus.FAILED or (
            latest.status is PaymentStatus.CANCELED and latest.failure_reason
        ):
            return Settlement(
                SettlementState.FAILED,
                f"{latest.failure_reason or 'The payment failed.'} Your booking is still held: try another card.",
                details,
            )
        if latest.status is PaymentStatus.PROCESSING:
            return Settlement(SettlementState.PENDING, "Your payment is being processed", details)
        return Settlement(SettlementState.UNPAID, "Waiting for the card to be given", details)

    async def _locked_read(self, conn: DbConnection, booking_id: str) -> Booking:
        booking = await bookings_reads.get_by_id(conn, booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id!r}")
        return booking

    async def _give_up(self, catalog: Catalog, payment: Payment) -> None:
        """Cancel an open payment no longer wanted (a newer attempt, a hold ended, a booking
        paid otherwise); a payment that succeeded meanwhile is settled instead."""
        if payment.provider_id is None:
            async with self._db.transaction(write=True) as conn:
                await payments_repo.set_status(
                    conn, payment.id, PaymentStatus.CANCELED, self._clock(),
                    failure_reason="never reached the guest",
                )  # fmt: skip
            return
        try:
            stands = await self._card().cancel(payment.provider_id)
        except ProviderUnavailable as exc:
            raise provider_unreachable() from exc
        except ProviderRefused as exc:
            log.warning("payment not cancelled", payment=payment.id, reason=exc.message)
            return
        await self._record(payment, stands)
        if stands.status == "succeeded":
            await self.resolve(catalog, payment.id, Money(stands.amount, stands.currency))


def pending_unreachable(details: BookingDetails | None = None) -> Settlement:
    return Settlement(
        SettlementState.PENDING,
        "The payment provider cannot be reached just now, so your payment is not confirmed yet. "
        "Nothing more is charged: we confirm your booking as soon as the provider answers",
        details,
    )
