"""PDF tickets: rendering time per ticket, p50 and p99, and what a ticket URL costs over HTTP.

Render: in this process, the pages of a demo booking of the Thames cruise (a voucher and a
ticket per guest, QR and Aztec codes) rendered one ticket at a time, N times; beside it, in the
same run, a baseline: a one-line page from the same PDF library. The ratio is what a ticket
costs over the library's own floor.

HTTP: `berth serve --demo` on a fresh database; B bookings of two guests confirmed; then each
booking's voucher PDF (three pages), one of its tickets (one page), an unknown token (404) and,
once they are cancelled, the voucher again (410), fetched one at a time, with `GET /healthz` as
the baseline of the same server.

    .venv/bin/python benchmarks/tickets.py [--renders N] [--bookings B]
    BERTH_BENCH_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test ... (adds PostgreSQL mode)
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
from reportlab.pdfgen.canvas import Canvas
from servers import BenchError, ServerProcess, free_port, postgres_database, sqlite_database

from berth.app import create_app
from berth.container import build_services
from berth.demo.loader import load_demo
from berth.settings import Settings
from berth.store.migrate import upgrade
from berth.tickets.pdf import render_pdf
from berth.tickets.sheet import TicketPage, ticket_pages

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RESELLER = {"Authorization": "Bearer demo-reseller-a"}
GUEST = {"firstName": "Bench", "lastName": "Mark", "emailAddress": "bench@example.com"}
CRUISE = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(samples: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(samples) * 1000, 2),
        "p99_ms": round(percentile(samples, 0.99) * 1000, 2),
        "count": len(samples),
    }


def blank_page() -> bytes:
    out = io.BytesIO()
    canvas = Canvas(out, invariant=True)
    canvas.drawString(72, 720, "Baseline")
    canvas.showPage()
    canvas.save()
    return out.getvalue()


def timed(action: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


async def timed_async(action: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - started)
    return samples


async def demo_pages(workdir: Path) -> list[TicketPage]:
    """The pages of a demo booking made through the OCTO routes, in this process."""
    settings = Settings(database_url=f"sqlite+aiosqlite:///{workdir / 'render.db'}", log_level="WARNING")
    services = build_services(settings)
    try:
        await upgrade(services.database)
        await load_demo(services)
        transport = httpx.ASGITransport(app=create_app(services=services))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench", headers=RESELLER
        ) as client:
            slot = await first_slot(client)
            booking = await confirmed(client, slot)
        found = await services.tickets._service.by_booking(booking["id"])
        assert found is not None
        return ticket_pages(found.details, found.supplier)
    finally:
        await services.close()


async def first_slot(client: httpx.AsyncClient, days_ahead: int = 3) -> str:
    day = time.strftime("%Y-%m-%d", time.gmtime(time.time() + days_ahead * 86400))
    slots = (await client.post("/octo/availability", json={**CRUISE, "localDate": day})).json()
    found: str = next(s for s in slots if s["available"])["id"]
    return found


async def confirmed(client: httpx.AsyncClient, slot: str) -> dict[str, Any]:
    body = {"uuid": str(uuid.uuid4()), **CRUISE, "availabilityId": slot,
            "unitItems": [{"unitId": "adult"}, {"unitId": "child"}]}  # fmt: skip
    held = await client.post("/octo/bookings", json=body)
    if held.status_code != 200:
        raise BenchError(f"reserve answered {held.status_code}: {held.text}")
    answer = await client.post(f"/octo/bookings/{body['uuid']}/confirm", json={"contact": GUEST})
    if answer.status_code != 200:
        raise BenchError(f"confirm answered {answer.status_code}: {answer.text}")
    result: dict[str, Any] = answer.json()
    return result


def url_of(ticket: dict[str, Any]) -> str:
    return next(
        str(o["deliveryValue"]) for o in ticket["deliveryOptions"] if o["deliveryFormat"] == "PDF_URL"
    )


async def measure_render(renders: int, workdir: Path) -> dict[str, Any]:
    pages = await demo_pages(workdir)
    timed(lambda: render_pdf(pages[:1]), 5)  # fonts and code paths warm
    baseline = timed(blank_page, renders)
    per_ticket = [timed(lambda page=page: render_pdf([page]), 1)[0] for _ in range(renders) for page in pages]
    whole = timed(lambda: render_pdf(pages), max(renders // 4, 10))
    ticket, floor = summary(per_ticket), summary(baseline)
    return {
        "kind": "render",
        "per_ticket": ticket,
        "baseline_blank_page": floor,
        "ratio_p50": round(ticket["p50_ms"] / floor["p50_ms"], 1),
        "booking_of_3_pages": summary(whole),
        "pdf_bytes_per_ticket": len(render_pdf(pages[:1])),
    }


async def measure_http(mode: str, database_url: str, bookings: int, workdir: Path) -> dict[str, Any]:
    port = free_port()
    env = {**os.environ, "BERTH_DATABASE_URL": database_url, "BERTH_LOG_LEVEL": "WARNING",
           "BERTH_PUBLIC_URL": f"http://127.0.0.1:{port}"}  # fmt: skip
    berth = ServerProcess(
        f"berth ({mode})", [str(BIN / "berth"), "serve", "--demo", "--port", str(port)],
        env, port, workdir / f"tickets-{mode}.log",
    )  # fmt: skip
    berth.start()
    try:
        await berth.wait_healthy("/healthz")
        async with httpx.AsyncClient(base_url=berth.base_url, timeout=30, headers=RESELLER) as client:
            slot = await first_slot(client)
            made = [await confirmed(client, slot) for _ in range(bookings)]
            vouchers = iter([url_of(b["voucher"]) for b in made] * 2)
            tickets = iter([url_of(b["unitItems"][0]["ticket"]) for b in made] * 2)

            async def fetch(url: str, status: int) -> None:
                answer = await client.get(url)
                if answer.status_code != status:
                    raise BenchError(f"GET {url} answered {answer.status_code}, not {status}")

            await timed_async(lambda: fetch("/healthz", 200), 20)
            healthz = await timed_async(lambda: fetch("/healthz", 200), bookings)
            voucher = await timed_async(lambda: fetch(next(vouchers), 200), bookings)
            ticket = await timed_async(lambda: fetch(next(tickets), 200), bookings)
            unknown = await timed_async(lambda: fetch(f"/tickets/{'A' * 43}.pdf", 404), bookings)
            for booking in made:
                await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={"reason": "bench"})
            ended = await timed_async(lambda: fetch(next(vouchers), 410), bookings)
    finally:
        berth.stop()
    floor = summary(healthz)
    result: dict[str, Any] = {"kind": "http", "mode": mode, "healthz": floor}
    for name, samples in (("voucher_3_pages", voucher), ("ticket_1_page", ticket), ("unknown_404", unknown),
                          ("cancelled_410", ended)):  # fmt: skip
        found = summary(samples)
        result[name] = {**found, "ratio_p50_to_healthz": round(found["p50_ms"] / floor["p50_ms"], 1)}
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--renders", type=int, default=200, help="renders of each ticket page (default 200)")
    parser.add_argument("--bookings", type=int, default=100, help="bookings fetched over HTTP (default 100)")
    options = parser.parse_args()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        render = await measure_render(options.renders, workdir)
        results.append(render)
        print(f"render, per ticket: p50 {render['per_ticket']['p50_ms']} ms, p99 {render['per_ticket']['p99_ms']} ms "
              f"({render['per_ticket']['count']} renders); blank page p50 {render['baseline_blank_page']['p50_ms']} ms "
              f"(ratio {render['ratio_p50']}); a booking of 3 pages p50 {render['booking_of_3_pages']['p50_ms']} ms, "
              f"{render['pdf_bytes_per_ticket']} bytes a ticket")  # fmt: skip
        async with AsyncExitStack() as stack:
            modes = [("sqlite", await stack.enter_async_context(sqlite_database(workdir)))]
            postgres = os.environ.get("BERTH_BENCH_POSTGRES_URL")
            if postgres:
                modes.append(("postgres", await stack.enter_async_context(postgres_database(postgres))))
            else:
                print("PostgreSQL mode skipped: set BERTH_BENCH_POSTGRES_URL")
            for mode, url in modes:
                results.append(await measure_http(mode, url, options.bookings, workdir))
    print(f"http: {'mode':9} {'what':16} {'p50 ms':>8} {'p99 ms':>8} {'x healthz':>10}")
    for r in results[1:]:
        print(f"      {r['mode']:9} {'healthz':16} {r['healthz']['p50_ms']:>8} {r['healthz']['p99_ms']:>8}")
        for name in ("voucher_3_pages", "ticket_1_page", "unknown_404", "cancelled_410"):
            row = r[name]
            print(
                f"      {r['mode']:9} {name:16} {row['p50_ms']:>8} {row['p99_ms']:>8} {row['ratio_p50_to_healthz']:>10}"
            )
    out = ROOT / "benchmarks" / "results" / f"tickets-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"Results written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BenchError as error:
        sys.exit(str(error))
