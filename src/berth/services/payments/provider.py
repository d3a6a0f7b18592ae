"""What the payments service asks of a card payment provider: a small interface a second
provider could implement. Today Stripe implements it (`stripe_provider.py`; `stripe_calls.py`
is the one module that imports Stripe's library)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class ProviderUnavailable(Exception):
    """The provider did not answer (network, timeout, its own failure): nothing is known of
    what was asked, so nothing is concluded; the same question is asked again later."""


class ProviderRefused(Exception):
    """The provider answered no: a card declined, a request it will not carry out. `message`
    is the provider's own words, fit to show a guest."""

    def __init__(self, message: str, *, declined: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.declined = declined


@dataclass(frozen=True)
class CardPayment:
    """A provider's payment as the provider says it stands now."""

    id: str
    status: str  # the provider's own word (Stripe's PaymentIntent statuses)
    amount: int
    currency: str  # lower case, as Stripe answers
    client_secret: str
    last_error: str | None = None
    # Whether an attempt of this payment failed and left it waiting for another card.
    attempt_failed: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CardSetup:
    """Where the guest's browser gives its card to the provider (Stripe's SetupIntent)."""

    id: str
    status: str
    client_secret: str
    payment_method: str | None


@dataclass(frozen=True)
class Started:
    payment: CardPayment
    customer: str
    setup: CardSetup


@dataclass(frozen=True)
class ProviderRefund:
    id: str
    status: str  # succeeded, pending, requires_action, failed, canceled
    amount: int
    failure_reason: str | None = None


@dataclass(frozen=True)
class ProviderEvent:
    """A verified notification from the provider: its id, type and the id of the payment (or
    refund's payment) it is about."""

    id: str
    type: str
    payment_id: str | None


class CardProvider(Protocol):
    name: str
    publishable_key: str
    test_mode: bool
    script_url: str  # the provider's browser script (Stripe.js)

    async def start(
        self,
        key: str,
        amount: int,
        currency: str,
        metadata: dict[str, str],
        email: str | None,
        name: str | None,
    ) -> Started:
        """A new payment of `amount` for a guest, and where the guest's browser gives its card.
        `key` makes retried calls answer the same objects."""

    async def new_setup(self, customer: str, key: str, metadata: dict[str, str]) -> CardSetup: ...

    async def read_setup(self, setup_id: str) -> CardSetup: ...

    async def pay(self, payment_id: str, payment_method: str) -> CardPayment:
        """Charge the payment with the card given: answers the payment as it then stands (it
        may want 3-D Secure); raises ProviderRefused when the card is declined."""

    async def read(self, payment_id: str) -> CardPayment: ...

    async def cancel(self, payment_id: str) -> CardPayment:
        """Give up a payment that took nothing; answers it as it stands (a payment that
        succeeded meanwhile is answered succeeded, not cancelled)."""

    async def refund(
        self, payment_id: str, amount: int, key: str, metadata: dict[str, str]
    ) -> ProviderRefund: ...

    async def find_refund(self, payment_id: str, refund_ref: str) -> ProviderRefund | None:
        """The refund of `payment_id` made for the ledger's refund `refund_ref`, if the
        provider has one (a crash may have come between asking and writing its answer down)."""

    async def read_refund(self, refund_id: str) -> ProviderRefund: ...

    def event(self, payload: bytes, signature: str) -> ProviderEvent:
        """A notification's content once its signature is checked; raises ProviderRefused."""

    async def close(self) -> None: ...
