"""The payments service: a guest's card payment of a held booking, from the checkout to the
confirmation it pays for (or its full refund), refunds, the desk's payments and the ledger.

How a card payment goes (docs/payments.md): `checkout` writes a payment in the ledger, then
asks the provider for it (a PaymentIntent for the booking's stored price, keyed by the ledger's
payment) and for the place where the guest's browser gives its card (a SetupIntent); `pay`
charges the payment with that card; `settle`, the provider's webhooks and the `sweep` read the
payment from the provider and act on what it says. A captured payment is claimed by the
booking's confirmation (`claims.PaidConfirmations`, in the confirmation's transaction) or
refunded in full, as `domain.payments.settle_action` decides, whoever gets there first.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

import structlog

from berth.domain.audit import Target
from berth.domain.bookings import ENDED, Booking, BookingStatus, as_of
from berth.domain.catalog import Catalog
from berth.domain.errors import BadRequest, NotFound, OctoError, ServiceUnavailable, UnprocessableEntity
from berth.domain.payments import (
    OPEN,
    Action,
    Decision,
    Money,
    Outcome,
    PaymentStatus,
    RefundCause,
    RefundStatus,
    amount_due,
    payment_status,
    settle_action,
)
from berth.domain.staff import Actor
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import SYSTEM, ConfirmInput
from berth.services.bookings.steps import BookingSteps
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.payments.provider import CardPayment, CardProvider, ProviderRefused, ProviderUnavailable
from berth.settings import Settings
from berth.store import audit_repo, bookings_reads, connections_repo, mail_repo, payments_repo
from berth.store.database import Database, DbConnection
from berth.store.mail_repo import NewMessage
from berth.store.payments_repo import Payment, PaymentFilter, PaymentRow, Refund

log = structlog.get_logger("berth.payments")

GUEST = "guest"
# A payment written in the ledger whose provider payment was never made (a crash between the
# two): after this long nobody can be paying it, and the sweep closes it.
UNSTARTED_AFTER = timedelta(minutes=10)
REFUNDED_MAIL = "refunded"
# How long Stripe is asked to wait before delivering again an event Berth could not process.
WEBHOOK_RETRY_SECONDS = 60
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


# What `pay` answers without charging again: the booking is settled, or the bank asks the guest.
FINAL_OR_ASKING = frozenset(("CONFIRMED", "REFUNDED", "ACTION_REQUIRED"))


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


@dataclass(frozen=True)
class Settlement:
    state: SettlementState
    message: str  # for the guest
    booking: BookingDetails | None = None
    client_secret: str | None = None  # ACTION_REQUIRED: the payment's, for confirmCardPayment


@dataclass(frozen=True)
class BookingPayments:
    payments: list[Payment]
    refunds: list[Refund]


class PaymentsOff(UnprocessableEntity):
    def __init__(self) -> None:
        super().__init__("Card payments are not set up: BERTH_STRIPE_SECRET_KEY is not set")


def _new_id() -> str:
    return str(uuid.uuid4())


class Payments:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        steps: BookingSteps,
        catalogs: CatalogService,
        provider: CardProvider | None,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._steps = steps
        self._loader = steps.loader
        self._catalogs = catalogs
        self.provider = provider

    def _card(self) -> CardProvider:
        if self.provider is None:
            raise PaymentsOff()
        return self.provider

    async def close(self) -> None:
        if self.provider is not None:
            await self.provider.close()

    # --- bookings ----------------------------------------------------------------------------

    async def _find(self, conn: DbConnection, booking_ref: str) -> Booking:
        """A booking by its id or by the uuid its (paying) channel gave it, as it stands now."""
        booking = await bookings_reads.get_by_id(conn, booking_ref)
        if booking is None:
            booking = await self._paying_by_uuid(conn, booking_ref)
        if booking is None:
            raise NotFound(f"No booking {booking_ref!r}")
        return as_of(booking, self._clock())

    async def _paying_by_uuid(self, conn: DbConnection, uuid_: str) -> Booking | None:
        found = await payments_repo.bookings_by_uuid(conn, uuid_)
        connections = await connections_repo.connections_by_id(conn, {b.connection_id for b in found})
        paying = [b for b in found if (c := connections.get(b.connection_id)) and c.contract.takes_payment]
        return paying[0] if paying else None

    async def _locked(self, conn: DbConnection, booking_id: str) -> Booking:
        booking = await bookings_reads.get_by_id(conn, booking_id)
        if booking is None:
            raise NotFound(f"No booking {booking_id!r}")
        return as_of(await self._steps.lock_in(conn, booking), self._clock())

    # --- checkout ----------------------------------------------------------------------------

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
            raise _unreachable() from exc
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
                payment.provider_customer, f"berth-setup-{_new_id()}", {"berth_payment": payment.id}
            )
        except ProviderUnavailable as exc:
            raise _unreachable() from exc
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
            id=_new_id(), booking_id=booking.id, attempt=0, provider=card.name, method="card", provider_id=None,
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
            raise _unreachable() from exc
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
            raise _unreachable() from exc
        except ProviderRefused as exc:
            log.warning("payment not cancelled", payment=payment.id, reason=exc.message)
            return
        await self._record(payment, stands)
        if stands.status == "succeeded":
            await self.resolve(catalog, payment.id, Money(stands.amount, stands.currency))

    # --- paying ------------------------------------------------------------------------------

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
            return _pending_unreachable()
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
            return _pending_unreachable()
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

    # --- settling ----------------------------------------------------------------------------

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
            refund = _new_refund(payment, paid.amount, decision.reason, SYSTEM, now)
            await payments_repo.add_refund(conn, refund)
            # A second payment of a paid booking: its guest has the booking, and no letter.
            if booking.status not in CONFIRMED_ONES and decision.cause is not RefundCause.ALREADY_PAID:
                await _tell_guest(conn, booking, refund, decision.cause, SYSTEM, now)
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
            return _pending_unreachable(details)
        card = [p for p in payments if p.provider != "desk"]
        if not card:
            return None
        latest = card[-1]
        if latest.status is PaymentStatus.REQUIRES_ACTION and latest.provider_id is not None:
            try:
                stands = await self._card().read(latest.provider_id)
            except ProviderUnavailable:
                return _pending_unreachable(details)
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

    # --- webhooks and the sweep -------------------------------------------------------------

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

    # --- refunds -----------------------------------------------------------------------------

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
                    _target(booking), {"reason": reason, "refund": made.amount if made else 0, "by": by},
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
        refund = _new_refund(
            payment, wanted, reason.strip()[:500], actor.name if actor else GUEST, self._clock()
        )
        await payments_repo.add_refund(conn, refund)
        if tell_guest and actor is not None:
            await _tell_guest(conn, booking, refund, RefundCause.STAFF, actor.name, self._clock())
        if actor is not None:
            await audit_repo.record(
                conn, actor, "payment.refund", _target(booking),
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

    # --- the desk ----------------------------------------------------------------------------

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
                id=_new_id(), booking_id=booking.id, attempt=await payments_repo.next_attempt(conn, booking.id),
                provider="desk", method=method, provider_id=None,
                provider_customer=None, provider_setup=None, amount=amount, currency=currency.upper(),
                status=PaymentStatus.SUCCEEDED, outcome=None, failure_reason=None,
                reference=(reference or "").strip()[:200] or None, actor=actor.name,
                created_at=now, updated_at=now, captured_at=now,
            )  # fmt: skip
            await payments_repo.add_payment(conn, payment)
            await audit_repo.record(
                conn, actor, "payment.desk", _target(booking),
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


def _new_refund(payment: Payment, amount: int, reason: str, actor: str, now: datetime) -> Refund:
    refund_id = _new_id()
    return Refund(
        id=refund_id, payment_id=payment.id, provider_id=None, idempotency_key=f"berth-refund-{refund_id}",
        amount=amount, currency=payment.currency, status=RefundStatus.REQUESTED, reason=reason[:500],
        actor=actor, failure_reason=None, created_at=now, updated_at=now,
    )  # fmt: skip


async def _tell_guest(
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


def _target(booking: Booking) -> Target:
    return Target("booking", booking.id, booking.supplier_reference)


def _unreachable() -> UnprocessableEntity:
    return UnprocessableEntity(
        "The payment provider cannot be reached just now: nothing was charged. Your booking stays held "
        "until its hold runs out; please try again in a moment"
    )


def _pending_unreachable(details: BookingDetails | None = None) -> Settlement:
    return Settlement(
        SettlementState.PENDING,
        "The payment provider cannot be reached just now, so your payment is not confirmed yet. "
        "Nothing more is charged: we confirm your booking as soon as the provider answers",
        details,
    )
