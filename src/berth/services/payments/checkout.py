"""Starting a card payment: `checkout` writes a payment in the ledger, then asks the provider
for it (a PaymentIntent for the booking's stored price, keyed by the ledger's payment) and for
the place where the guest's browser gives its card (a SetupIntent); a page loaded again takes
up the open payment if it can still be paid, else gives it up and starts another."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

from berth.domain.bookings import Booking, BookingStatus
from berth.domain.catalog import Catalog
from berth.domain.errors import UnprocessableEntity
from berth.domain.payments import (
    OPEN,
    Money,
    Outcome,
    PaymentStatus,
    amount_due,
)
from berth.services.payments.base import GUEST, new_id, provider_unreachable
from berth.services.payments.provider import CardProvider, ProviderRefused, ProviderUnavailable
from berth.services.payments.settling import Settling
from berth.store import payments_repo
from berth.store.payments_repo import Payment


@dataclass(frozen=True)
class Checkout:
    """What the guest's browser needs to pay: it loads `stripe_js_url`, gives the card with
    `stripe.confirmCardSetup(setup_client_secret, {payment_method: {card}})`, then asks Berth to
    pay (`Payments.pay`). `client_secret` is the payment's (PaymentIntent's), for the 3-D
    Secure step `stripe.confirmCardPayment(client_secret)` when `pay` answers ACTION_REQUIRED."""

    payment_id: str
    client_secret: str
    setup_client_secret: str
    publishable_key: str
    amount: int  # minor units
    currency: str
    stripe_js_url: str


class Checkouts(Settling):
    async def checkout(self, catalog: Catalog, booking_uuid: str) -> Checkout:
        """Start (or take up again) the card payment of a held booking, for its stored price;
        its hold lasts at least BERTH_PAYMENT_HOLD_MINUTES from now."""
        card = self._card()
        async with self._db.transaction(write=False) as conn:
            booking = await self._find(conn, booking_uuid)
            earlier = await payments_repo.payments_for_booking(conn, booking.id)
        self._check_payable(booking, earlier)
        due = amount_due(booking)
        await self._hold_long_enough(catalog, booking)
        open_ones = [p for p in earlier if p.status in OPEN and p.provider_id is not None]
        for payment in open_ones:
            taken_up = await self._take_up(catalog, payment, due)
            if taken_up is not None:
                return taken_up
        if open_ones:  # given up; one may have been paid meanwhile, and paid for the booking
            async with self._db.transaction(write=False) as conn:
                booking = await self._find(conn, booking.id)
                self._check_payable(booking, await payments_repo.payments_for_booking(conn, booking.id))
        return await self._start(booking, due, card)

    def _check_payable(self, booking: Booking, earlier: list[Payment]) -> None:
        if any(p.outcome is Outcome.CLAIMED for p in earlier) or booking.status in (
            BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED
        ):  # fmt: skip
            raise UnprocessableEntity(f"Booking {booking.supplier_reference} is already paid and confirmed")
        if booking.status is BookingStatus.EXPIRED:
            raise UnprocessableEntity(
                f"The hold on booking {booking.supplier_reference} ran out: nothing was charged; please book again"
            )
        if booking.status is not BookingStatus.ON_HOLD:
            raise UnprocessableEntity(
                f"Booking {booking.supplier_reference} is {booking.status.value.lower()}: it cannot be paid"
            )

    async def _hold_long_enough(self, catalog: Catalog, booking: Booking) -> None:
        now = self._clock()
        wanted = now + timedelta(minutes=self._settings.payment_hold_minutes)
        if booking.expires_at is not None and booking.expires_at >= wanted:
            return
        async with self._db.transaction(write=True) as conn:
            locked = await self._locked(conn, booking.id)
            if locked.status is BookingStatus.ON_HOLD and (
                locked.expires_at is None or locked.expires_at < wanted
            ):
                await self._steps.hold_until_in(conn, catalog, locked, wanted)

    async def _take_up(self, catalog: Catalog, payment: Payment, due: Money) -> Checkout | None:
        """The open payment again (a page loaded again), if it is still for the booking's price
        and waits for a card; else it is given up and None answered."""
        card = self._card()
        assert payment.provider_id is not None
        try:
            stands = await card.read(payment.provider_id)
        except ProviderRefused:
            stands = None
        except ProviderUnavailable as exc:
            raise provider_unreachable() from exc
        if (
            stands is not None
            and stands.status in ("requires_payment_method", "requires_confirmation")
            and not stands.attempt_failed
            and (payment.amount, payment.currency) == (due.amount, due.currency)
            and payment.provider_customer is not None
        ):
            setup = await self._setup_for(payment, card)
            return self._checkout(payment, stands.client_secret, setup)
        await self._give_up(catalog, payment)
        return None

    async def _setup_for(self, payment: Payment, card: CardProvider) -> str:
        """The client secret of a card setup for the payment the guest can still use."""
        assert payment.provider_customer is not None
        try:
            if payment.provider_setup is not None:
                setup = await card.read_setup(payment.provider_setup)
                if setup.status not in ("succeeded", "canceled"):
                    return setup.client_secret
            setup = await card.new_setup(
                payment.provider_customer, f"berth-setup-{new_id()}", {"berth_payment": payment.id}
            )
        except ProviderUnavailable as exc:
            raise provider_unreachable() from exc
        except ProviderRefused as exc:
            raise UnprocessableEntity(f"The payment could not be started: {exc.message}") from exc
        async with self._db.transaction(write=True) as conn:
            await payments_repo.set_setup(conn, payment.id, setup.id, self._clock())
        return setup.client_secret

    def _checkout(self, payment: Payment, client_secret: str, setup_secret: str) -> Checkout:
        card = self._card()
        return Checkout(
            payment_id=payment.id,
            client_secret=client_secret,
            setup_client_secret=setup_secret,
            publishable_key=card.publishable_key,
            amount=payment.amount,
            currency=payment.currency,
            stripe_js_url=card.script_url,
        )

    async def _start(self, booking: Booking, due: Money, card: CardProvider) -> Checkout:
        """A new payment: written in the ledger first, then made at the provider with a key
        derived from the ledger's payment (a retried call makes no second one). Nothing can be
        charged before the provider's payment is in the ledger: the browser gets its secret
        only then."""
        now = self._clock()
        payment = Payment(
            id=new_id(), booking_id=booking.id, attempt=0, provider=card.name, method="card", provider_id=None,
            provider_customer=None, provider_setup=None, amount=due.amount, currency=due.currency,
            status=PaymentStatus.CREATED, outcome=None, failure_reason=None, reference=None, actor=GUEST,
            created_at=now, updated_at=now, captured_at=None,
        )  # fmt: skip
        async with self._db.transaction(write=True) as conn:
            payment = replace(payment, attempt=await payments_repo.next_attempt(conn, booking.id))
            await payments_repo.add_payment(conn, payment)
        metadata = {
            "berth_payment": payment.id,
            "berth_booking": booking.id,
            "booking": booking.supplier_reference,
        }
        try:
            started = await card.start(
                f"berth-payment-{payment.id}", due.amount, due.currency, metadata,
                booking.contact.get("emailAddress"), booking.contact.full_name,
            )  # fmt: skip
        except ProviderUnavailable as exc:
            # Whatever the provider made of it, no browser ever gets this payment's secret:
            # nothing can be charged on it, and nothing is left open.
            async with self._db.transaction(write=True) as conn:
                await payments_repo.set_status(
                    conn, payment.id, PaymentStatus.CANCELED, self._clock(), failure_reason=str(exc)[:500]
                )
            raise provider_unreachable() from exc
        except ProviderRefused as exc:
            async with self._db.transaction(write=True) as conn:
                await payments_repo.set_status(
                    conn, payment.id, PaymentStatus.FAILED, self._clock(), failure_reason=exc.message[:500]
                )
            raise UnprocessableEntity(f"The payment could not be started: {exc.message}") from exc
        async with self._db.transaction(write=True) as conn:
            await payments_repo.set_provider_ids(
                conn, payment.id, started.payment.id, started.customer, started.setup.id, self._clock()
            )
        return self._checkout(
            replace(payment, provider_id=started.payment.id), started.payment.client_secret,
            started.setup.client_secret,
        )  # fmt: skip
