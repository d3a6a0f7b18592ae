"""Saving the demo catalogue, end to end (issue 30): `PUT /admin/api/catalog?baseVersion=N` on
a running `berth serve --demo` — parse and validate the file with every rule, compare it with
the stored catalogue and the live bookings (the preview), write it and its version, fan out the
product_update webhooks — timed by the client, as a ratio to the same-run baseline: the export
of the same catalogue (`GET /admin/api/catalog`, the route's cheapest neighbour). The dry run
(validation and preview, no write) is timed too.

    .venv/bin/python benchmarks/catalog_save.py [--saves 30]
    BERTH_BENCH_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/test ... (adds PostgreSQL mode)

Each save changes one price (alternately up and down), so every save writes a new version.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from servers import BenchError, ServerProcess, free_port, postgres_database, sqlite_database

BIN = Path(sys.executable).parent
ADMIN = {"Authorization": "Bearer demo-admin"}


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:.1f} ms (p90 {sorted(samples)[int(len(samples) * 0.9) - 1] * 1000:.1f})"


async def _timed(call: object) -> float:
    started = time.perf_counter()
    response = await call  # type: ignore[misc]
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise BenchError(
            f"{response.request.method} {response.request.url}: {response.status_code} {response.text[:300]}"
        )
    return elapsed


async def measure(mode: str, database_url: str, workdir: Path, saves: int) -> dict[str, float]:
    port = free_port()
    env = {
        **os.environ,
        "BERTH_DATABASE_URL": database_url,
        "BERTH_LOG_LEVEL": "WARNING",
        "BERTH_PUBLIC_URL": f"http://127.0.0.1:{port}",
    }
    berth = ServerProcess(
        f"berth ({mode})",
        [str(BIN / "berth"), "serve", "--demo", "--port", str(port)],
        env,
        port,
        workdir / f"catalog-{mode}.log",
    )
    berth.start()
    try:
        await berth.wait_healthy("/healthz")
        async with httpx.AsyncClient(base_url=berth.base_url, timeout=60, headers=ADMIN) as client:
            exported = await client.get("/admin/api/catalog")
            version = int(exported.headers["Catalog-Version"])
            first_price = re.search(r"retail: (\d+)", exported.text)
            assert first_price is not None
            texts = [
                exported.text.replace(first_price.group(0), f"retail: {int(first_price.group(1)) - 1}", 1),
                exported.text,
            ]
            baseline, dry, save = [], [], []
            for round_number in range(saves):
                text = texts[round_number % 2].encode()
                baseline.append(await _timed(client.get("/admin/api/catalog")))
                dry.append(
                    await _timed(client.put("/admin/api/catalog", params={"dryRun": "true"}, content=text))
                )
                save.append(
                    await _timed(
                        client.put("/admin/api/catalog", params={"baseVersion": version}, content=text)
                    )
                )
                version += 1
        size = len(exported.text)
        print(f"{mode}: demo catalogue of {size} bytes, {saves} saves")
        print(f"  export (baseline)          {_ms(baseline)}")
        print(
            f"  dry run (validate+preview) {_ms(dry)}  = {statistics.median(dry) / statistics.median(baseline):.1f}x baseline"
        )
        print(
            f"  save (validate+preview+write+fan-out) {_ms(save)}  = {statistics.median(save) / statistics.median(baseline):.1f}x baseline"
        )
        return {
            "baseline": statistics.median(baseline),
            "dry": statistics.median(dry),
            "save": statistics.median(save),
        }
    finally:
        berth.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--saves", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="berth-catalog-bench-") as temp:
        workdir = Path(temp)
        async with sqlite_database(workdir) as url:
            await measure("sqlite", url, workdir, args.saves)
        postgres = os.environ.get("BERTH_BENCH_POSTGRES_URL")
        if postgres:
            async with postgres_database(postgres) as url:
                await measure("postgresql", url, workdir, args.saves)
        else:
            print("PostgreSQL mode skipped: set BERTH_BENCH_POSTGRES_URL")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
