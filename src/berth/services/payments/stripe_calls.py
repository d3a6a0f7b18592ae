"""Stripe's calls, through its official library's async client (on aiohttp, never blocking the
event loop): the one module that imports `stripe`, loaded by `stripe_provider.StripeProvider`
with the first call that reaches Stripe. Every call that writes carries an idempotency key
derived from what it is for, so that a retried call never makes a second one nor acts twice (a
payment is charged once per card given: a new attempt is a new payment)."""

from __future__ import annotations

from typing import Any

import aiohttp
import stripe

from berth.services.payments.provider import (
    CardPayment,
    CardSetup,
    ProviderEvent,
    ProviderRefund,
    ProviderRefused,
    ProviderUnavailable,
    Started,
)
from berth.settings import Settings

# Calls that fail for want of an answer are tried again this many times by the library (with
# the same idempotency key) before Berth concludes nothing and tries later.
NETWORK_RETRIES = 2
# The API version Berth's calls are written for (docs/decisions.md "Card payments"): pinned, so
# that a newer library or account default never changes what a call means (`payment_method_types`
# limits a payment to cards, so that no redirecting method asks for a return URL).
API_VERSION = "2024-06-20"


def _refused(exc: stripe.StripeError) -> Exception:
    """A library error as the service knows it: an answer (declined, refused), or none."""
    if isinstance(exc, stripe.CardError):
        return ProviderRefused(exc.user_message or str(exc), declined=True)
    if isinstance(exc, stripe.InvalidRequestError | stripe.IdempotencyError):
        return ProviderRefused(exc.user_message or str(exc))
    return ProviderUnavailable(f"Stripe did not answer: {type(exc).__name__}: {exc.user_message or exc}")


def _plain(obj: Any) -> dict[str, Any]:
    """A library object as plain data (it is no dict: its fields are read so)."""
    plain: dict[str, Any] = obj.to_dict()
    return plain


def _payment(obj: Any) -> CardPayment:
    intent = _plain(obj)
    error = intent.get("last_payment_error") or None
    return CardPayment(
        id=intent["id"],
        status=intent["status"],
        amount=int(intent["amount"]),
        currency=str(intent["currency"]).upper(),
        client_secret=intent.get("client_secret") or "",
        last_error=error.get("message") if error else None,
        attempt_failed=intent["status"] == "requires_payment_method" and error is not None,
        metadata=dict(intent.get("metadata") or {}),
    )


def _setup(obj: Any) -> CardSetup:
    intent = _plain(obj)
    method = intent.get("payment_method")
    return CardSetup(
        id=intent["id"],
        status=intent["status"],
        client_secret=intent.get("client_secret") or "",
        payment_method=method if isinstance(method, str) or method is None else method["id"],
    )


def _refund(obj: Any) -> ProviderRefund:
    refund = _plain(obj)
    return ProviderRefund(
        id=refund["id"],
        status=refund.get("status") or "pending",
        amount=int(refund["amount"]),
        failure_reason=refund.get("failure_reason"),
    )


