"""The bench's write ceiling (benchmarks/bare_app.py, issue 41): served by uvicorn on loopback
against a real database (a SQLite file; its own PostgreSQL database with
BERTH_TEST_POSTGRES_URL), it reserves, refuses when the departure is full, confirms, and keeps
its books straight. Its rate is what Berth's write routes are compared with, so it must do
what a reservation does, no less."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from berth.store.tables import bookings
from tests.berth_process import free_port
from tests.databases import POSTGRES_URL

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
DEPARTURE = "2026-12-01T10:00:00+00:00"
CRUISE = {"productId": "bench-cruise", "optionId": "DEFAULT"}


def _bare_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bare_app", BENCHMARKS / "bare_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bare_app = _bare_app()


@pytest.fixture
async def bare_url(tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own, with the bare app's schema and one departure of three places."""
    if POSTGRES_URL is None:
        url = f"sqlite:///{tmp_path / 'bare.db'}"
        await bare_app.create_schema(url)
        await bare_app.add_departures(url, [(CRUISE["productId"], CRUISE["optionId"], DEPARTURE, 3)])
        yield url
        return
    admin = make_url(POSTGRES_URL).set(drivername="postgresql")
    name = f"berth_bare_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(admin.render_as_string(hide_password=False))
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
        url = admin.set(database=name).render_as_string(hide_password=False)
        await bare_app.create_schema(url)
        await bare_app.add_departures(url, [(CRUISE["productId"], CRUISE["optionId"], DEPARTURE, 3)])
        yield url
    finally:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await connection.close()


def _serve(url: str, log: Path) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "bare_app:app", "--app-dir", str(BENCHMARKS),
             "--port", str(port), "--log-level", "warning"],
            env={**os.environ, "BARE_DATABASE_URL": url},
            stdout=output,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the bare app did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture
def bare_server(bare_url: str, tmp_path: Path) -> Iterator[str]:
    yield from _serve(bare_url, tmp_path / "bare.log")


def _reservation(adults: int) -> dict[str, Any]:
    return {"uuid": str(uuid.uuid4()), **CRUISE, "availabilityId": DEPARTURE,
            "unitItems": [{"unitId": "adult"}] * adults}  # fmt: skip


async def test_reserves_refuses_when_full_and_confirms(bare_url: str, bare_server: str) -> None:
    async with httpx.AsyncClient(base_url=bare_server) as client:
        first = await client.post("/octo/bookings", json=_reservation(2))
        assert first.status_code == 200
        held = first.json()
        assert held["status"] == "ON_HOLD" and held["availability"]["vacancies"] == 1
        assert [item["status"] for item in held["unitItems"]] == ["ON_HOLD", "ON_HOLD"]
        # About the size of Berth's answer to the same reservation (3.8 kB): the ceiling pays
        # for encoding and sending a booking too.
        assert 3000 < len(first.content) < 4500

        full = await client.post("/octo/bookings", json=_reservation(2))
        assert full.status_code == 400 and full.json()["error"] == "UNPROCESSABLE_ENTITY"
        last = await client.post("/octo/bookings", json=_reservation(1))
        assert last.status_code == 200 and last.json()["availability"]["vacancies"] == 0

        contact = {"fullName": "Bench Mark", "emailAddress": "bench@example.com"}
        confirmed = await client.post(f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact})
        assert confirmed.status_code == 200
        answer = confirmed.json()
        assert (answer["uuid"], answer["id"], answer["status"]) == (held["uuid"], held["id"], "CONFIRMED")
        assert answer["contact"]["emailAddress"] == "bench@example.com"
        assert [item["uuid"] for item in answer["unitItems"]] == [item["uuid"] for item in held["unitItems"]]
        assert answer["utcConfirmedAt"] is not None

        again = await client.post(f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact})
        assert again.status_code == 400 and again.json()["error"] == "INVALID_BOOKING_UUID"
        for bad in (b"{", b'{"uuid": "x"}', b'{"uuid": "x", "productId": "p", "optionId": "o", '
                    b'"availabilityId": "tomorrow", "unitItems": []}'):  # fmt: skip
            refused = await client.post("/octo/bookings", content=bad)
            assert refused.status_code == 400 and refused.json()["error"] == "BAD_REQUEST"

    assert await bare_app.audit(bare_url, [held["uuid"], last.json()["uuid"]]) == []
    assert await bare_app.audit(bare_url, [str(uuid.uuid4())]) == ["1 bookings answered 200 are not stored"]


def test_a_booking_row_has_as_many_columns_as_berths() -> None:
    assert len(bare_app.COLUMNS) == len(bookings.c)
    assert set(bare_app.COLUMNS) == {column.name for column in bookings.c}
