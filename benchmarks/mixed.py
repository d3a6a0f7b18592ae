"""The look-to-book route (issue 31): what resellers really get when a few of their requests
book while most look.

Each of the route's connections loops until the round ends: with probability WRITE_SHARE a
reservation of one adult on a random bookable departure of the demo's next 60 days, then its
confirmation; otherwise an availability check of one random day, or (half the time) a 30-day
calendar from a random day, on a random product and option. Each write drops the kept
answers of its product and day (issue 41 §2), so the reads meet the cache as they would in
production; `--env BERTH_ANSWER_CACHE_SECONDS=0` measures them without it.

wrk reports one latency distribution per run, so this route has its own load generator: an
aiohttp client, the same against the baseline (which answers any path), reporting reads and
writes as two rows (`look-to-book-reads`, `look-to-book-writes`). The client costs CPU on the
same machine, as wrk does; both servers pay it alike.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from loadgen import WrkResult

WRITE_SHARE = 0.05
DAYS = 60
CALENDAR_DAYS = 30
CONFIRM = {"contact": {"fullName": "Bench Mark", "emailAddress": "bench@example.com"}}


@dataclass(frozen=True)
class Bookable:
    product_id: str
    option_id: str
    unit_id: str
    departures: tuple[str, ...]


@dataclass(frozen=True)
class MixedPlan:
    options: tuple[tuple[str, str, str], ...]  # (product id, option id, a unit id) to look at
    bookable: tuple[Bookable, ...]  # options a reservation and its confirmation succeeded on


def _day(offset: int) -> str:
    return (dt.date.today() + dt.timedelta(days=offset)).isoformat()


def _unit(option: Mapping[str, Any]) -> str | None:
    units = option.get("units") or []
    adults = [u["id"] for u in units if u.get("type") == "ADULT"]
    return adults[0] if adults else (units[0]["id"] if units else None)


async def plan(base_url: str, headers: Mapping[str, str]) -> MixedPlan:
    """The demo's products and options, and those a reservation then a confirmation of one
    unit succeeds on (tried once each; options needing more, e.g. a rental duration, left out)."""
    options: list[tuple[str, str, str]] = []
    bookable: list[Bookable] = []
    async with aiohttp.ClientSession(base_url, headers=dict(headers)) as session:
        async with session.get("/octo/products") as answer:
            answer.raise_for_status()
            products = await answer.json()
        for product in products:
            for option in product.get("options", []):
                unit = _unit(option)
                if unit is None:
                    continue
                options.append((product["id"], option["id"], unit))
                found = await _try_booking(session, product["id"], option["id"], unit)
                if found is not None:
                    bookable.append(found)
    if not options or not bookable:
        raise RuntimeError("look-to-book: the demo has no option to look at or to book")
    return MixedPlan(tuple(options), tuple(bookable))


async def _try_booking(
    session: aiohttp.ClientSession, product_id: str, option_id: str, unit: str
) -> Bookable | None:
    window = {
        "productId": product_id,
        "optionId": option_id,
        "localDateStart": _day(1),
        "localDateEnd": _day(DAYS),
    }
    async with session.post("/octo/availability", json=window) as answer:
        if answer.status != 200:
            return None
        slots = await answer.json()
    open_ids = tuple(s["id"] for s in slots if s.get("available") and s.get("status") != "SOLD_OUT")
    if not open_ids:
        return None
    body = _reservation(product_id, option_id, unit, open_ids[len(open_ids) // 2])
    async with session.post("/octo/bookings", json=body) as answer:
        if answer.status != 200:
            return None
    async with session.post(f"/octo/bookings/{body['uuid']}/confirm", json=CONFIRM) as answer:
        if answer.status != 200:
            return None
    return Bookable(product_id, option_id, unit, open_ids)


def _reservation(product_id: str, option_id: str, unit: str, availability_id: str) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        "productId": product_id,
        "optionId": option_id,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": unit}],
    }


def percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@dataclass
class _Tally:
    latencies_ms: list[float]
    non_2xx: int = 0
    errors: int = 0
    statuses: dict[str, int] = field(default_factory=dict)  # "400 UNPROCESSABLE_ENTITY": count

    def result(self, seconds: float) -> WrkResult:
        count = len(self.latencies_ms)
        return WrkResult(
            requests=count,
            duration_s=seconds,
            requests_per_s=count / seconds if seconds > 0 else 0.0,
            latency_ms={
                "p50": percentile(self.latencies_ms, 0.50),
                "p90": percentile(self.latencies_ms, 0.90),
                "p99": percentile(self.latencies_ms, 0.99),
            },
            non_2xx=self.non_2xx,
            socket_errors={"errors": self.errors} if self.errors else {},
            statuses=dict(self.statuses),
        )


async def run_mixed(
    base_url: str,
    mixed: MixedPlan,
    headers: Mapping[str, str],
    *,
    connections: int,
    seconds: float,
    seed: int,
) -> tuple[WrkResult, WrkResult]:
    """(reads, writes) of one round of `seconds` with `connections` connections."""
    chance = random.Random(seed)
    reads, writes = _Tally([]), _Tally([])
    deadline = time.monotonic() + seconds

    async def timed(session: aiohttp.ClientSession, tally: _Tally, path: str, body: Any) -> bool:
        started = time.perf_counter()
        try:
            async with session.post(
                path, data=json.dumps(body), headers={"Content-Type": "application/json"}
            ) as answer:
                content = await answer.read()
                ok = answer.status < 400
        except aiohttp.ClientError:
            tally.errors += 1
            return False
        tally.latencies_ms.append((time.perf_counter() - started) * 1000)
        if not ok:
            tally.non_2xx += 1
            try:
                code = json.loads(content).get("error", "")
            except (ValueError, AttributeError):
                code = ""
            status = f"{answer.status} {code}".strip()
            tally.statuses[status] = tally.statuses.get(status, 0) + 1
        return ok

    async def connection(session: aiohttp.ClientSession) -> None:
        while time.monotonic() < deadline:
            if chance.random() < WRITE_SHARE:
                place = chance.choice(mixed.bookable)
                body = _reservation(
                    place.product_id, place.option_id, place.unit_id, chance.choice(place.departures)
                )
                if await timed(session, writes, "/octo/bookings", body):
                    await timed(session, writes, f"/octo/bookings/{body['uuid']}/confirm", CONFIRM)
                continue
            product_id, option_id, unit = chance.choice(mixed.options)
            first = chance.randrange(1, DAYS + 1)
            if chance.random() < 0.5:
                query = {"productId": product_id, "optionId": option_id, "localDate": _day(first)}
                await timed(session, reads, "/octo/availability", query)
            else:
                query = {
                    "productId": product_id, "optionId": option_id, "localDateStart": _day(first),
                    "localDateEnd": _day(first + CALENDAR_DAYS - 1), "units": [{"id": unit, "quantity": 1}],
                }  # fmt: skip
                await timed(session, reads, "/octo/availability/calendar", query)

    connector = aiohttp.TCPConnector(limit=connections)
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(
        base_url, headers=dict(headers), connector=connector, timeout=timeout
    ) as session:
        started = time.monotonic()
        await asyncio.gather(*(connection(session) for _ in range(connections)))
        elapsed = time.monotonic() - started
    return reads.result(elapsed), writes.result(elapsed)