class StripeCalls:
    """`CardProvider`'s calls to Stripe (`StripeProvider` says what they do)."""

    def __init__(self, settings: Settings) -> None:
        assert settings.stripe_secret_key is not None
        secret = settings.stripe_secret_key.get_secret_value()
        base = settings.stripe_api_base.rstrip("/") if settings.stripe_api_base else None
        self._webhook_secret = (
            settings.stripe_webhook_secret.get_secret_value() if settings.stripe_webhook_secret else None
        )
        self._http = stripe.AIOHTTPClient(
            timeout=aiohttp.ClientTimeout(total=settings.stripe_timeout_seconds)
        )
        self._client = stripe.StripeClient(
            secret,
            base_addresses={"api": base} if base else None,
            http_client=self._http,
            max_network_retries=NETWORK_RETRIES,
            stripe_version=API_VERSION,
        )

    async def start(
        self,
        key: str,
        amount: int,
        currency: str,
        metadata: dict[str, str],
        email: str | None,
        name: str | None,
    ) -> Started:
        v1 = self._client.v1
        try:
            customer_params: dict[str, Any] = {"metadata": metadata}
            if email:
                customer_params["email"] = email
            if name:
                customer_params["name"] = name
            customer = await v1.customers.create_async(
                customer_params,  # type: ignore[arg-type]
                {"idempotency_key": f"{key}-customer"},
            )
            intent = await v1.payment_intents.create_async(
                {
                    "amount": amount,
                    "currency": currency.lower(),
                    "customer": customer.id,
                    "payment_method_types": ["card"],  # type: ignore[typeddict-unknown-key]
                    "metadata": metadata,
                },
                {"idempotency_key": f"{key}-payment"},
            )
            setup = await self._new_setup(customer.id, f"{key}-setup", metadata)
        except stripe.StripeError as exc:
            raise _refused(exc) from exc
        return Started(_payment(intent), customer.id, setup)

    async def _new_setup(self, customer: str, key: str, metadata: dict[str, str]) -> CardSetup:
        params: dict[str, Any] = {
            "customer": customer,
            "usage": "on_session",
            "payment_method_types": ["card"],
            "metadata": metadata,
        }
        setup = await self._client.v1.setup_intents.create_async(
            params,  # type: ignore[arg-type]
            {"idempotency_key": key},
        )
        return _setup(setup)

    async def new_setup(self, customer: str, key: str, metadata: dict[str, str]) -> CardSetup:
        try:
            return await self._new_setup(customer, key, metadata)
        except stripe.StripeError as exc:
            raise _refused(exc) from exc

    async def read_setup(self, setup_id: str) -> CardSetup:
        try:
            return _setup(await self._client.v1.setup_intents.retrieve_async(setup_id))
        except stripe.StripeError as exc:
            raise _refused(exc) from exc

    async def pay(self, payment_id: str, payment_method: str) -> CardPayment:
        intents = self._client.v1.payment_intents
        try:
            await intents.update_async(
                payment_id,
                {"payment_method": payment_method},
                {"idempotency_key": f"{payment_id}-card-{payment_method}"},
            )
            confirmed = await intents.confirm_async(
                payment_id, None, {"idempotency_key": f"{payment_id}-charge-{payment_method}"}
            )
            return _payment(confirmed)
        except stripe.StripeError as exc:
            raise _refused(exc) from exc

    async def read(self, payment_id: str) -> CardPayment:
        try:
            return _payment(await self._client.v1.payment_intents.retrieve_async(payment_id))
        except stripe.StripeError as exc:
            raise _refused(exc) from exc

    async def cancel(self, payment_id: str) -> CardPayment:
        try:
            cancelled = await self._client.v1.payment_intents.cancel_async(
                payment_id, None, {"idempotency_key": f"{payment_id}-cancel"}
            )
            return _payment(cancelled)
        except stripe.InvalidRequestError:
            # Not cancellable: it succeeded (or was cancelled) meanwhile. Say how it stands.
            return await self.read(payment_id)
        except stripe.StripeError as exc:
            raise _refused(exc) from exc

    async def refund(
        self, payment_id: str, amount: int, key: str, metadata: dict[str, str]
    ) -> ProviderRefund:
        try:
            refund = await self._client.v1.refunds.create_async(
                {"payment_intent": payment_id, "amount": amount, "metadata": metadata},
                {"idempotency_key": key},
            )
        except stripe.StripeError as exc:
            raise _refused(exc) from exc
        return _refund(refund)

    async def find_refund(self, payment_id: str, refund_ref: str) -> ProviderRefund | None:
        try:
            found = await self._client.v1.refunds.list_async({"payment_intent": payment_id, "limit": 100})
        except stripe.StripeError as exc:
            raise _refused(exc) from exc
        for refund in found.data:
            if (_plain(refund).get("metadata") or {}).get("berth_refund") == refund_ref:
                return _refund(refund)
        return None

    async def read_refund(self, refund_id: str) -> ProviderRefund:
        try:
            return _refund(await self._client.v1.refunds.retrieve_async(refund_id))
        except stripe.StripeError as exc:
            raise _refused(exc) from exc

    def event(self, payload: bytes, signature: str) -> ProviderEvent:
        if self._webhook_secret is None:
            raise ProviderRefused("BERTH_STRIPE_WEBHOOK_SECRET is not set: webhooks cannot be checked")
        try:
            event = stripe.Webhook.construct_event(payload, signature, self._webhook_secret)
        except (ValueError, stripe.SignatureVerificationError) as exc:
            raise ProviderRefused(f"The webhook's signature does not check: {exc}") from exc
        obj = _plain(event)["data"]["object"]
        kind = obj.get("object")
        payment = obj.get("id") if kind == "payment_intent" else obj.get("payment_intent")
        return ProviderEvent(id=event.id, type=event.type, payment_id=payment)

    async def close(self) -> None:
        await self._http.close_async()  # type: ignore[no-untyped-call]
