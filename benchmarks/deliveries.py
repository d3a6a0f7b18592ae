"""Webhook delivery: throughput and commit-to-receipt latency.

Live: starts Berth (`berth serve --demo`, its in-process worker delivering) on a fresh database
and a receiver on loopback; subscribes K booking_update webhooks; confirms N bookings (held over
the next weeks) as fast as the API allows; and measures, for each delivery, the time from the
confirmation's answer (the commit) to the receiver getting it. Its rate is bounded by the
confirmations: K deliveries each.

Backlog: on the same database, a server that runs no worker confirms M more bookings; then one
`berth worker` starts and delivers them all. Its rate (first receipt to last) is the delivery
worker's own throughput.

    .venv/bin/python benchmarks/deliveries.py [--bookings N] [--hooks K] [--backlog M] [--workers W]
    BERTH_BENCH_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test ... (adds PostgreSQL mode)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import uvicorn
from servers import BenchError, ServerProcess, free_port, postgres_database, sqlite_database

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RESELLER = {"Authorization": "Bearer demo-reseller-a"}
GUEST = {"firstName": "Bench", "lastName": "Mark", "emailAddress": "bench@example.com"}


class Receiver:
    """Answers 204 to every POST; notes when each (path, booking uuid) first arrived."""

    def __init__(self, expected: int) -> None:
        self.received: dict[tuple[str, str], float] = {}
        self.expected = expected
        self.all_in = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        booking = json.loads(body)["booking"]
        self.received.setdefault((scope["path"], booking["uuid"]), time.monotonic())
        if len(self.received) >= self.expected:
            self.all_in.set()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def berth_env(database_url: str, port: int, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "BERTH_DATABASE_URL": database_url,
        "BERTH_LOG_LEVEL": "WARNING",
        "BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
        "BERTH_DELIVERY_POLL_SECONDS": "0.2",
        "BERTH_PUBLIC_URL": f"http://127.0.0.1:{port}",
        **extra,
    }


@contextlib.asynccontextmanager
async def listening(receiver: Receiver) -> AsyncIterator[str]:
    """`receiver` served on a free loopback port; yields its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(receiver, host="127.0.0.1", port=0, log_level="error", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    for _ in range(500):  # uvicorn offers no event for "started"; look for up to 5 s
        if server.started:
            break
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving


def museum_visit(availability_id: str) -> dict[str, Any]:
    """A reservation of one adult's visit to the demo museum, with a fresh uuid."""
    return {"uuid": str(uuid.uuid4()), "productId": "tower-of-stories", "optionId": "DEFAULT",
            "availabilityId": availability_id, "unitItems": [{"unitId": "adult"}]}  # fmt: skip


async def open_slots(client: httpx.AsyncClient, count: int, first_day: int = 3) -> list[str]:
    """The museum's next `count` open availability ids from `first_day` days ahead (one a day;
    Mondays and holidays are closed)."""
    found: list[str] = []
    ahead = first_day
    while len(found) < count:
        day = time.gmtime(time.time() + ahead * 86400)
        date = f"{day.tm_year:04d}-{day.tm_mon:02d}-{day.tm_mday:02d}"
        slots = (
            await client.post(
                "/octo/availability",
                json={"productId": "tower-of-stories", "optionId": "DEFAULT", "localDate": date},
            )
        ).json()
        found.extend(slot["id"] for slot in slots if slot["available"])
        ahead += 1
    return found[:count]


async def measure(
    mode: str, database_url: str, bookings: int, hooks: int, workers: int, workdir: Path
) -> dict[str, Any]:
    """Live: `bookings` holds spread over the museum's next days (20 a day), then all confirmed
    at once in random order, 32 at a time; each confirmation is delivered to `hooks` booking_update webhooks
    (as a reseller with several systems subscribes several), so the deliveries come at
    `hooks` times the confirmations' rate."""
    receiver = Receiver(bookings * hooks)
    port = free_port()
    env = berth_env(database_url, port)
    berth = ServerProcess(
        f"berth ({mode})",
        [str(BIN / "berth"), "serve", "--demo", "--workers", str(workers), "--port", str(port)],
        env, port, workdir / f"deliveries-{mode}.log",
    )  # fmt: skip
    berth.start()
    try:
        await berth.wait_healthy("/healthz")
        async with (
            listening(receiver) as receiver_url,
            httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client,
        ):
            subscribed = []
            for number in range(hooks):
                hook = await client.post(
                    "/octo/webhooks", json={"event": "booking_update", "url": f"{receiver_url}/hook/{number}"}
                )
                hook.raise_for_status()
                subscribed.append(hook.json()["id"])
            slots = await open_slots(client, (bookings + 19) // 20)
            held: list[str] = []
            for number in range(bookings):
                body = museum_visit(slots[number // 20])
                answer = await client.post("/octo/bookings", json=body)
                answer.raise_for_status()
                held.append(body["uuid"])
            random.shuffle(held)  # confirmations come for many departures at once, as in life
            committed: dict[str, float] = {}
            gate = asyncio.Semaphore(32)
            # aiohttp: httpx's own CPU per request would make this process the bottleneck.
            async with aiohttp.ClientSession(base_url=berth.base_url, headers=RESELLER) as session:

                async def confirm(booking_uuid: str) -> None:
                    async with (
                        gate,
                        session.post(
                            f"/octo/bookings/{booking_uuid}/confirm", json={"contact": GUEST}
                        ) as answer,
                    ):
                        answer.raise_for_status()
                        await answer.read()
                        committed[booking_uuid] = time.monotonic()

                started = time.monotonic()
                await asyncio.gather(*(confirm(u) for u in held))
                confirmed_in = time.monotonic() - started
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(receiver.all_in.wait(), timeout=120)
            for hook_id in subscribed:  # the backlog has its own
                await client.delete(f"/octo/webhooks/{hook_id}")
        finished = max(receiver.received.values(), default=time.monotonic())
        latencies = sorted(
            (arrived - committed[booking_uuid]) * 1000
            for (_, booking_uuid), arrived in receiver.received.items()
            if booking_uuid in committed
        )
        return {
            "mode": mode,
            "bookings": bookings,
            "hooks": hooks,
            "expected": bookings * hooks,
            "delivered": len(receiver.received),
            "confirmations_per_s": round(len(committed) / max(confirmed_in, 1e-9), 1),
            "deliveries_per_s": round(len(receiver.received) / max(finished - started, 1e-9), 1),
            "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "latency_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 1) if latencies else None,
        }
    finally:
        berth.stop()


async def confirm_bookings(client: httpx.AsyncClient, count: int, first_day: int) -> dict[str, float]:
    """Hold and confirm `count` museum visits (250 a day on the open days from `first_day` days
    ahead), 16 at a time; the time each confirmation was answered, by booking uuid."""
    slots = await open_slots(client, (count + 249) // 250, first_day)
    committed: dict[str, float] = {}
    gate = asyncio.Semaphore(16)

    async def one(number: int) -> None:
        body = museum_visit(slots[number // 250])
        async with gate:
            (await client.post("/octo/bookings", json=body)).raise_for_status()
            answer = await client.post(f"/octo/bookings/{body['uuid']}/confirm", json={"contact": GUEST})
            answer.raise_for_status()
            committed[body["uuid"]] = time.monotonic()

    await asyncio.gather(*(one(n) for n in range(count)))
    return committed


async def measure_backlog(mode: str, database_url: str, count: int, workdir: Path) -> dict[str, Any]:
    receiver = Receiver(count)
    port = free_port()
    env = berth_env(database_url, port, BERTH_RUN_WORKER="false")
    berth = ServerProcess(
        f"berth ({mode}, no worker)", [str(BIN / "berth"), "serve", "--demo", "--port", str(port)],
        env, port, workdir / f"backlog-{mode}.log",
    )  # fmt: skip
    worker = ServerProcess(
        f"berth worker ({mode})", [str(BIN / "berth"), "worker"], env, 0, workdir / f"worker-{mode}.log"
    )
    berth.start()
    try:
        await berth.wait_healthy("/healthz")
        async with listening(receiver) as receiver_url:
            async with httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client:
                hook = await client.post(
                    "/octo/webhooks", json={"event": "booking_update", "url": f"{receiver_url}/hook"}
                )
                hook.raise_for_status()
                committed = await confirm_bookings(client, count, first_day=10)
            receiver.expected = len(committed)
            worker.start()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(receiver.all_in.wait(), timeout=300)
        times = sorted(receiver.received.values())
        span = times[-1] - times[0] if len(times) > 1 else 0.0
        return {
            "mode": mode,
            "backlog": len(committed),
            "delivered": len(receiver.received),
            "deliveries_per_s": round((len(times) - 1) / span, 1) if span else None,
        }
    finally:
        worker.stop()
        berth.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bookings", type=int, default=600)
    parser.add_argument("--hooks", type=int, default=3)
    parser.add_argument("--backlog", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        async with AsyncExitStack() as stack:
            modes = [("sqlite", await stack.enter_async_context(sqlite_database(workdir)))]
            postgres = os.environ.get("BERTH_BENCH_POSTGRES_URL")
            if postgres:
                modes.append(("postgres", await stack.enter_async_context(postgres_database(postgres))))
            else:
                print("PostgreSQL mode skipped: set BERTH_BENCH_POSTGRES_URL")
            backlogs = []
            for mode, url in modes:
                results.append(
                    await measure(mode, url, options.bookings, options.hooks, options.workers, workdir)
                )
                if options.backlog:
                    backlogs.append(await measure_backlog(mode, url, options.backlog, workdir))
    print(
        f"live: {'mode':10} {'delivered':>11} {'confirmations/s':>16} {'deliveries/s':>13} {'p50 ms':>8} {'p99 ms':>8}"
    )
    for r in results:
        print(f"      {r['mode']:10} {r['delivered']:>5}/{r['expected']:<5} {r['confirmations_per_s']:>16} "
              f"{r['deliveries_per_s']:>13} {r['latency_p50_ms']:>8} {r['latency_p99_ms']:>8}")  # fmt: skip
    if backlogs:
        print(f"backlog, one berth worker: {'mode':10} {'delivered':>10} {'deliveries/s':>13}")
        for r in backlogs:
            print(f"                           {r['mode']:10} {r['delivered']:>5}/{r['backlog']:<5} "
                  f"{r['deliveries_per_s']:>12}")  # fmt: skip
    results.extend({"kind": "backlog", **r} for r in backlogs)
    out = (
        ROOT / "benchmarks" / "results" / f"deliveries-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    )
    out.write_text(json.dumps(results, indent=2))
    print(f"Results written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BenchError as error:
        sys.exit(str(error))
