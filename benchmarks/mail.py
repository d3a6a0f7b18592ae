"""Guests' emails: what `emailReceipt: true` costs a booking flow, and the mail worker's
throughput to an SMTP server on loopback.

Confirm: `berth serve --demo` with BERTH_SMTP_URL naming an SMTP sink on loopback (aiosmtpd in
this process), so its in-process mail worker sends while the bookings come. Rounds alternate:
N booking flows (reserve, then confirm: `booking-flow`) without `emailReceipt`, then N with it,
C flows at a time; each round's flows/s is counted from the first reservation to the last
confirmation. The ratio is the median of the receipt rounds over the median of the plain ones.

Backlog: on the same database, a server that runs no worker confirms M bookings with
`emailReceipt: true`; then one `berth worker` starts and sends them all to the sink. Its rate
(first email received to last) is the mail worker's own throughput.

    .venv/bin/python benchmarks/mail.py [--flows 300] [--rounds 3] [--backlog 2000] [--workers 2]
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

PER_DAY = 250  # museum visits booked per open day


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


async def flows(session: aiohttp.ClientSession, slots: list[str], receipt: bool, at_once: int) -> float:
    """Reserve and confirm one booking per slot, `at_once` flows at a time; flows/s."""
    gate = asyncio.Semaphore(at_once)
    confirm = {"contact": GUEST, **({"emailReceipt": True} if receipt else {})}

    async def one(slot: str) -> None:
        body = museum_visit(slot)
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


async def measure_confirm(
    mode: str, database_url: str, count: int, rounds: int, at_once: int, workers: int, workdir: Path
) -> dict[str, Any]:
    sink = Sink()
    port = free_port()
    async with smtp_sink(sink) as smtp_port:
        env = berth_env(database_url, port, BERTH_SMTP_URL=f"smtp://127.0.0.1:{smtp_port}")
        berth = ServerProcess(
            f"berth ({mode})",
            [str(BIN / "berth"), "serve", "--demo", "--workers", str(workers), "--port", str(port)],
            env, port, workdir / f"mail-{mode}.log",
        )  # fmt: skip
        berth.start()
        try:
            await berth.wait_healthy("/healthz")
            async with (
                httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client,
                aiohttp.ClientSession(base_url=berth.base_url, headers=RESELLER) as session,
            ):
                slots = Slots(client, first_day=3)
                await flows(session, await slots.take(count // 3), False, at_once)  # warm-up
                plain: list[float] = []
                receipt: list[float] = []
                for _ in range(rounds):
                    plain.append(await flows(session, await slots.take(count), False, at_once))
                    receipt.append(await flows(session, await slots.take(count), True, at_once))
            sink.expected = count * rounds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sink.all_in.wait(), timeout=120)
        finally:
            berth.stop()
    ratio = statistics.median(receipt) / statistics.median(plain)
    return {
        "mode": mode,
        "flows_per_round": count,
        "plain_flows_per_s": [round(r, 1) for r in plain],
        "receipt_flows_per_s": [round(r, 1) for r in receipt],
        "ratio": round(ratio, 3),
        "emails_received": len(sink.arrivals),
        "emails_expected": count * rounds,
    }


async def measure_backlog(mode: str, database_url: str, count: int, workdir: Path) -> dict[str, Any]:
    sink = Sink()
    port = free_port()
    async with smtp_sink(sink) as smtp_port:
        env = berth_env(database_url, port, BERTH_RUN_WORKER="false", BERTH_SMTP_URL=f"smtp://127.0.0.1:{smtp_port}")
        berth = ServerProcess(
            f"berth ({mode}, no worker)", [str(BIN / "berth"), "serve", "--demo", "--port", str(port)],
            env, port, workdir / f"mail-backlog-{mode}.log",
        )  # fmt: skip
        worker = ServerProcess(
            f"berth worker ({mode})", [str(BIN / "berth"), "worker"], env, 0, workdir / f"mail-worker-{mode}.log"
        )
        berth.start()
        try:
            await berth.wait_healthy("/healthz")
            async with (
                httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client,
                aiohttp.ClientSession(base_url=berth.base_url, headers=RESELLER) as session,
            ):
                await flows(session, await Slots(client, first_day=200).take(count), True, 16)
            sink.expected = count
            worker.start()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(sink.all_in.wait(), timeout=300)
        finally:
            worker.stop()
            berth.stop()
    times = sorted(sink.arrivals)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return {
        "mode": mode,
        "backlog": count,
        "sent": len(times),
        "messages_per_s": round((len(times) - 1) / span, 1) if span else None,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", type=int, default=300, help="booking flows per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--at-once", type=int, default=16, help="flows in flight at a time")
    parser.add_argument("--backlog", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    confirms: list[dict[str, Any]] = []
    backlogs: list[dict[str, Any]] = []
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
                confirms.append(
                    await measure_confirm(
                        mode, url, options.flows, options.rounds, options.at_once, options.workers, workdir
                    )
                )
                if options.backlog:
                    backlogs.append(await measure_backlog(mode, url, options.backlog, workdir))
    print(f"confirm: {'mode':10} {'plain flows/s':>22} {'receipt flows/s':>22} {'ratio':>6} {'emails':>12}")
    for r in confirms:
        plain = ", ".join(map(str, r["plain_flows_per_s"]))
        receipt = ", ".join(map(str, r["receipt_flows_per_s"]))
        print(f"         {r['mode']:10} {plain:>22} {receipt:>22} {r['ratio']:>6} "
              f"{r['emails_received']:>5}/{r['emails_expected']:<6}")  # fmt: skip
    if backlogs:
        print(f"backlog, one berth worker: {'mode':10} {'sent':>12} {'messages/s':>11}")
        for r in backlogs:
            print(f"                           {r['mode']:10} {r['sent']:>5}/{r['backlog']:<6} {r['messages_per_s']:>11}")
    results = [{"kind": "confirm", **r} for r in confirms] + [{"kind": "backlog", **r} for r in backlogs]
    out = ROOT / "benchmarks" / "results" / f"mail-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"Results written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BenchError as error:
        sys.exit(str(error))
