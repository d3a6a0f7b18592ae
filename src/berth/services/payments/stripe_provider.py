"""Stripe as the payments service sees it. What the shop's pages need of it (the publishable key,
Stripe.js's address, test mode) comes from settings; Stripe's library, and aiohttp under it, load
with the first call that reaches Stripe (`stripe_calls.py`): a payment started, a webhook, the
sweep finding a payment to read. A serving process whose guests pay nothing keeps neither
(issue 48: memory per worker)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.services.payments.provider import CardPayment, CardSetup, ProviderEvent, ProviderRefund, Started
from berth.settings import Settings

if TYPE_CHECKING:
    from berth.services.payments.stripe_calls import StripeCalls

STRIPE_JS = "https://js.stripe.com/v3/"


class StripeProvider:
    name = "stripe"

    def __init__(self, settings: Settings) -> None:
        assert settings.stripe_secret_key is not None
        secret = settings.stripe_secret_key.get_secret_value()
        base = settings.stripe_api_base.rstrip("/") if settings.stripe_api_base else None
        self.publishable_key = settings.stripe_publishable_key or ""
        self.test_mode = base is not None or secret.startswith("sk_test_")
        self.script_url = f"{base}/js.stripe.com/v3/" if base else STRIPE_JS
        self._settings = settings
        self._loaded: StripeCalls | None = None

    def _stripe(self) -> StripeCalls:
        if self._loaded is None:
            from berth.services.payments.stripe_calls import StripeCalls

            self._loaded = StripeCalls(self._settings)
        return self._loaded

    async def start(
        self,
        key: str,
        amount: int,
        currency: str,
        metadata: dict[str, str],
        email: str | None,
        name: str | None,
    ) -> Started:
        return await self._stripe().start(key, amount, currency, metadata, email, name)

    async def new_setup(self, customer: str, key: str, metadata: dict[str, str]) -> CardSetup:
        return await self._stripe().new_setup(customer, key, metadata)

    async def read_setup(self, setup_id: str) -> CardSetup:
        return await self._stripe().read_setup(setup_id)

    async def pay(self, payment_id: str, payment_method: str) -> CardPayment:
        return await self._stripe().pay(payment_id, payment_method)

    async def read(self, payment_id: str) -> CardPayment:
        return await self._stripe().read(payment_id)

    async def cancel(self, payment_id: str) -> CardPayment:
        return await self._stripe().cancel(payment_id)

    async def refund(
        self, payment_id: str, amount: int, key: str, metadata: dict[str, str]
    ) -> ProviderRefund:
        return await self._stripe().refund(payment_id, amount, key, metadata)

    async def find_refund(self, payment_id: str, refund_ref: str) -> ProviderRefund | None:
        return await self._stripe().find_refund(payment_id, refund_ref)

    async def read_refund(self, refund_id: str) -> ProviderRefund:
        return await self._stripe().read_refund(refund_id)

    def event(self, payload: bytes, signature: str) -> ProviderEvent:
        return self._stripe().event(payload, signature)

    async def close(self) -> None:
        if self._loaded is not None:
            await self._loaded.close()
