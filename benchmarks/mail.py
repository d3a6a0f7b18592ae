"""Guests' emails: what `emailReceipt: true` costs a booking flow, and the mail worker's
throughput to an SMTP server on loopback.

`berth serve --demo` with BERTH_SMTP_URL naming an SMTP sink on loopback (aiosmtpd in this
process). The flows book the bench cruise (codes only), or with --tickets the demo museum, whose
receipts attach its PDF ticket. Rounds alternate:
N booking flows (reserve, then confirm: `booking-flow`) without `emailReceipt`, then N with it,
C flows at a time; each round's flows/s is counted from the first reservation to the last
confirmation. The ratio is the median of the receipt rounds over the median of the plain ones.

Each mode runs twice. "queued": the server runs no worker (BERTH_RUN_WORKER=false), so the
rounds measure the booking's own cost of `emailReceipt` (the outbox row); the receipts wait, and
then one `berth worker` sends that backlog to the sink: its rate (first email received to last)
is the mail worker's throughput. "live": the server's own worker sends while the bookings come,
as `berth serve` runs by default, on the same CPUs.

    .venv/bin/python benchmarks/mail.py [--flows 300] [--rounds 3] [--at-once 16] [--workers 2] [--tickets]
    BERTH_BENCH_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test ... (adds PostgreSQL mode)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from aiosmtpd.smtp import SMTP, Envelope, Session
from deliveries import BIN, GUEST, RESELLER, ROOT, berth_env, museum_visit, open_slots
from servers import BenchError, ServerProcess, free_port, postgres_database, sqlite_database

from routes import BenchContext, _cruise_departures

PER_DAY = 250  # museum visits booked per open day
CRUISE_PREFIX = "cruise:"  # marks the bench cruise's slots in a round's list


class Sink:
    """An SMTP server's handler that takes every message and notes when each arrived."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []
        self.expected = 0
        self.all_in = asyncio.Event()

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.arrivals.append(time.monotonic())
        if self.expected and len(self.arrivals) >= self.expected:
            self.all_in.set()
        return "250 OK"


