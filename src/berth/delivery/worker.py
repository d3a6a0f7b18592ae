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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

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
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.deliveries_repo import DELIVERED, FAILED, PENDING, SUPERSEDED, Delivery
from berth.store.faults import log_failure

if TYPE_CHECKING:  # imported by the first send (`_attempt`): most processes never send one
    import aiohttp

log = structlog.get_logger("berth.delivery")

EXCERPT_BYTES = 2048
USER_AGENT = "Berth-Webhooks/1"
RESERVED_HEADERS = {"content-type", "webhook-id", "webhook-timestamp", "webhook-signature", "user-agent"}
# A dead worker's deliveries are sent again once its lease runs out: within LEASE plus a poll.
LEASE = timedelta(seconds=6)
RENEW_EVERY_SECONDS = 2.0


REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _retry_after(response: aiohttp.ClientResponse, now: datetime) -> float | None:
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


Claimed = tuple[Delivery, list[str] | None]  # a leased delivery and its connection's signing secrets


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
        self._session: aiohttp.ClientSession | None = None  # made in the event loop, when first needed
        self._slots = settings.delivery_concurrency
        self._held: set[str] = set()  # claimed by this worker, outcome not yet recorded
        # Claims count the free slots and take them as one step: the loop's claims and the
        # refills of recorded outcomes never both count the same free slot.
        self._claiming = asyncio.Lock()
        self._refill_at = max(1, self._slots // 2)

    @property
    def lease(self) -> timedelta:
        return self._lease

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _client(self) -> aiohttp.ClientSession:
        """aiohttp, not httpx: at 20 sends at once httpx spent 1.6-1.9 ms of CPU on each request
        (its pool checks every connection for each request), aiohttp 0.07 ms (docs/decisions.md)."""
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self._timeout), trust_env=True
            )
        return self._session

    async def run(self, stop: asyncio.Event) -> None:
        """Fan out and deliver until `stop` is set; sleep when idle until woken or polled.

        Pipelined: each send runs on its own, its outcome is queued, and the queue is written
        in one transaction (everything that came in while the previous write ran), which also
        claims for the slots it frees, while the other sends are still out: neither a slow
        receiver nor the database's round trips hold the rest back. At most
        `delivery_concurrency` deliveries are claimed and not yet recorded at any time: a
        worker that dies leaves at most that many messages to be sent again."""
        outcomes: asyncio.Queue[Outcome] = asyncio.Queue()
        sends: set[asyncio.Task[None]] = set()

        def start(claimed: list[Claimed]) -> None:
            for delivery, secrets in claimed:
                send = asyncio.create_task(self._send_queued(outcomes, delivery, secrets))
                sends.add(send)
                send.add_done_callback(sends.discard)

        helpers = [
            asyncio.create_task(self._renew_held()),
            asyncio.create_task(self._record_queued(outcomes, start)),
        ]
        poll = self._settings.delivery_poll_seconds
        fanned_at = claimed_at = -poll
        try:
            while not stop.is_set():
                # Fan out when told of changes, after a fan-out that found some, or once a poll
                # (the outbox may be written by other processes); not on every freed slot.
                fan_out = self._fanout.wakeup.is_set() or time.monotonic() - fanned_at >= poll
                self._fanout.wakeup.clear()
                free = self._slots - len(self._held)
                try:
                    fanned = await self._fanout.fan_out() if fan_out else 0
                    if fan_out:
                        fanned_at = -poll if fanned else time.monotonic()
                    # Claims of their own when told of new work, when nothing is out, or once
                    # a poll (slow receivers may hold most slots); otherwise the writes of
                    # outcomes refill the slots they free.
                    claimed: list[Claimed] = []
                    if fan_out or not self._held or time.monotonic() - claimed_at >= poll:
                        claimed = await self._claim()
                        claimed_at = time.monotonic()
                except Exception as exc:  # keep the loop alive; what failed is retried on the next tick
                    log_failure(log, "delivery loop failed", exc)
                    fanned, claimed = 0, []
                start(claimed)
                if not (fanned or len(claimed) == free > 0):
                    await self._idle(stop)
            if sends:  # stopping: the sends out are finished and recorded, not dropped
                await asyncio.wait(sends)
            await outcomes.join()
        finally:
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    async def deliver_due(self) -> int:
        """One batch from start to end: claim what is due (up to the free slots), send it all
        at once, record every outcome in one transaction. Returns how many were claimed."""
        claimed = await self._claim()
        if not claimed:
            return 0
        renewal = asyncio.create_task(self._renew_held())
        try:
            outcomes = await asyncio.gather(*(self._attempt(d, secrets) for d, secrets in claimed))
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
        await self._record(outcomes)
        return len(claimed)

    async def _idle(self, stop: asyncio.Event) -> None:
        """Until stopped, woken by new work, or the poll interval passed."""
        waiters = [asyncio.create_task(event.wait()) for event in (stop, self._fanout.wakeup)]
        await asyncio.wait(
            waiters, timeout=self._settings.delivery_poll_seconds, return_when=asyncio.FIRST_COMPLETED
        )
        for waiter in waiters:
            waiter.cancel()

    async def _claim(self) -> list[Claimed]:
        """Lease due deliveries to this worker, up to its free slots (see `_claim_in`)."""
        async with self._claiming:
            limit = self._slots - len(self._held)
            if limit <= 0:
                return []
            async with self._db.transaction(write=True) as conn:
                claimed = await self._claim_in(conn, limit)
            self._held.update(delivery.id for delivery, _ in claimed)
            return claimed

    async def _claim_in(self, conn: DbConnection, limit: int) -> list[Claimed]:
        """Up to `limit` due deliveries leased to this worker, each with its connection's live
        signing secrets (None when the key cannot open them). The caller counts them as held
        once the transaction has committed."""
        now = self._clock()
        claimed = await deliveries_repo.claim_due(conn, now, now + self._lease, limit)
        secrets = {
            connection_id: await self._secrets_of(conn, connection_id, now)
            for connection_id in {d.connection_id for d in claimed}
        }
        return [(d, secrets[d.connection_id]) for d in claimed]

    async def _send_queued(
        self, outcomes: asyncio.Queue[Outcome], delivery: Delivery, secrets: list[str] | None
    ) -> None:
        outcomes.put_nowait(await self._attempt(delivery, secrets))

    async def _record_queued(
        self, outcomes: asyncio.Queue[Outcome], start: Callable[[list[Claimed]], None]
    ) -> None:
        """Write what has come in since the last write, and refill the freed slots in the same
        transaction once half of them are free: one write turn for both."""
        while True:
            batch = [await outcomes.get()]
            while not outcomes.empty():
                batch.append(outcomes.get_nowait())
            try:
                start(await self._record(batch, refill=True))
            finally:
                for _ in batch:
                    outcomes.task_done()

    async def _record(self, outcomes: Sequence[Outcome], *, refill: bool = False) -> list[Claimed]:
        """Write the attempts and their deliveries' new states in one transaction and free
        their slots; with `refill`, claim for the free slots too once half of them are free.
        Should the write fail, the deliveries stay leased until the lease runs out and are
        sent again then: at least once."""
        recorded = {outcome.delivery.id for outcome in outcomes}
        claimed: list[Claimed] = []
        async with self._claiming:
            free = self._slots - len(self._held - recorded)
            try:
                async with self._db.transaction(write=True) as conn:
                    finished = [await self._judge(conn, outcome) for outcome in outcomes]
                    await deliveries_repo.record_outcomes(conn, finished)
                    if refill and free >= self._refill_at:
                        claimed = await self._claim_in(conn, free)
            except Exception as exc:
                log_failure(log, "recording delivery outcomes failed", exc, deliveries=len(outcomes))
                return []
            finally:
                self._held -= recorded
            self._held.update(delivery.id for delivery, _ in claimed)
        for outcome, done in zip(outcomes, finished, strict=True):
            self._log(outcome, done)
        return claimed

    async def _renew_held(self) -> None:
        """Keep what this worker holds leased while it is being sent (a send may take the
        whole timeout, longer than the lease). A renewal that fails is retried at the next
        beat; should the lease run out meanwhile, another worker may send a message again:
        at least once."""
        while True:
            await asyncio.sleep(RENEW_EVERY_SECONDS)
            if not self._held:
                continue
            try:
                async with self._db.transaction(write=True) as conn:
                    await deliveries_repo.renew_leases(conn, list(self._held), self._clock() + self._lease)
            except Exception as exc:
                log_failure(log, "delivery lease renewal failed", exc)

    async def _secrets_of(self, conn: DbConnection, connection_id: str, now: datetime) -> list[str] | None:
        """The connection's live signing secrets, opened; None when the key cannot open them."""
        try:
            return await webhooks_repo.live_signing_secrets(conn, self._box, connection_id, now)
        except SealError:
            return None

    async def _attempt(self, delivery: Delivery, secrets: list[str] | None) -> Outcome:
        import aiohttp  # here, not at the top: a server that never sends a webhook never loads it

        started = time.perf_counter()
        outcome = Outcome(delivery)
        if secrets is None:  # never send unsigned: record it and retry once the key is fixed
            outcome.error = "the connection's signing secrets cannot be opened: check BERTH_SECRET_KEY"
            return outcome
        try:
            # One deadline for the whole attempt: a client's timeouts may apply to each read, so a
            # receiver that trickles a byte at a time would otherwise hold the send (and
            # outlive the lease).
            async with asyncio.timeout(self._timeout):
                await self._post(delivery, secrets, outcome)
        except OctoError as exc:
            outcome.error = exc.message
        except TimeoutError:
            if outcome.status_code is None:  # else: the body was still coming; see _post
                outcome.error = f"no answer within {self._timeout:g} s"
        except aiohttp.ClientError as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a slot must never be lost to an unforeseen failure
            log.exception("delivery attempt failed", delivery=delivery.id)
            outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.latency_ms = round((time.perf_counter() - started) * 1000)
        return outcome

    async def _post(self, delivery: Delivery, secrets: list[str], outcome: Outcome) -> None:
        import aiohttp

        await check_delivery_url(delivery.url, self._settings.webhook_allow_private_targets)
        body, headers = self._signed(delivery, secrets)
        async with self._client().post(
            delivery.url, data=body, headers=headers, allow_redirects=False
        ) as response:
            outcome.status_code = response.status
            outcome.retry_after = _retry_after(response, self._clock())
            if response.status in REDIRECTS and "location" in response.headers:
                location = redact_url(response.headers["location"])
                outcome.error = f"redirected to {location}; redirects are not followed"
            # The status decides the attempt. Of the body only the excerpt is read (an answer may
            # be of any size), and a body cut short (closed, stalled, past the deadline) only
            # shortens the excerpt.
            excerpt = b""
            outcome.excerpt = ""
            with contextlib.suppress(aiohttp.ClientError):
                while len(excerpt) < EXCERPT_BYTES:
                    chunk = await response.content.read(EXCERPT_BYTES - len(excerpt))
                    if not chunk:
                        break
                    excerpt += chunk
                    outcome.excerpt = excerpt.decode("utf-8", "replace")

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
