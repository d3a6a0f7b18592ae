"""mail-live (issue 41 §5): how long a guest waits for the receipt while bookings keep coming.

Berth runs as the bench starts it (`berth serve --demo --workers N`, its in-process mail worker
on), with BERTH_SMTP_URL naming an SMTP sink on loopback in the bench's own process (aiosmtpd,
answering 250). Booking flows (hold one adult's visit to the demo museum, then confirm it: the
receipt attaches its one-page PDF ticket) start at a fixed rate, RATE a second for SECONDS
seconds, whatever the answers' pace (an open loop, as resellers' traffic is):

1. **plain**: the flows without `emailReceipt`: what the server does at that rate alone;
2. **receipt**: the same with `"emailReceipt": true`, each guest with an address of their own,
   so that the sink knows whose receipt arrived. A receipt's wait runs from its confirmation's
   answer (the booking and its outbox row committed) to the sink's receipt of the email. After
   the last flow the bench waits up to DRAIN_SECONDS for the last receipt.

Reported: the receipts' wait p50 / p95 / max (targets RECEIPT_P95_S and RECEIPT_MAX_S), the
emails received of those expected, and each phase's flows/s (flows answered ÷ first start to
last answer) and flow latency p50 / p99; the ratio is receipt flows/s ÷ plain flows/s.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx
from aiosmtpd.smtp import SMTP, Envelope, Session
from deliveries import museum_visit, open_slots
from servers import BenchError

MAIL_LIVE = "mail-live"
RATE = 25.0  # flows started a second
SECONDS = 30  # per phase
DRAIN_SECONDS = 60  # after the last receipt flow, the longest the bench waits for its email
RECEIPT_P95_S = 10.0
RECEIPT_MAX_S = 20.0
PER_DAY = 250  # visits booked per open museum day (its capacity is 300)
FIRST_DAY = 200  # days ahead: clear of the days other routes book
WARMUP_FLOWS = 25  # with receipts, before the phases: the worker's first PDF and SMTP connection
RESELLER = {"Authorization": "Bearer demo-reseller-a"}


class Inbox:
    """An SMTP handler that takes every message and notes when each recipient's first came."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.changed = asyncio.Event()

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        now = time.monotonic()
        for recipient in envelope.rcpt_tos:
            self.arrived.setdefault(recipient.lower(), now)
        self.changed.set()
        return "250 OK"

    async def wait_for(self, addresses: Sequence[str], seconds: float) -> None:
        """Until every one of `addresses` has had its email, or `seconds` have passed."""
        deadline = time.monotonic() + seconds
        while any(a not in self.arrived for a in addresses) and time.monotonic() < deadline:
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=max(deadline - time.monotonic(), 0))


@contextlib.asynccontextmanager
async def smtp_inbox(inbox: Inbox) -> AsyncIterator[str]:
    """`inbox` served on a free loopback port; yields the BERTH_SMTP_URL naming it."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(inbox, hostname="sink.bench"), "127.0.0.1", 0)
    try:
        yield f"smtp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


@dataclass
class Phase:
    """One paced phase: what each flow took, and which failed."""

    receipt: bool
    started: float = 0.0
    answered: list[tuple[str, float, float]] = field(default_factory=list)  # address, start, answer
    failures: list[str] = field(default_factory=list)

    @property
    def flows_per_s(self) -> float:
        if not self.answered:
            return 0.0
        return len(self.answered) / (max(end for _, _, end in self.answered) - self.started)

    def latency_ms(self, share: float) -> float | None:
        spans = [(end - start) * 1000 for _, start, end in self.answered]
        return round(_percentile(spans, share), 1) if spans else None

    def as_json(self) -> dict[str, Any]:
        return {
            "email_receipt": self.receipt,
            "flows_answered": len(self.answered),
            "failures": len(self.failures),
            "failure_examples": self.failures[:5],
            "flows_per_s": round(self.flows_per_s, 2),
            "flow_p50_ms": self.latency_ms(0.5),
            "flow_p99_ms": self.latency_ms(0.99),
        }


@dataclass
class MailLive:
    """The mail-live route of one database mode."""

    mode: str
    plain: Phase | None = None
    receipt: Phase | None = None
    waits_s: list[float] = field(default_factory=list)  # confirmation answered -> email received
    expected: int = 0
    error: str | None = None

    @property
    def received(self) -> int:
        return len(self.waits_s)

    def wait(self, share: float) -> float | None:
        return round(_percentile(self.waits_s, share), 2) if self.waits_s else None

    @property
    def ratio(self) -> float | None:
        if self.plain is None or self.receipt is None or not self.plain.flows_per_s:
            return None
        return round(self.receipt.flows_per_s / self.plain.flows_per_s, 3)

    @property
    def met(self) -> bool:
        p95, worst = self.wait(0.95), self.wait(1.0)
        return (
            self.healthy
            and p95 is not None
            and worst is not None
            and p95 <= RECEIPT_P95_S
            and worst <= RECEIPT_MAX_S
        )

    @property
    def healthy(self) -> bool:
        phases = [p for p in (self.plain, self.receipt) if p is not None]
        return (
            self.error is None
            and len(phases) == 2
            and not any(p.failures for p in phases)
            and self.received == self.expected
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "route": MAIL_LIVE,
            "rate_per_s": RATE,
            "seconds": SECONDS,
            "plain": self.plain.as_json() if self.plain else None,
            "receipt": self.receipt.as_json() if self.receipt else None,
            "ratio": self.ratio,
            "emails_expected": self.expected,
            "emails_received": self.received,
            "wait_p50_s": self.wait(0.5),
            "wait_p95_s": self.wait(0.95),
            "wait_max_s": self.wait(1.0),
            "targets": {"wait_p95_s": RECEIPT_P95_S, "wait_max_s": RECEIPT_MAX_S},
            "met": self.met,
            "error": self.error,
        }


class MuseumDays:
    """The museum's open days from FIRST_DAY on, handed out PER_DAY visits at a time."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client
        self._next_day = FIRST_DAY
        self._free: list[str] = []

    async def take(self, count: int) -> list[str]:
        while len(self._free) < count:
            days = await open_slots(self._client, (count - len(self._free) + PER_DAY - 1) // PER_DAY,
                                    self._next_day)  # fmt: skip
            self._next_day += 2 * len(days) + 3  # past the ones found (closed days between)
            for slot in days:
                self._free.extend([slot] * PER_DAY)
        taken, self._free = self._free[:count], self._free[count:]
        return taken


