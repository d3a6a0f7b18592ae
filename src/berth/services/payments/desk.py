"""The desk's payments (cash or a card terminal, in the ledger only) and the ledger's reads of
the payments service: a booking's payments and refunds, the back office's list."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.errors import BadRequest
from berth.domain.payments import (
    PaymentStatus,
)
from berth.domain.staff import Actor
from berth.services.payments.base import PaymentsBase, new_id, target_of
from berth.store import audit_repo, payments_repo
from berth.store.payments_repo import Payment, PaymentFilter, PaymentRow, Refund


@dataclass(frozen=True)
class BookingPayments:
    payments: list[Payment]
    refunds: list[Refund]


class Desk(PaymentsBase):
    async def record_desk_payment(
        self, booking_uuid: str, method: str, amount: int, currency: str, actor: Actor, reference: str | None
    ) -> Payment:
        """A payment staff took at the desk (cash or a card terminal), in the ledger only."""
        if method not in ("cash", "card_terminal"):
            raise BadRequest(f"method: 'cash' or 'card_terminal'; {method!r} given")
        if amount <= 0:
            raise BadRequest(f"amount: a payment is more than 0 (minor units); {amount} given")
        if len(currency) != 3 or not currency.isalpha():
            raise BadRequest(f"currency: a three-letter code; {currency!r} given")
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            booking = await self._find(conn, booking_uuid)
            payment = Payment(
                id=new_id(), booking_id=booking.id, attempt=await payments_repo.next_attempt(conn, booking.id),
                provider="desk", method=method, provider_id=None,
                provider_customer=None, provider_setup=None, amount=amount, currency=currency.upper(),
                status=PaymentStatus.SUCCEEDED, outcome=None, failure_reason=None,
                reference=(reference or "").strip()[:200] or None, actor=actor.name,
                created_at=now, updated_at=now, captured_at=now,
            )  # fmt: skip
            await payments_repo.add_payment(conn, payment)
            await audit_repo.record(
                conn, actor, "payment.desk", target_of(booking),
                {"payment": payment.id, "method": method, "amount": amount, "currency": payment.currency},
                at=now,
            )  # fmt: skip
        return payment

    # --- the ledger --------------------------------------------------------------------------

    async def payments_for_booking(self, booking_id: str) -> BookingPayments:
        async with self._db.transaction(write=False) as conn:
            payments = await payments_repo.payments_for_booking(conn, booking_id)
            refunds = await payments_repo.refunds_of(conn, [p.id for p in payments])
        return BookingPayments(payments, refunds)

    async def list_payments(
        self, where: PaymentFilter, limit: int, offset: int
    ) -> tuple[list[PaymentRow], int]:
        async with self._db.transaction(write=False) as conn:
            return await payments_repo.list_payments(conn, where, limit, offset)
