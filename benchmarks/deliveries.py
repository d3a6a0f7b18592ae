"""Webhook delivery: throughput and commit-to-receipt latency.

Starts Berth (`berth serve --demo`, its in-process worker delivering) on a fresh database and a
receiver on loopback; subscribes one booking_update webhook; confirms N bookings as fast as
the API allows; and measures, for each confirmation, the time from the API's answer (the
commit) to the receiver getting the signed delivery.

    .venv/bin/python benchmarks/deliveries.py [--bookings N] [--workers W]
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
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from servers import BenchError, ServerProcess, free_port, postgres_database, sqlite_database

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RESELLER = {"Authorization": "Bearer demo-reseller-a"}
GUEST = {"firstName": "Bench", "lastName": "Mark", "emailAddress": "bench@example.com"}


class Receiver:
    def __init__(self, expected: int) -> None:
        self.received: dict[str, float] = {}
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
        self.received.setdefault(booking["uuid"], time.monotonic())
        if len(self.received) >= self.expected:
            self.all_in.set()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def measure(mode: str, database_url: str, bookings: int, workers: int, workdir: Path) -> dict[str, Any]:
    receiver = Receiver(bookings)
    server = uvicorn.Server(
        uvicorn.Config(receiver, host="127.0.0.1", port=0, log_level="error", lifespan="off")
    )
    serving = asyncio.create_task(server.serve())
    for _ in range(500):  # uvicorn offers no event for "started"; look for up to 5 s
        if server.started:
            break
        await asyncio.sleep(0.01)
    receiver_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/hook"
    port = free_port()
    env = {
        **os.environ,
        "BERTH_DATABASE_URL": database_url,
        "BERTH_LOG_LEVEL": "WARNING",
        "BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
        "BERTH_DELIVERY_POLL_SECONDS": "0.2",
        "BERTH_PUBLIC_URL": f"http://127.0.0.1:{port}",
    }
    berth = ServerProcess(
        f"berth ({mode})",
        [str(BIN / "berth"), "serve", "--demo", "--workers", str(workers), "--port", str(port)],
        env, port, workdir / f"deliveries-{mode}.log",
    )  # fmt: skip
    berth.start()
    try:
        await berth.wait_healthy("/healthz")
        async with httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client:
            hook = await client.post("/octo/webhooks", json={"event": "booking_update", "url": receiver_url})
            hook.raise_for_status()
            day = time.gmtime(time.time() + 3 * 86400)
            date = f"{day.tm_year:04d}-{day.tm_mon:02d}-{day.tm_mday:02d}"
            slots = (
                await client.post(
                    "/octo/availability",
                    json={"productId": "tower-of-stories", "optionId": "DEFAULT", "localDate": date},
                )
            ).json()
            if not slots or not slots[0]["available"]:
                date = f"{day.tm_year:04d}-{day.tm_mon:02d}-{min(day.tm_mday + 1, 28):02d}"
                slots = (
                    await client.post(
                        "/octo/availability",
                        json={"productId": "tower-of-stories", "optionId": "DEFAULT", "localDate": date},
                    )
                ).json()
            availability_id = slots[0]["id"]
            held = []
            for _ in range(bookings):
                body = {"uuid": str(uuid.uuid4()), "productId": "tower-of-stories", "optionId": "DEFAULT",
                        "availabilityId": availability_id, "unitItems": [{"unitId": "adult"}]}  # fmt: skip
                answer = await client.post("/octo/bookings", json=body)
                answer.raise_for_status()
                held.append(body["uuid"])
            committed: dict[str, float] = {}
            gate = asyncio.Semaphore(16)
            started = time.monotonic()

            async def confirm(booking_uuid: str) -> None:
                async with gate:
                    answer = await client.post(
                        f"/octo/bookings/{booking_uuid}/confirm", json={"contact": GUEST}
                    )
                    answer.raise_for_status()
                    committed[booking_uuid] = time.monotonic()

            await asyncio.gather(*(confirm(u) for u in held))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(receiver.all_in.wait(), timeout=120)
        finished = max(receiver.received.values(), default=time.monotonic())
        latencies = sorted(
            (receiver.received[u] - committed[u]) * 1000 for u in committed if u in receiver.received
        )
        return {
            "mode": mode,
            "bookings": bookings,
            "delivered": len(receiver.received),
            "deliveries_per_s": round(len(receiver.received) / max(finished - started, 1e-9), 1),
            "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "latency_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 1) if latencies else None,
        }
    finally:
        berth.stop()
        server.should_exit = True
        await serving


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bookings", type=int, default=300)
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
            for mode, url in modes:
                results.append(await measure(mode, url, options.bookings, options.workers, workdir))
    print(f"{'mode':10} {'delivered':>10} {'deliveries/s':>13} {'p50 ms':>8} {'p99 ms':>8}")
    for r in results:
        print(f"{r['mode']:10} {r['delivered']:>6}/{r['bookings']:<4} {r['deliveries_per_s']:>12} "
              f"{r['latency_p50_ms']:>8} {r['latency_p99_ms']:>8}")  # fmt: skip
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
