"""The confirmation precondition of paying channels: a booking of a connection whose contract
`takesPayment` is confirmed only for a captured payment of its price, which the confirmation
claims in its own transaction (so one payment pays for one confirmation, and a crash leaves
either both or neither)."""

from __future__ import annotations

from berth.domain.bookings import Booking
from berth.domain.errors import UnprocessableEntity
from berth.domain.payments import Outcome, PaymentStatus, booking_price
from berth.services.clock import Clock
from berth.store import connections_repo, payments_repo
from berth.store.connection import DbConnection


class PaidConfirmations:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    async def confirming(self, conn: DbConnection, booking: Booking) -> None:
        found = await connections_repo.connections_by_id(conn, [booking.connection_id])
        connection = found.get(booking.connection_id)
        if connection is None or not connection.contract.takes_payment:
            return
        if booking.package_booking_id is not None:
            return  # an included booking: paid for with its package booking, confirmed with it
        price = booking_price(booking)
        if price is None or price.amount == 0:
            return  # nothing to pay
        for payment in await payments_repo.payments_for_booking(conn, booking.id):
            if (
                payment.status is PaymentStatus.SUCCEEDED
                and payment.outcome is None
                and payment.provider != "desk"
                and (payment.amount, payment.currency) == (price.amount, price.currency)
                and await payments_repo.set_outcome(conn, payment.id, Outcome.CLAIMED, self._clock())
            ):
                return
        raise UnprocessableEntity(
            f"Booking {booking.uuid!r} is paid by card: it is confirmed once its payment of "
            f"{price.amount} {price.currency} (minor units) has succeeded"
        )
