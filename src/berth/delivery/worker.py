"""The delivery worker: claims due deliveries, signs them (Standard Webhooks), POSTs them,
records every attempt and schedules retries.

At-least-once: a delivery is marked sent only after its receiver answered 2XX. A claimed
batch is leased for a few seconds and the lease is renewed while its sends are in flight, so
no two workers send one message at once; a worker that dies mid-send stops renewing, its lease
runs out within LEASE, and another worker sends those messages again with the same message id.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

import httpx
import orjson
import structlog
from standardwebhooks.webhooks import Webhook as Signer

from berth.delivery.fanout import WebhookFanout
from berth.domain.errors import OctoError
from berth.domain.sealing import SealError, SecretBox
from berth.domain.webhooks import next_retry_delay, parse_schedule
from berth.logs import info_logged, redact_url
from berth.services.clock import Clock
from berth.services.targets import check_delivery_url
from berth.settings import Settings
from berth.store import deliveries_repo, webhooks_repo
from berth.store.database import Database, DbConnection
from berth.store.deliveries_repo import DELIVERED, FAILED, PENDING, SUPERSEDED, Delivery

log = structlog.get_logger("berth.delivery")

EXCERPT_BYTES = 2048
USER_AGENT = "Berth-Webhooks/1"
RESERVED_HEADERS = {"content-type", "webhook-id", "webhook-timestamp", "webhook-signature", "user-agent"}
# A dead worker's deliveries are sent again once its lease runs out: within LEASE plus a poll.
LEASE = timedelta(seconds=6)
RENEW_EVERY_SECONDS = 2.0


def _retry_after(response: httpx.Response, now: datetime) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        try:
            return max((parsedate_to_datetime(value) - now).total_seconds(), 0.0)
        except (TypeError, ValueError):
            return None


@dataclass
class Outcome:
    """What one attempt at a delivery came to."""

    delivery: Delivery
    status_code: int | None = None
    error: str | None = None
    excerpt: str | None = None
    retry_after: float | None = None
    latency_ms: int = 0


class DeliveryWorker:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        fanout: WebhookFanout,
        client: httpx.AsyncClient | None = None,
        *,
        box: SecretBox | None = None,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._fanout = fanout
        self._box = box or settings.secret_box()
        self._schedule = parse_schedule(settings.retry_schedule)
        self._timeout = settings.delivery_timeout_seconds
        self._lease = LEASE
        self._client = client or httpx.AsyncClient(timeout=self._timeout, follow_redirects=False)
        self._concurrency = asyncio.Semaphore(settings.delivery_concurrency)

    @property
    def lease(self) -> timedelta:
        return self._lease

    async def close(self) -> None:
        await self._client.aclose()

    async def run(self, stop: asyncio.Event) -> None:
        """Fan out and deliver until `stop` is set; sleep when idle until woken or polled."""
        wakeup = self._fanout.wakeup
        while not stop.is_set():
            try:
                busy = await self._fanout.fan_out() + await self.deliver_due()
            except Exception:  # keep the loop alive; the failed batch is retried on the next tick
                log.exception("delivery loop failed")
                busy = 0
            if busy:
                continue
            wakeup.clear()
            waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(wakeup.wait())]
            await asyncio.wait(
                waiters, timeout=self._settings.delivery_poll_seconds, return_when=asyncio.FIRST_COMPLETED
            )
            for waiter in waiters:
                waiter.cancel()

    async def deliver_due(self) -> int:
        """Claim a batch, send it concurrently, and record every outcome in one transaction.
        A batch is as large as the concurrency, so a worker that dies mid-batch leaves at most
        that many messages to be sent again (receivers de-duplicate on `webhook-id`)."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            claimed = await deliveries_repo.claim_due(
                conn, now, now + self._lease, self._settings.delivery_concurrency
            )
        if not claimed:
            return 0
        async with self._db.transaction(write=False) as conn:
            secrets = {
                connection_id: await self._secrets_of(conn, connection_id, now)
                for connection_id in {d.connection_id for d in claimed}
            }
        renewal = asyncio.create_task(self._renew_leases([d.id for d in claimed]))
        try:
            outcomes = await asyncio.gather(*(self._send(d, secrets[d.connection_id]) for d in claimed))
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
        async with self._db.transaction(write=True) as conn:
            finished = [await self._judge(conn, outcome) for outcome in outcomes]
            await deliveries_repo.record_outcomes(conn, finished)
        for outcome, done in zip(outcomes, finished, strict=True):
            self._log(outcome, done)
        return len(claimed)

    async def _renew_leases(self, delivery_ids: list[str]) -> None:
        """Keep the batch leased while it is being sent (a send may take the whole timeout,
        longer than the lease). A renewal that fails is retried at the next beat; should the
        lease run out meanwhile, another worker may send a message again: at least once."""
        while True:
            await asyncio.sleep(RENEW_EVERY_SECONDS)
            try:
                async with self._db.transaction(write=True) as conn:
                    await deliveries_repo.renew_leases(conn, delivery_ids, self._clock() + self._lease)
            except Exception:
                log.exception("delivery lease renewal failed")

    async def _secrets_of(self, conn: DbConnection, connection_id: str, now: datetime) -> list[str] | None:
        """The connection's live signing secrets, opened; None when the key cannot open them."""
        try:
            return await webhooks_repo.live_signing_secrets(conn, self._box, connection_id, now)
        except SealError:
            return None

    async def _send(self, delivery: Delivery, secrets: list[str] | None) -> Outcome:
        async with self._concurrency:
            started = time.perf_counter()
            outcome = Outcome(delivery)
            if secrets is None:  # never send unsigned: record it and retry once the key is fixed
                outcome.error = "the connection's signing secrets cannot be opened: check BERTH_SECRET_KEY"
                return outcome
            try:
                # One deadline for the whole attempt: httpx's timeouts apply to each read, so a
                # receiver that trickles a byte at a time would otherwise hold the send (and
                # outlive the lease).
                async with asyncio.timeout(self._timeout):
                    await self._post(delivery, secrets, outcome)
            except OctoError as exc:
                outcome.error = exc.message
            except (TimeoutError, httpx.TimeoutException):
                if outcome.status_code is None:  # else: the body was still coming; see _post
                    outcome.error = f"no answer within {self._timeout:g} s"
            except httpx.HTTPError as exc:
                outcome.error = f"{type(exc).__name__}: {exc}"
            outcome.latency_ms = round((time.perf_counter() - started) * 1000)
            return outcome

    async def _post(self, delivery: Delivery, secrets: list[str], outcome: Outcome) -> None:
        await check_delivery_url(delivery.url, self._settings.webhook_allow_private_targets)
        body, headers = self._signed(delivery, secrets)
        async with self._client.stream("POST", delivery.url, content=body, headers=headers) as response:
            outcome.status_code = response.status_code
            outcome.retry_after = _retry_after(response, self._clock())
            if response.is_redirect:
                location = redact_url(response.headers.get("location", "?"))
                outcome.error = f"redirected to {location}; redirects are not followed"
            # The status decides the attempt. Of the body only the excerpt is read (an answer may
            # be of any size), and a body cut short (closed, stalled, past the deadline) only
            # shortens the excerpt.
            excerpt = b""
            outcome.excerpt = ""
            with contextlib.suppress(httpx.HTTPError):
                async for chunk in response.aiter_bytes():
                    excerpt = (excerpt + chunk)[:EXCERPT_BYTES]
                    outcome.excerpt = excerpt.decode("utf-8", "replace")
                    if len(excerpt) == EXCERPT_BYTES:
                        break

    def _signed(self, delivery: Delivery, secrets: list[str]) -> tuple[bytes, dict[str, str]]:
        now = self._clock()
        body = orjson.dumps(delivery.payload)
        text = body.decode()
        signatures = " ".join(Signer(secret).sign(delivery.id, now, text) for secret in secrets)
        headers = {k: v for k, v in delivery.headers.items() if k.lower() not in RESERVED_HEADERS}
        headers.update(
            {
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "webhook-id": delivery.id,
                "webhook-timestamp": str(int(now.timestamp())),
            }
        )
        if signatures:
            headers["webhook-signature"] = signatures
        return body, headers

    async def _judge(self, conn: DbConnection, outcome: Outcome) -> deliveries_repo.Finished:
        """What an attempt leaves its delivery in; a 410 from a webhook's receiver disables it."""
        delivery, status_code, error = outcome.delivery, outcome.status_code, outcome.error
        now = self._clock()
        attempts = delivery.attempts + 1
        ok = error is None and status_code is not None and 200 <= status_code < 300
        gone = status_code == 410 and delivery.kind == "webhook"
        next_at: datetime | None = None
        if ok:
            status = DELIVERED
        elif gone or not (delivery.retry_on_error or delivery.retry_forever):
            status = FAILED
        else:
            delay = next_retry_delay(
                self._schedule, attempts, random.random(), outcome.retry_after, delivery.retry_forever
            )
            status = FAILED if delay is None else PENDING
            next_at = None if delay is None else now + timedelta(seconds=delay)
        if status == PENDING and delivery.retry_forever and await deliveries_repo.has_newer(conn, delivery):
            status, next_at = SUPERSEDED, None  # a newer message for the subject waits behind this one
        if gone and delivery.webhook_id is not None:
            await webhooks_repo.disable_webhook(
                conn, delivery.webhook_id, now, "the receiver answered 410 Gone"
            )
        return deliveries_repo.Finished(
            delivery.id, now, status_code, error, outcome.latency_ms, outcome.excerpt,
            status, attempts, next_at, now if ok else None,
        )  # fmt: skip

    @staticmethod
    def _log(outcome: Outcome, done: deliveries_repo.Finished) -> None:
        delivery, error = outcome.delivery, outcome.error
        if info_logged():
            log.info(
                "delivery attempt",
                delivery=delivery.id,
                url=redact_url(delivery.url),
                status_code=done.status_code,
                error=error.replace(delivery.url, redact_url(delivery.url)) if error else None,
                outcome=done.status,
                attempt=done.attempts,
            )