@contextlib.asynccontextmanager
async def smtp_sink(sink: Sink) -> AsyncIterator[int]:
    """`sink` served on a free loopback port; yields the port."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(sink, hostname="sink.bench"), "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


class Slots:
    """The museum's open days from `first_day` on, handed out PER_DAY reservations at a time."""

    def __init__(self, client: httpx.AsyncClient, first_day: int) -> None:
        self._client = client
        self._next_day = first_day
        self._free: list[str] = []

    async def take(self, count: int) -> list[str]:
        while len(self._free) < count:
            days = await open_slots(self._client, (count + PER_DAY - 1) // PER_DAY, self._next_day)
            self._next_day += 2 * len(days) + 3  # past the ones found (closed days between)
            for slot in days:
                self._free.extend([slot] * PER_DAY)
        taken, self._free = self._free[:count], self._free[count:]
        return taken


def cruise_trip(availability_id: str) -> dict[str, Any]:
    """A reservation of one adult on the bench cruise (codes only: no PDF tickets)."""
    return {**museum_visit(availability_id), "productId": "bench-cruise"}


class CruiseSlots:
    """The bench cruise's departure in three days (a million places): every flow books it."""

    def __init__(self, departure: str) -> None:
        self._departure = departure

    async def take(self, count: int) -> list[str]:
        return [self._departure] * count


async def flows(session: aiohttp.ClientSession, slots: list[str], receipt: bool, at_once: int) -> float:
    """Reserve and confirm one booking per slot, `at_once` flows at a time; flows/s."""
    gate = asyncio.Semaphore(at_once)
    confirm = {"contact": GUEST, **({"emailReceipt": True} if receipt else {})}

    async def one(slot: str) -> None:
        body = (
            cruise_trip(slot.removeprefix(CRUISE_PREFIX))
            if slot.startswith(CRUISE_PREFIX)
            else museum_visit(slot)
        )
        async with gate:
            async with session.post("/octo/bookings", json=body) as held:
                held.raise_for_status()
                await held.read()
            async with session.post(f"/octo/bookings/{body['uuid']}/confirm", json=confirm) as done:
                done.raise_for_status()
                await done.read()

    started = time.monotonic()
    await asyncio.gather(*(one(slot) for slot in slots))
    return len(slots) / (time.monotonic() - started)


async def measure(
    mode: str,
    database_url: str,
    count: int,
    rounds: int,
    at_once: int,
    workers: int,
    live: bool,
    workdir: Path,
    tickets: bool,
) -> dict[str, Any]:
    """Alternating rounds of flows without and with `emailReceipt`. `live`: the server's own
    worker sends the emails meanwhile (as `berth serve` runs by default); otherwise they wait
    in the outbox, and one `berth worker` then sends that backlog: its throughput."""
    sink = Sink()
    port = free_port()
    async with smtp_sink(sink) as smtp_port:
        extra = {"BERTH_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}"}
        if not live:
            extra["BERTH_RUN_WORKER"] = "false"
        env = berth_env(database_url, port, **extra)
        label = "live" if live else "queued"
        berth = ServerProcess(
            f"berth ({mode}, {label})",
            [str(BIN / "berth"), "serve", "--demo", "--workers", str(workers), "--port", str(port)],
            env, port, workdir / f"mail-{mode}-{label}.log",
        )  # fmt: skip
        berth.start()
        try:
            await berth.wait_healthy("/healthz")
            async with (
                httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client,
                aiohttp.ClientSession(base_url=berth.base_url, headers=RESELLER) as session,
            ):
                slots: Slots | CruiseSlots
                if tickets:  # the demo museum: each receipt attaches its PDF ticket
                    slots = Slots(client, first_day=3 if live else 400)
                else:
                    ctx = BenchContext(mode, berth.base_url, database_url, workdir, client)
                    (departure,) = await _cruise_departures(ctx, 3, 3)
                    slots = CruiseSlots(CRUISE_PREFIX + departure)
                await flows(session, await slots.take(count // 3), False, at_once)  # warm-up
                plain: list[float] = []
                receipt: list[float] = []
                for _ in range(rounds):
                    plain.append(await flows(session, await slots.take(count), False, at_once))
                    receipt.append(await flows(session, await slots.take(count), True, at_once))
        finally:
            berth.stop()
        sink.expected = count * rounds
        throughput = None
        if not live:
            worker = ServerProcess(
                f"berth worker ({mode})",
                [str(BIN / "berth"), "worker"],
                env,
                0,
                workdir / f"mail-worker-{mode}.log",
            )
            worker.start()
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(sink.all_in.wait(), timeout=300)
            finally:
                worker.stop()
            times = sorted(sink.arrivals)
            span = times[-1] - times[0] if len(times) > 1 else 0.0
            throughput = round((len(times) - 1) / span, 1) if span else None
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sink.all_in.wait(), timeout=120)
    return {
        "mode": mode,
        "sending": "live, by the server's own worker" if live else "afterwards, by one berth worker",
        "product": "museum (PDF tickets attached)" if tickets else "bench-cruise (codes only)",
        "flows_per_round": count,
        "plain_flows_per_s": [round(r, 1) for r in plain],
        "receipt_flows_per_s": [round(r, 1) for r in receipt],
        "ratio": round(statistics.median(receipt) / statistics.median(plain), 3),
        "emails_received": len(sink.arrivals),
        "emails_expected": count * rounds,
        "worker_messages_per_s": throughput,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--flows", type=int, default=300, help="booking flows per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--at-once", type=int, default=16, help="flows in flight at a time")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--tickets",
        action="store_true",
        help="book the demo museum (PDF tickets attached) instead of the bench cruise",
    )
    options = parser.parse_args()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        async with AsyncExitStack() as stack:
            modes = [("sqlite", await stack.enter_async_context(sqlite_database(workdir)))]
            postgres = os.environ.get("BERTH_BENCH_POSTGRES_URL")
            if postgres:
                modes.append(("postgres", await stack.enter_async_context(postgres_database(postgres))))
            else:
                print("PostgreSQL mode skipped: set BERTH_BENCH_POSTGRES_URL")
            for mode, url in modes:
                for live in (False, True):
                    results.append(
                        await measure(
                            mode,
                            url,
                            options.flows,
                            options.rounds,
                            options.at_once,
                            options.workers,
                            live,
                            workdir,
                            options.tickets,
                        )
                    )
    print(results[0]["product"] if results else "")
    print(f"{'mode':9} {'emails sent':32} {'plain flows/s':>20} {'receipt flows/s':>20} {'ratio':>6} "
          f"{'received':>10} {'worker emails/s':>16}")  # fmt: skip
    for r in results:
        plain = ", ".join(map(str, r["plain_flows_per_s"]))
        receipt = ", ".join(map(str, r["receipt_flows_per_s"]))
        print(f"{r['mode']:9} {r['sending']:32} {plain:>20} {receipt:>20} {r['ratio']:>6} "
              f"{r['emails_received']:>5}/{r['emails_expected']:<4} {r['worker_messages_per_s'] or '—':>16}")  # fmt: skip
    out = ROOT / "benchmarks" / "results" / f"mail-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"Results written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BenchError as error:
        sys.exit(str(error))