async def paced(session: aiohttp.ClientSession, slots: Sequence[str], receipt: bool) -> Phase:
    """One flow per slot, the i-th started at i / RATE seconds, each as soon as its time comes."""
    phase = Phase(receipt)
    tag = uuid.uuid4().hex[:8]

    async def one(index: int, slot: str) -> None:
        await asyncio.sleep(max(phase.started + index / RATE - time.monotonic(), 0))
        body = museum_visit(slot)
        address = f"guest-{tag}-{index}@guests.example.com"
        contact = {"firstName": "Live", "lastName": f"Guest {index}", "emailAddress": address}
        confirm = {"contact": contact, **({"emailReceipt": True} if receipt else {})}
        started = time.monotonic()
        try:
            async with session.post("/octo/bookings", json=body) as held:
                if held.status != 200:
                    phase.failures.append(f"reserve {held.status}: {(await held.text())[:200]}")
                    return
                await held.read()
            async with session.post(f"/octo/bookings/{body['uuid']}/confirm", json=confirm) as done:
                if done.status != 200:
                    phase.failures.append(f"confirm {done.status}: {(await done.text())[:200]}")
                    return
                await done.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            phase.failures.append(f"{type(exc).__name__}: {exc}")
            return
        phase.answered.append((address, started, time.monotonic()))

    phase.started = time.monotonic()
    await asyncio.gather(*(one(index, slot) for index, slot in enumerate(slots)))
    return phase


async def run_mail_live(mode: str, base_url: str, inbox: Inbox) -> MailLive:
    """The two phases against Berth at `base_url`, whose BERTH_SMTP_URL names `inbox`."""
    outcome = MailLive(mode)
    try:
        async with (
            httpx.AsyncClient(base_url=base_url, timeout=60, headers=RESELLER) as client,
            aiohttp.ClientSession(
                base_url=base_url,
                headers=RESELLER,
                timeout=aiohttp.ClientTimeout(total=60),
                connector=aiohttp.TCPConnector(limit=256),
            ) as session,
        ):
            days = MuseumDays(client)
            count = int(RATE * SECONDS)
            warm = await paced(session, await days.take(WARMUP_FLOWS), True)
            await inbox.wait_for([address for address, _, _ in warm.answered], DRAIN_SECONDS)
            outcome.plain = await paced(session, await days.take(count), False)
            receipt = outcome.receipt = await paced(session, await days.take(count), True)
            addresses = [address for address, _, _ in receipt.answered]
            outcome.expected = len(addresses)
            await inbox.wait_for(addresses, DRAIN_SECONDS)
            outcome.waits_s = [
                inbox.arrived[address] - answered
                for address, _, answered in receipt.answered
                if address in inbox.arrived
            ]
    except (BenchError, httpx.HTTPError, aiohttp.ClientError) as exc:
        outcome.error = f"{type(exc).__name__}: {exc}"
    return outcome


def summary_line(outcome: MailLive) -> str:
    """One line of the run's report for the route of one mode."""
    if outcome.error is not None:
        return f"{outcome.mode}: {MAIL_LIVE} failed: {outcome.error}"
    plain, receipt = outcome.plain, outcome.receipt
    assert plain is not None and receipt is not None
    failures = len(plain.failures) + len(receipt.failures)
    verdict = "met" if outcome.met else "not met"
    return (
        f"{outcome.mode}: {MAIL_LIVE} at {RATE:g} flows/s for {SECONDS} s · receipts {outcome.received}/"
        f"{outcome.expected}, confirmed → received p50 {outcome.wait(0.5)} s, p95 {outcome.wait(0.95)} s, "
        f"max {outcome.wait(1.0)} s (target p95 ≤ {RECEIPT_P95_S:g} s, max ≤ {RECEIPT_MAX_S:g} s: {verdict}) · "
        f"flows/s with receipts {receipt.flows_per_s:.1f} (p50 {receipt.latency_ms(0.5)} ms, "
        f"p99 {receipt.latency_ms(0.99)} ms), plain {plain.flows_per_s:.1f} (p50 {plain.latency_ms(0.5)} ms, "
        f"p99 {plain.latency_ms(0.99)} ms), ratio {outcome.ratio}"
        + (f" · {failures} flow(s) failed: {(plain.failures + receipt.failures)[0]}" if failures else "")
    )
