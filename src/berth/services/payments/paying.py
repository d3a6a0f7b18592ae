"""Charging the card: `pay` charges the booking's open payment with the card the guest gave
(once the booking is checked to cost that still, and to be held), then settles it."""

from __future__ import annotations

import contextlib
from datetime import timedelta

from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Catalog
from berth.domain.errors import OctoError, UnprocessableEntity
from berth.domain.payments import (
    Money,
    PaymentStatus,
    amount_due,
)
from berth.services.payments.provider import ProviderRefused, ProviderUnavailable
from berth.services.payments.settling import Settlement, SettlementState, Settling, pending_unreachable
from berth.store import payments_repo
from berth.store.payments_repo import Payment

# What `pay` answers without charging again: the booking is settled, or the bank asks the guest.
FINAL_OR_ASKING = frozenset(("CONFIRMED", "REFUNDED", "ACTION_REQUIRED"))


class Paying(Settling):
    async def pay(self, catalog: Catalog, booking_uuid: str) -> Settlement:
        """Charge the booking's open payment with the card the guest gave (`confirmCardSetup`
        of the checkout), then settle it."""
        card = self._card()
        async with self._db.transaction(write=False) as conn:
            booking = await self._find(conn, booking_uuid)
            earlier = await payments_repo.payments_for_booking(conn, booking.id)
        settled = await self._settle_all(catalog, booking, earlier)
        if settled is not None and settled.state in FINAL_OR_ASKING:
            return settled
        payment = next(
            (p for p in reversed(earlier) if p.status is PaymentStatus.CREATED and p.provider_setup), None
        )
        if payment is None or payment.provider_id is None:
            return Settlement(SettlementState.FAILED, "No payment is under way for this booking: start again")
        try:
            setup = await card.read_setup(payment.provider_setup or "")
        except ProviderUnavailable:
            return pending_unreachable()
        except ProviderRefused as exc:
            return Settlement(SettlementState.FAILED, f"The card was not accepted: {exc.message}")
        if setup.status != "succeeded" or setup.payment_method is None:
            return Settlement(
                SettlementState.FAILED, "The card was not given or not accepted: enter it again"
            )
        try:
            await self._payable_now(catalog, booking.id, Money(payment.amount, payment.currency))
        except OctoError as exc:
            await self._give_up(catalog, payment)
            return Settlement(SettlementState.FAILED, f"{exc.message}. Nothing was charged")
        try:
            stands = await card.pay(payment.provider_id, setup.payment_method)
        except ProviderUnavailable:
            return pending_unreachable()
        except ProviderRefused as exc:
            await self._failed(catalog, payment, exc.message)
            return await self.settle(catalog, booking.id)
        await self._record(payment, stands)
        if stands.attempt_failed:
            await self._give_up(catalog, payment)
        return await self.settle(catalog, booking.id)

    async def _payable_now(self, catalog: Catalog, booking_id: str, charging: Money) -> None:
        """Before a card is charged `charging`: the booking still costs that (a charge of
        another amount could only be refunded), and is held (a hold that ran out is held again
        if its places are still there), for long enough to pay."""
        now = self._clock()
        wanted = now + timedelta(minutes=self._settings.payment_hold_minutes)
        async with self._db.transaction(write=True) as conn:
            booking = await self._locked(conn, booking_id)
            if amount_due(booking) != charging:
                raise UnprocessableEntity(
                    f"Booking {booking.supplier_reference} now costs another amount than this payment: pay again"
                )
            if booking.status is BookingStatus.EXPIRED:
                await self._steps.reinstate_in(conn, catalog, booking, wanted)
            elif booking.status is not BookingStatus.ON_HOLD:
                raise UnprocessableEntity(
                    f"Booking {booking.supplier_reference} is {booking.status.value.lower()}"
                )

    async def _failed(self, catalog: Catalog, payment: Payment, reason: str) -> None:
        """A declined attempt: recorded, and its provider payment cancelled, so that nothing
        can ever be captured on it (a new attempt is a new payment)."""
        async with self._db.transaction(write=True) as conn:
            await payments_repo.set_status(
                conn, payment.id, PaymentStatus.FAILED, self._clock(), failure_reason=reason[:500]
            )
        with contextlib.suppress(UnprocessableEntity):  # not reached: the sweep cancels it later
            await self._give_up(catalog, payment)
