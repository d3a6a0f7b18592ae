"""Check-in at the gate: `POST /admin/api/checkin` under 16 scanners at once.

Starts `berth serve --demo` on a fresh database (and PostgreSQL too with
BERTH_BENCH_POSTGRES_URL), confirms N museum visits over the next open days, then 16 scanners
(`--scanners`) scan them as a gate does: each ticket once (ADMITTED), then each again
(ALREADY_ADMITTED, as a guest who shows their ticket twice), every scan with its own nonce and
the departure of the visit; half the codes are the booking's, half the ticket's. It reports
requests/s and latency (p50, p99) of the scans, and the same load of POSTs against the bare
baseline app (benchmarks/baseline_app.py) under the same uvicorn and worker count, measured in
the same run, with the ratio. Then it checks that every ticket was admitted exactly once.

    .venv/bin/python benchmarks/checkin.py [--tickets N] [--scanners S] [--workers W]
    BERTH_BENCH_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test ... (adds PostgreSQL mode)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from deliveries import GUEST, RESELLER, berth_env, museum_visit, open_slots
from servers import BenchError, ServerProcess, free_port, postgres_database, sqlite_database

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
ADMIN = {"Authorization": "Bearer demo-admin"}
PER_DAY = 250  # museum visits confirmed per open day
P99_TARGET_MS = 50.0


async def visits(client: httpx.AsyncClient, count: int) -> list[tuple[str, str]]:
    """`count` confirmed one-adult museum visits, 16 at a time: (code, availability id) each,
    the booking's reference for even ones, the ticket's for odd ones."""
    slots = await open_slots(client, (count + PER_DAY - 1) // PER_DAY, first_day=2)
    found: list[tuple[str, str]] = []
    gate = asyncio.Semaphore(16)

    async def one(number: int) -> None:
        slot = slots[number // PER_DAY]
        body = museum_visit(slot)
        async with gate:
            (await client.post("/octo/bookings", json=body)).raise_for_status()
            done = await client.post(f"/octo/bookings/{body['uuid']}/confirm", json={"contact": GUEST})
            done.raise_for_status()
        booking = done.json()
        code = (
            booking["supplierReference"] if number % 2 == 0 else booking["unitItems"][0]["supplierReference"]
        )
        found.append((code, slot))

    await asyncio.gather(*(one(n) for n in range(count)))
    return found


async def scan_all(
    base_url: str, tickets: list[tuple[str, str]], scanners: int, interval: float = 0.0
) -> tuple[list[float], Counter[str], float]:
    """Every ticket scanned twice by `scanners` concurrent scanners, each as fast as answers
    come (`interval` 0) or one scan every `interval` seconds (a gate's pace, the scanners'
    starts spread over the first interval): latencies (ms), the results (or HTTP statuses),
    and the wall time."""
    work: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for _ in range(2):
        for ticket in tickets:
            work.put_nowait(ticket)
    latencies: list[float] = []
    results: Counter[str] = Counter()
    connector = aiohttp.TCPConnector(limit=scanners)
    async with aiohttp.ClientSession(base_url=base_url, headers=ADMIN, connector=connector) as session:

        async def scanner(number: int) -> None:
            await asyncio.sleep(interval * number / scanners)
            while not work.empty():
                due = time.perf_counter() + interval
                code, slot = work.get_nowait()
                body = {
                    "code": code,
                    "nonce": uuid.uuid4().hex,
                    "device": f"bench-{number}",
                    "admitAnotherDay": True,  # the museum's days ahead: staff admit anyway
                    "departure": {
                        "productId": "tower-of-stories",
                        "optionId": "DEFAULT",
                        "availabilityId": slot,
                    },
                }
                started = time.perf_counter()
                async with session.post("/admin/api/checkin", json=body) as answer:
                    raw = await answer.read()
                latencies.append((time.perf_counter() - started) * 1000)
                results[
                    json.loads(raw).get("result", "?") if answer.status == 200 else str(answer.status)
                ] += 1
                await asyncio.sleep(max(0.0, due - time.perf_counter()))

        began = time.perf_counter()
        await asyncio.gather(*(scanner(n) for n in range(scanners)))
        return latencies, results, time.perf_counter() - began


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * share))], 1)


async def admitted_once(client: httpx.AsyncClient, tickets: list[tuple[str, str]]) -> tuple[int, int]:
    """(tickets admitted, tickets expected) over the departures of `tickets`."""
    admitted = expected = 0
    for slot in sorted({slot for _, slot in tickets}):
        gate = {"productId": "tower-of-stories", "optionId": "DEFAULT", "availabilityId": slot}
        found = (await client.get("/admin/api/checkin/departure", params=gate, headers=ADMIN)).json()
        admitted += found["admitted"]
        expected += found["expected"]
    return admitted, expected


def figures(latencies: list[float], seconds: float) -> dict[str, Any]:
    return {
        "scans": len(latencies),
        "req_per_s": round(len(latencies) / seconds, 1),
        "p50_ms": percentile(latencies, 0.50),
        "p99_ms": percentile(latencies, 0.99),
        "p99_met": percentile(latencies, 0.99) <= P99_TARGET_MS,
    }


async def measure(
    mode: str, database_url: str, baseline: ServerProcess, options: argparse.Namespace, workdir: Path
) -> dict[str, Any]:
    count, paced_count, scanners = options.tickets, options.paced_tickets, options.scanners
    port = free_port()
    berth = ServerProcess(
        f"berth ({mode})",
        [str(BIN / "berth"), "serve", "--demo", "--workers", str(options.workers), "--port", str(port)],
        berth_env(database_url, port, BERTH_RATE_LIMIT_PER_MINUTE="0"), port, workdir / f"checkin-{mode}.log",
    )  # fmt: skip
    berth.start()
    try:
        await berth.wait_healthy("/healthz")
        async with httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client:
            every = await visits(client, count + paced_count)
            tickets, paced = every[:count], every[count:]
            warm = tickets[: scanners * 4]  # a first pass over a few, not counted: connections, caches
            await scan_all(baseline.base_url, warm, scanners)
            latencies, results, seconds = await scan_all(berth.base_url, tickets, scanners)
            base_latencies, _, base_seconds = await scan_all(baseline.base_url, tickets, scanners)
            paced_latencies, paced_results, paced_seconds = await scan_all(
                berth.base_url, paced, scanners, options.interval
            )
            admitted, expected = await admitted_once(client, every)
        flat_out = figures(latencies, seconds)
        base = figures(base_latencies, base_seconds)
        return {
            "mode": mode,
            "tickets": len(every),
            "scanners": scanners,
            "flat_out": {**flat_out, "results": dict(results)},
            "baseline": base,
            "ratio": round(flat_out["req_per_s"] / base["req_per_s"], 3),
            "paced": {**figures(paced_latencies, paced_seconds), "interval_s": options.interval,
                      "results": dict(paced_results)},
            "admitted": admitted,
            "expected": expected,
        }  # fmt: skip
    finally:
        berth.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tickets", type=int, default=1000, help="tickets scanned flat out (each twice)")
    parser.add_argument("--paced-tickets", type=int, default=240, help="tickets scanned at a gate's pace")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between a paced scanner's scans")
    parser.add_argument("--scanners", type=int, default=16, help="scanners at once")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers of Berth and of the baseline")
    options = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        port = free_port()
        baseline = ServerProcess(
            "baseline",
            [sys.executable, "-m", "uvicorn", "baseline_app:app", "--app-dir", str(ROOT / "benchmarks"),
             "--port", str(port), "--workers", str(options.workers), "--log-level", "warning"],
            dict(os.environ), port, workdir / "baseline.log",
        )  # fmt: skip
        baseline.start()
        try:
            await baseline.wait_healthy("/")
            async with AsyncExitStack() as stack:
                modes = [("sqlite", await stack.enter_async_context(sqlite_database(workdir)))]
                postgres = os.environ.get("BERTH_BENCH_POSTGRES_URL")
                if postgres:
                    modes.append(("postgres", await stack.enter_async_context(postgres_database(postgres))))
                else:
                    print("PostgreSQL mode skipped: set BERTH_BENCH_POSTGRES_URL")
                for mode, url in modes:
                    results.append(await measure(mode, url, baseline, options, workdir))
        finally:
            baseline.stop()
    print(
        f"{'mode':9} {'load':22} {'scans':>6} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'p99<=50':>7}  results"
    )
    for r in results:
        pace = f"paced, 1 scan/{r['paced']['interval_s']:g} s"
        for label, row in (
            ("flat out", r["flat_out"]),
            ("baseline, flat out", r["baseline"]),
            (pace, r["paced"]),
        ):
            print(f"{r['mode']:9} {label:22} {row['scans']:>6} {row['req_per_s']:>7} {row['p50_ms']:>7} "
                  f"{row['p99_ms']:>7} {'yes' if row['p99_met'] else 'no':>7}  {row.get('results', '')}")  # fmt: skip
        print(
            f"{r['mode']:9} ratio to the baseline {r['ratio']}; tickets admitted {r['admitted']}/{r['tickets']} (once each)"
        )
    out = ROOT / "benchmarks" / "results" / f"checkin-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"Results written to {out.relative_to(ROOT)}")
    fine = {"ADMITTED", "ALREADY_ADMITTED"}
    broken = [
        r["mode"]
        for r in results
        if r["admitted"] != r["tickets"]
        or set(r["flat_out"]["results"]) - fine
        or set(r["paced"]["results"]) - fine
    ]
    if broken:
        sys.exit(f"check-in went wrong in: {', '.join(broken)}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BenchError as error:
        sys.exit(str(error))
