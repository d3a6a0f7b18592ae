"""Several Berth processes on one PostgreSQL behave as one server (issue 20): two real
`berth serve` processes and a `berth worker`, every one running the expiry sweep and the
delivery worker, with resellers booking through both.

- No oversell: reservations for one departure spread over both processes stop at its capacity.
- A hold made through one process is seen by the other on its next request.
- A catalogue import through one reaches the other within seconds.
- Every webhook event is delivered once, though three processes run a delivery worker.
- Sweeps (every 50 ms in each process, and more from this test) and bookings never deadlock:
  no process logs a failed sweep or a database error, and no request answers 5XX."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from berth.capabilities.webhooks.service import WebhookInput
from berth.container import Services
from berth.domain.catalog.document import catalog_to_yaml
from tests.berth_process import BERTH, berth_environment, berth_serve
from tests.bookings_helpers import GUEST, booking_catalog, booking_products, reservation
from tests.builders import catalog, load
from tests.conftest import ADMIN, KEY_A, KEY_B, auth
from tests.receivers import receiver

pytestmark = pytest.mark.postgresql  # several processes on one PostgreSQL

LONDON = ZoneInfo("Europe/London")
CLOSED_DATES = ("2026-12-25",)  # the cruise's closed dates


def departure(hour: int) -> str:
    """The booking tests' cruise (20 places) a week from today, at `hour` in London: the
    processes run on the real clock, so the departure must stay ahead of it."""
    day = datetime.now(LONDON).date() + timedelta(days=7)
    if day.isoformat() in CLOSED_DATES:
        day += timedelta(days=3)
    return datetime.combine(day, dt_time(hour), LONDON).isoformat()


SLOT = departure(10)
OTHER_SLOT = departure(12)


SETTINGS = {
    "BERTH_ADMIN_TOKEN": ADMIN["Authorization"].removeprefix("Bearer "),
    "BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
    "BERTH_EXPIRY_SWEEP_SECONDS": "0.05",
    "BERTH_DELIVERY_POLL_SECONDS": "0.1",
    "BERTH_RATE_LIMIT_PER_MINUTE": "0",
    "BERTH_LOG_LEVEL": "INFO",
}


@contextmanager
def berth_processes(database_url: str, logs: Path) -> Iterator[list[str]]:
    """Two `berth serve` processes and a `berth worker` on `database_url`; yields the two base
    URLs. Their output goes to files in `logs`."""
    with (logs / "process-2.log").open("wb") as worker_log:
        worker = subprocess.Popen(
            [str(BERTH), "worker"], env=berth_environment(database_url, **SETTINGS),
            stdout=worker_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            with (
                berth_serve(database_url, log=logs / "process-0.log", **SETTINGS) as first,
                berth_serve(database_url, log=logs / "process-1.log", **SETTINGS) as second,
            ):
                yield [first, second]
        finally:
            worker.terminate()
            worker.wait(timeout=15)


@asynccontextmanager
async def clients(bases: list[str]) -> AsyncIterator[list[httpx.AsyncClient]]:
    async with (
        httpx.AsyncClient(base_url=bases[0], timeout=30) as first,
        httpx.AsyncClient(base_url=bases[1], timeout=30) as second,
    ):
        yield [first, second]


async def vacancies(client: httpx.AsyncClient, slot: str) -> int:
    body = {"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityIds": [slot]}
    response = await client.post("/octo/availability", json=body, headers=auth(KEY_B))
    assert response.status_code == 200, response.text
    found: int = response.json()[0]["vacancies"]
    return found


async def sweeps(services: Services) -> list[int]:
    """Ten sweeps at once, as a third process's would run."""
    return await asyncio.gather(*(services.expiry.expire_due() for _ in range(10)))


async def within(seconds: float, condition: Any) -> None:
    """Wait until `condition()` (a coroutine function) holds; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.1)


async def test_two_servers_and_a_worker_behave_as_one(
    services: Services, database_url: str, tmp_path: Path
) -> None:
    await load(services, booking_catalog())
    async with receiver() as target:
        reseller_a = await services.connections.authenticate(KEY_A)
        assert reseller_a is not None
        await services.webhooks.create(
            reseller_a[0].id, WebhookInput(event="booking_update", url=target.url), frozenset()
        )
        with berth_processes(database_url, tmp_path) as bases:
            async with clients(bases) as (first, second):
                both = [first, second]
                # No oversell: 30 reservations of one place for 20 places, through both processes.
                answers, _ = await asyncio.gather(
                    asyncio.gather(
                        *(
                            both[n % 2].post(
                                "/octo/bookings", json=reservation(("adult",), SLOT), headers=auth()
                            )
                            for n in range(30)
                        )
                    ),
                    sweeps(services),
                )
                held = [a.json() for a in answers if a.status_code == 200]
                refused = [a.json()["error"] for a in answers if a.status_code != 200]
                assert len(held) == 20 and set(refused) == {"UNPROCESSABLE_ENTITY"}, refused
                assert [await vacancies(client, SLOT) for client in both] == [0, 0]

                # A hold through one process is seen by the other on its next request.
                before = await vacancies(second, OTHER_SLOT)
                hold = await first.post(
                    "/octo/bookings", json=reservation(("adult", "adult"), OTHER_SLOT), headers=auth()
                )
                assert hold.status_code == 200, hold.text
                assert await vacancies(second, OTHER_SLOT) == before - 2

                # Confirms and cancels through both, among sweeps: every booking_update once.
                changes = [
                    both[n % 2].post(
                        f"/octo/bookings/{b['uuid']}/confirm", json={"contact": GUEST}, headers=auth()
                    )
                    for n, b in enumerate(held)
                ] + [both[1].post(f"/octo/bookings/{hold.json()['uuid']}/cancel", headers=auth())]
                outcomes, _ = await asyncio.gather(asyncio.gather(*changes), sweeps(services))
                assert [o.status_code for o in outcomes] == [200] * len(changes)

                async def all_delivered() -> bool:
                    return len({r.headers["webhook-id"] for r in target.requests}) == len(changes)

                await within(30, all_delivered)
                await asyncio.sleep(2)  # time for a second delivery of any of them to show up
                ids = [r.headers["webhook-id"] for r in target.requests]
                assert len(ids) == len(set(ids)) == len(changes)

                # A catalogue import through one process reaches the other within seconds.
                products = booking_products()
                products[0]["options"][0]["schedules"][0]["capacity"] = 40
                imported = await first.put(
                    "/admin/api/catalog", content=catalog_to_yaml(catalog(*products)).encode(), headers=ADMIN
                )
                assert imported.status_code == 200, imported.text

                async def second_sees_it() -> bool:
                    return await vacancies(second, SLOT) == 20

                await within(5, second_sees_it)
    assert troubles(tmp_path) == []


def troubles(logs: Path) -> list[str]:
    """Lines of the processes' output that tell of a failure."""
    signs = ("sweep failed", "Deadlock", "delivery loop failed", "Traceback", " 500 ")
    return [
        f"{log_file.name}: {line}"
        for log_file in sorted(logs.glob("process-*.log"))
        for line in log_file.read_text().splitlines()
        if any(sign in line for sign in signs)
    ]
