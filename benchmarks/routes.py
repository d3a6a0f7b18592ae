"""What the benchmark measures: routes as data, and the targets of issue 20.

A route is one row of the results table. run.py drives it with wrk for `--duration` seconds,
against the baseline and against Berth in turn, with the same method, path, headers and Lua
script. To add a route, append a `Route` to `ROUTES` (see the commented examples at the end
of this file and benchmarks/README.md) and, when an issue gives it one, a target to `TARGETS`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote
from uuid import uuid4

import httpx
from servers import BenchError

LUA_DIR = Path(__file__).resolve().parent / "lua"

# Ratio targets (2-core machine): the route's best requests/s divided by the best requests/s of
# the baseline in the same run must reach at least this much; a dict gives one target per
# database mode. Keyed by route name; targets of routes not in ROUTES yet wait here for them.
# Issue 20 set the first ones; issue 31 raised those of the write routes, supplier and products
# (its p99 targets are read off the table: reserve <= 60 ms, flow and look-to-book writes <= 150
# ms, look-to-book reads <= 30 ms).
TARGETS: dict[str, float | dict[str, float]] = {
    "supplier": 0.75,
    "products": 0.75,
    "availability-1d": 0.4,
    "calendar-30d": 0.15,
    "calendar-365d": 0.05,
    "booking-reserve": {"sqlite": 0.10, "postgres": 0.06},
    "booking-reserve-60": {"sqlite": 0.12, "postgres": 0.08},
    "booking-flow": 0.05,
    "order-create": 0.04,
    "look-to-book-reads": 0.25,
}

# Issue 20, "flat as data grows": with `--bookings N` these routes are measured again once N
# bookings were seeded into the database (seed.py); each ratio must stay within FLAT_WITHIN
# of (at most that much below) its ratio on the small database.
BIG_DATA_ROUTES = (
    "availability-1d",
    "calendar-30d",
    "booking-reserve",
    "bookings-by-reference",
    "backoffice-search",
)
FLAT_WITHIN = 0.15

# Issue 4 (and 20): RSS of every uvicorn worker at most this many MB once the database holds this
# many bookings (run.py tops it up to that count after the routes); issue 41 lowered it from 150.
RSS_TARGET_MB = 140.0
RSS_AFTER_BOOKINGS = 10_000

RESELLER = {"Authorization": "Bearer demo-reseller-a"}
CONTENT_PRICING = {**RESELLER, "Octo-Capabilities": "octo/content, octo/pricing"}
# Issue 37: demo-reseller-a buys under a contract (20 % commission); the demo's box office has
# the default contract (the catalogue itself). The same reads under both, in the same run, show
# what contracts cost a read (its note compares the pairs).
NO_CONTRACT = {"Authorization": "Bearer demo-box-office-not-for-resellers"}  # the demo's BOX_OFFICE


@dataclass(frozen=True)
class BenchContext:
    """What a route's hooks get: the Berth under test and its database."""

    mode: str  # "sqlite" or "postgres"
    base_url: str  # Berth under test, e.g. http://127.0.0.1:41234
    database_url: str  # the fresh database Berth runs on; checks may read it directly
    workdir: Path  # a temporary directory of this mode's run
    client: httpx.AsyncClient  # base_url set, no default headers
    bare_database_url: str | None = None  # the bare app's own database, when a bare route runs

    async def reseller_get(self, path: str, headers: Mapping[str, str] = RESELLER) -> Any:
        answer = await self.client.get(path, headers=dict(headers))
        answer.raise_for_status()
        return answer.json()

    async def reseller_post(self, path: str, body: Any, headers: Mapping[str, str] = RESELLER) -> Any:
        answer = await self.client.post(path, json=body, headers=dict(headers))
        answer.raise_for_status()
        return answer.json()


@dataclass(frozen=True)
class RouteRun:
    """What a check hook gets after Berth's measured rounds of its route."""

    requests: int  # requests answered in Berth's measured rounds (warm-up excluded)
    statuses: Mapping[str, int]  # by status and OCTO error code, when the script counts them
    collected: list[str]  # values the script collected with bench.collect(), e.g. booking uuids


@dataclass(frozen=True)
class Prepared:
    """What a setup hook returns when more than the body depends on the database: a GET whose
    query names something the hook created, or headers it obtained (a session cookie)."""

    path: str | None = None  # replaces Route.path (the baseline gets the same path)
    headers: Mapping[str, str] = field(default_factory=dict)  # added to Route.headers
    body: Any = None  # as a plain return value: replaces Route.body unless None


# setup(context) -> the JSON body to send (replaces Route.body), None to keep Route.body, or a
# `Prepared`. It runs before the route's first round, once per database mode (and again
# before the route is measured on the big database, with --bookings).
SetupHook = Callable[[BenchContext], Awaitable[Any]]
# check(context, run) -> problems found (empty: all good). It runs after Berth's rounds.
CheckHook = Callable[[BenchContext, RouteRun], Awaitable[list[str]]]


@dataclass(frozen=True)
class Route:
    name: str  # short, unique; `--only NAME` selects it; TARGETS is keyed by it
    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    # JSON body of a POST, written to a file that the Lua script reads (BERTH_BENCH_BODY_FILE).
    body: Any = None
    # Lua file under benchmarks/lua/. Default: none for GET, post.lua (same body every request)
    # otherwise; booking.lua fills "{{uuid}}" afresh per request; reserve_confirm.lua is a flow.
    script: str | None = None
    setup: SetupHook | None = None
    check: CheckHook | None = None
    # Non-2xx answers that are expected, keyed as the script counts them ("409", or
    # "400 UNPROCESSABLE_ENTITY"): they do not count against the route (e.g. sold out).
    expected_errors: frozenset[str] = frozenset()
    # Measured on the bare app (bare_app.py, the write ceiling) instead of Berth.
    bare: bool = False
    # The bare route this route's rate is divided by (`ceiling_ratio`), measured in the same
    # run and mode; selecting this route selects that one too.
    ceiling: str | None = None

    def target(self, mode: str) -> float | None:
        """The ratio to reach on the database `mode` ("sqlite", "postgres"), if any."""
        found = TARGETS.get(self.name)
        return found.get(mode) if isinstance(found, dict) else found

    def script_path(self) -> Path | None:
        if self.script is not None:
            return LUA_DIR / self.script
        if self.method.upper() != "GET":
            return LUA_DIR / "post.lua"
        return None


ROUTES: list[Route] = [
    Route("supplier", "GET", "/octo/supplier", headers=RESELLER),
    Route("products", "GET", "/octo/products", headers=CONTENT_PRICING),
    Route("products-no-contract", "GET", "/octo/products", headers={**CONTENT_PRICING, **NO_CONTRACT}),
]


ADMIN = {"Authorization": "Bearer demo-admin"}
TOUR = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
BENCH_CRUISE = {"productId": "bench-cruise", "optionId": "DEFAULT"}
# A product with room for every reservation a run can make, so the booking rows measure
# reserving, not refusing. booking-reserve, booking-flow and order-create send all their
# reservations to ONE departure: the worst case for the slot lock (every writer queues on the
# same row); booking-reserve-60 spreads them over 60.
BENCH_PRODUCT = """
- id: bench-cruise
  internalName: Benchmark cruise
  timeZone: Europe/London
  availabilityType: START_TIME
  deliveryFormats: [QRCODE]
  deliveryMethods: [TICKET]
  options:
    - id: DEFAULT
      internalName: Big boat
      restrictions: {maxUnits: 10}
      schedules:
        - startTimes: ["10:00"]
          capacity: 1000000
      units:
        - {id: adult, internalName: Adult, type: ADULT}
"""


def _day(offset: int) -> str:
    return (dt.date.today() + dt.timedelta(days=offset)).isoformat()


async def _availability_one_day(ctx: BenchContext) -> Any:
    return {**TOUR, "localDate": _day(2)}


def _calendar(days: int) -> SetupHook:
    async def setup(ctx: BenchContext) -> Any:
        return {
            **TOUR,
            "localDateStart": _day(1),
            "localDateEnd": _day(days),
            "units": [{"id": "adult", "quantity": 2}],
        }

    return setup


async def _add_product(ctx: BenchContext, product_id: str, text: str) -> None:
    """Add a product to the catalogue, once per database mode."""
    from berth.settings import Settings

    catalog = await ctx.client.get("/admin/api/catalog", headers=ADMIN)
    catalog.raise_for_status()
    if f"id: {product_id}\n" not in catalog.text:
        # The export writes list items at the start of the line, as the bench products are written.
        updated = catalog.text.replace("\nproducts:\n", "\nproducts:\n" + text.lstrip("\n"), 1)
        answer = await ctx.client.put("/admin/api/catalog", content=updated.encode(), headers=ADMIN)
        answer.raise_for_status()
        # The other workers trust their last API key check, and the catalogue version read with
        # it, for BERTH_AUTH_CACHE_SECONDS: until then they answer that the product does not exist.
        await asyncio.sleep(float(Settings.model_fields["auth_cache_seconds"].default) + 0.2)


async def _cruise_departures(ctx: BenchContext, first_day: int, last_day: int) -> list[str]:
    """Add the bench product; the availability ids of its departures from `first_day` to
    `last_day` days ahead (one a day)."""
    await _add_product(ctx, "bench-cruise", BENCH_PRODUCT)
    slots = await ctx.reseller_post(
        "/octo/availability",
        {**BENCH_CRUISE, "localDateStart": _day(first_day), "localDateEnd": _day(last_day)},
    )
    return [slot["id"] for slot in slots]


async def _reservation(ctx: BenchContext) -> Any:
    """Reserve two places on the bench product's departure in three days."""
    (departure,) = await _cruise_departures(ctx, 3, 3)
    return {
        "uuid": "{{uuid}}", **BENCH_CRUISE, "availabilityId": departure,
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
    }  # fmt: skip


async def _order(ctx: BenchContext) -> Any:
    """An order holding two bookings on the bench departure, in one transaction."""
    booking = await _reservation(ctx)
    return {"bookings": [booking, {**booking, "uuid": "{{uuid}}"}]}


# Places per departure of the options the booking routes (and the seed) fill.
CAPACITY = {
    ("bench-cruise", "DEFAULT"): 1_000_000,
    ("thames-sightseeing", "DEFAULT"): 200,
    ("thames-sightseeing", "evening"): 30,
}


async def _no_oversell(ctx: BenchContext, run: RouteRun) -> list[str]:
    """Straight from the database: no slot holds more than its capacity, and every booking
    answered 200 exists."""
    from sqlalchemy import func, select

    from berth.domain.bookings import HOLDING, BookingStatus
    from berth.store.database import Database
    from berth.store.tables import bookings

    database = Database(ctx.database_url)
    problems: list[str] = []
    try:
        async with database.transaction(write=False) as conn:
            live = [s.value for s in HOLDING] + [BookingStatus.ON_HOLD.value]
            held = await conn.execute(
                select(
                    bookings.c.product_id,
                    bookings.c.option_id,
                    bookings.c.availability_id,
                    func.sum(bookings.c.pax),
                )
                .where(bookings.c.status.in_(live), bookings.c.test_mode.is_(False))
                .group_by(bookings.c.product_id, bookings.c.option_id, bookings.c.availability_id)
            )
            for product_id, option_id, availability_id, pax in held:
                limit = CAPACITY.get((product_id, option_id))
                if limit is not None and int(pax) > limit:
                    problems.append(f"{product_id} {availability_id}: {pax} places held, capacity {limit}")
            uuids = set(run.collected)
            found: set[str] = set()
            chunk = list(uuids)
            for start in range(0, len(chunk), 500):
                rows = await conn.execute(
                    select(bookings.c.uuid).where(bookings.c.uuid.in_(chunk[start : start + 500]))
                )
                found.update(row[0] for row in rows)
            missing = uuids - found
            if missing:
                problems.append(f"{len(missing)} bookings answered 200 are not in the database")
    finally:
        await database.dispose()
    return problems


async def _reservation_60(ctx: BenchContext) -> Any:
    """Reservations of two on the bench cruise spread over 60 departures (days 3 to 62): the
    template on the first line, one availability id a line after it (booking_slots.lua)."""
    departures = await _cruise_departures(ctx, 3, 62)
    if len(departures) != 60:
        raise BenchError(f"the bench cruise has {len(departures)} departures in days 3 to 62, not 60")
    template = {
        "uuid": "{{uuid}}", **BENCH_CRUISE, "availabilityId": "{{slot}}",
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
    }  # fmt: skip
    return "\n".join([json.dumps(template), *departures])


async def _confirmed_booking(ctx: BenchContext, reseller_reference: str | None = None) -> dict[str, Any]:
    """A real, confirmed booking of two on the Thames cruise's first departure in four days."""
    slots = await ctx.reseller_post("/octo/availability", {**TOUR, "localDate": _day(4)})
    body: dict[str, Any] = {
        "uuid": str(uuid4()), **TOUR, "availabilityId": slots[0]["id"],
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
    }  # fmt: skip
    if reseller_reference is not None:
        body["resellerReference"] = reseller_reference
    booking = await ctx.reseller_post("/octo/bookings", body)
    contact = {"firstName": "Bench", "lastName": "Mark", "emailAddress": "bench@example.com"}
    confirmed: dict[str, Any] = await ctx.reseller_post(
        f"/octo/bookings/{booking['uuid']}/confirm", {"contact": contact}
    )
    return confirmed


async def _by_reseller_reference(ctx: BenchContext) -> Prepared:
    """GET /octo/bookings?resellerReference=… for the reference of a booking made here."""
    reference = f"BENCH-{uuid4().hex[:12].upper()}"
    await _confirmed_booking(ctx, reference)
    path = f"/octo/bookings?resellerReference={reference}"
    found = await ctx.reseller_get(path)
    if len(found) != 1 or found[0].get("resellerReference") != reference:
        raise BenchError(f"GET {path} answered {len(found)} bookings, not the one made")
    return Prepared(path=path)


_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


async def staff_cookie(base_url: str) -> str:
    """Sign in to the back office with the demo's admin token, as a person does (the form and
    its CSRF token); the `Cookie` header of the signed-in session. Sessions are signed cookies,
    not server state, so every worker accepts it."""
    from berth.demo.loader import DEMO_ADMIN_TOKEN

    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        form = await client.get("/admin/sign-in")
        found = _CSRF.search(form.text)
        if form.status_code != 200 or found is None:
            raise BenchError(f"GET /admin/sign-in answered {form.status_code} without a sign-in form")
        anonymous = form.cookies.get("berth_session")
        answer = await client.post(
            "/admin/sign-in",
            data={"email": "", "password": DEMO_ADMIN_TOKEN, "csrf_token": found.group(1), "next": "/admin"},
            headers={"Cookie": f"berth_session={anonymous}"} if anonymous else {},
        )
        session = answer.cookies.get("berth_session")
        if answer.status_code != 303 or not session:
            raise BenchError(
                f"signing in to the back office answered {answer.status_code}: {answer.text[:300]}"
            )
        return f"berth_session={session}"


async def _backoffice_search(ctx: BenchContext) -> Prepared:
    """The back office's booking search (GET /admin/bookings?reference=…) for the supplier
    reference of a booking made here, signed in through the session cookie."""
    cookie = await staff_cookie(ctx.base_url)
    reference = (await _confirmed_booking(ctx))["supplierReference"]
    path = f"/admin/bookings?reference={reference}"
    page = await ctx.client.get(path, headers={"Cookie": cookie})
    if page.status_code != 200 or reference not in page.text or "1 booking," not in page.text:
        raise BenchError(f"GET {path} answered {page.status_code} without the booking: {page.text[:300]}")
    return Prepared(path=path, headers={"Cookie": cookie})


async def ensure_bench_products(ctx: BenchContext) -> None:
    """The bench cruise in the catalogue (seed.py puts bookings on it)."""
    await _add_product(ctx, "bench-cruise", BENCH_PRODUCT)


async def _bare_reservation(ctx: BenchContext) -> Any:
    """booking-reserve's body, its departure added to the bare app's database with the bench
    cruise's capacity."""
    from bare_app import add_departures

    body = await _reservation(ctx)
    if ctx.bare_database_url is None:
        raise BenchError("the bare app has no database")
    key = (body["productId"], body["optionId"])
    await add_departures(ctx.bare_database_url, [(*key, body["availabilityId"], CAPACITY[key])])
    return body


async def _bare_books(ctx: BenchContext, run: RouteRun) -> list[str]:
    """Straight from the bare app's database: no departure over its capacity, held places equal
    to the bookings' places, every booking answered 200 stored."""
    from bare_app import audit

    return await audit(ctx.bare_database_url, run.collected) if ctx.bare_database_url else ["no database"]


ROUTES += [
    # The write ceiling (issue 41): the bare app (bare_app.py) does the essence of booking-reserve
    # and booking-flow on the raw driver, with their requests and scripts.
    Route("bare-reserve", "POST", "/octo/bookings", RESELLER, setup=_bare_reservation, script="booking.lua",
          check=_bare_books, bare=True),
    Route("bare-flow", "POST", "/octo/bookings", RESELLER, setup=_bare_reservation, script="reserve_confirm.lua",
          check=_bare_books, bare=True),
    Route("availability-1d", "POST", "/octo/availability", RESELLER, setup=_availability_one_day),
    Route("availability-1d-no-contract", "POST", "/octo/availability", NO_CONTRACT, setup=_availability_one_day),
    Route("calendar-30d", "POST", "/octo/availability/calendar", RESELLER, setup=_calendar(30)),
    Route("calendar-365d", "POST", "/octo/availability/calendar", RESELLER, setup=_calendar(365)),
    Route("booking-reserve", "POST", "/octo/bookings", RESELLER, setup=_reservation, script="booking.lua",
          check=_no_oversell, ceiling="bare-reserve"),
    Route("booking-reserve-60", "POST", "/octo/bookings", RESELLER, setup=_reservation_60,
          script="booking_slots.lua", check=_no_oversell, ceiling="bare-reserve"),
    Route("booking-flow", "POST", "/octo/bookings", RESELLER, setup=_reservation, script="reserve_confirm.lua",
          check=_no_oversell, ceiling="bare-flow"),
    Route("order-create", "POST", "/octo/orders", RESELLER, setup=_order, script="booking.lua", check=_no_oversell,
          ceiling="bare-reserve"),
    Route("bookings-by-reference", "GET", "/octo/bookings?resellerReference=…", RESELLER,
          setup=_by_reseller_reference),
    Route("backoffice-search", "GET", "/admin/bookings?reference=…", setup=_backoffice_search),
]  # fmt: skip


# --- the top-up to RSS_AFTER_BOOKINGS bookings (run.py, after the routes) ----------------------

TOP_UP_DAYS = 60  # departures of the bench cruise the top-up spreads its reservations over


async def count_bookings(database_url: str) -> int:
    """Bookings in the database, whatever their status."""
    from sqlalchemy import func, select

    from berth.store.database import Database
    from berth.store.tables import bookings

    database = Database(database_url)
    try:
        async with database.transaction(write=False) as conn:
            return int((await conn.execute(select(func.count()).select_from(bookings))).scalar_one())
    finally:
        await database.dispose()


async def reserve_spread(
    ctx: BenchContext, count: int, concurrency: int, progress: Callable[[int, int], None]
) -> None:
    """Make `count` reservations over HTTP, `concurrency` at a time, each on a departure of
    the bench cruise picked at random among the next TOP_UP_DAYS days. A departure that
    refuses the party (sold out) is dropped and the reservation made on another.
    `progress(made, sold_out)` follows every answer; any other answer stops with BenchError."""
    template = await _reservation(ctx)
    departures = await _cruise_departures(ctx, 1, TOP_UP_DAYS)
    made = sold_out = 0
    left = count
    failure: str | None = None

    async def reserve() -> None:
        nonlocal made, sold_out, left, failure
        while left > 0 and failure is None:
            if not departures:
                failure = f"every departure of the bench cruise in the next {TOP_UP_DAYS} days is sold out"
                return
            left -= 1
            departure = random.choice(departures)
            body = {**template, "uuid": str(uuid4()), "availabilityId": departure}
            try:
                answer = await ctx.client.post("/octo/bookings", json=body, headers=RESELLER)
                refused = answer.status_code == 400 and answer.json().get("error") == "UNPROCESSABLE_ENTITY"
            except (httpx.HTTPError, ValueError) as exc:
                failure = f"POST /octo/bookings failed: {type(exc).__name__}: {exc}"
                return
            if answer.status_code == 200:
                made += 1
            elif refused:
                sold_out += 1
                left += 1
                if departure in departures:
                    departures.remove(departure)
            else:
                failure = f"POST /octo/bookings answered {answer.status_code}: {answer.text[:300]}"
                return
            progress(made, sold_out)

    await asyncio.gather(*(reserve() for _ in range(concurrency)))
    if failure is not None:
        raise BenchError(failure)


# --- octo/rentals (issue 6): the demo's bike hire (Europe/London, 12 hybrid bikes) -----------

RENTAL_BIKES = {"productId": "city-bike-hire", "optionId": "DEFAULT"}
RENTAL_STOCK = 12
RENTALS_PRICING = {**RESELLER, "Octo-Capabilities": "octo/rentals, octo/pricing"}


def _london_day(offset: int) -> str:
    from zoneinfo import ZoneInfo

    today = dt.datetime.now(ZoneInfo("Europe/London")).date()
    return (today + dt.timedelta(days=offset)).isoformat()


async def _rental_starts(ctx: BenchContext, day: str) -> list[str]:
    slots = await ctx.reseller_post(
        "/octo/availability", {**RENTAL_BIKES, "localDate": day, "rentalDurationId": "2-hours"}
    )
    return [slot["id"] for slot in slots]


async def _rental_availability(ctx: BenchContext) -> Any:
    """Tomorrow's pick-ups for a day's rental, with rentals of every length already out
    around them (so the interval query returns rows and the sweep has work)."""
    tomorrow = _london_day(1)
    starts = await _rental_starts(ctx, tomorrow)
    for start, duration in zip(starts, ("3-days", "1-day", "half-day", "2-hours", "1-day"), strict=False):
        await ctx.reseller_post("/octo/bookings", {
            **RENTAL_BIKES, "availabilityId": start, "rentalDurationId": duration,
            "unitItems": [{"unitId": "bike"}, {"unitId": "bike"}],
        })  # fmt: skip
    return {**RENTAL_BIKES, "localDateStart": tomorrow, "localDateEnd": tomorrow, "rentalDurationId": "1-day",
            "units": [{"id": "bike", "quantity": 1}]}  # fmt: skip


async def _rental_calendar(ctx: BenchContext) -> Any:
    return {**RENTAL_BIKES, "localDateStart": _london_day(1), "localDateEnd": _london_day(30),
            "rentalDurationId": "3-days", "units": [{"id": "bike", "quantity": 1}]}  # fmt: skip


async def _rental_reservation(ctx: BenchContext) -> Any:
    # booking.lua replaces every "{{uuid}}" with a fresh UUID on each request. The stock of a
    # start runs out within the first requests; then the route measures the refusal, which
    # takes the same lock and re-reads the same peak.
    start = (await _rental_starts(ctx, _london_day(2)))[0]
    return {"uuid": "{{uuid}}", **RENTAL_BIKES, "availabilityId": start, "rentalDurationId": "2-hours",
            "unitItems": [{"uuid": "{{uuid}}", "unitId": "bike"}]}  # fmt: skip


async def _rentals_never_oversold(ctx: BenchContext, run: RouteRun) -> list[str]:
    """Read the database: at no instant more bikes out than the stock, and every booking
    answered 200 is stored."""
    from sqlalchemy import select

    from berth.domain.rentals import HeldInterval, peak_held
    from berth.store.database import Database
    from berth.store.tables import bookings

    database = Database(ctx.database_url)
    try:
        async with database.transaction(write=False) as conn:
            rows = (
                await conn.execute(
                    select(bookings.c.uuid, bookings.c.slot_start, bookings.c.slot_end, bookings.c.pax).where(
                        bookings.c.product_id == RENTAL_BIKES["productId"],
                        bookings.c.option_id == RENTAL_BIKES["optionId"],
                        bookings.c.status.in_(["ON_HOLD", "CONFIRMED", "PENDING", "REDEEMED"]),
                    )
                )
            ).all()
    finally:
        await database.dispose()
    problems = []
    held = [HeldInterval(row.slot_start, row.slot_end, row.pax) for row in rows]
    if held:
        (peak,) = peak_held(held, [(min(h.start for h in held), max(h.end for h in held))])
        if peak > RENTAL_STOCK:
            problems.append(f"{peak} bikes out at once; the stock is {RENTAL_STOCK}")
    missing = set(run.collected) - {row.uuid for row in rows}
    if missing:
        problems.append(f"{len(missing)} bookings answered 200 are not stored")
    return problems


ROUTES += [
    Route("rental-availability-1d", "POST", "/octo/availability", RENTALS_PRICING, setup=_rental_availability),
    Route("rental-calendar-30d", "POST", "/octo/availability/calendar", RENTALS_PRICING, setup=_rental_calendar),
    Route("rental-booking-reserve", "POST", "/octo/bookings", RENTALS_PRICING, setup=_rental_reservation,
          script="booking.lua", check=_rentals_never_oversold,
          expected_errors=frozenset({"400 UNPROCESSABLE_ENTITY"})),  # sold out
]  # fmt: skip


# --- octo/resources (issue 5) ----------------------------------------------------------------

RESOURCES = {**RESELLER, "Octo-Capabilities": "octo/resources"}
CRUISE = {"productId": "harbour-cruise", "optionId": "DEFAULT"}
SEATED_ROWS, SEATED_COLUMNS = 20, "ABCDEFGHJK"  # 200 seats a departure
SEATED_DAYS, SEATED_TIMES = 30, ("09:00", "11:00", "13:00", "15:00")


def _seated_product() -> str:
    """A product whose every reservation takes seats on a seated boat (one per party) and
    places on coaches (split): room for 12,000 parties of two over 120 departures."""
    seats = "".join(
        f"                  - {{id: {row}{column}, row: {row}, column: {column}}}\n"
        for row in range(1, SEATED_ROWS + 1)
        for column in SEATED_COLUMNS
    )
    times = ", ".join(f'"{t}"' for t in SEATED_TIMES)
    return f"""
- id: bench-seats
  internalName: Benchmark seated cruise
  timeZone: Europe/London
  availabilityType: START_TIME
  deliveryFormats: [QRCODE]
  deliveryMethods: [TICKET]
  options:
    - id: DEFAULT
      internalName: Reserved seats
      restrictions: {{maxUnits: 10}}
      schedules:
        - startTimes: [{times}]
          capacity: null
      units:
        - {{id: adult, internalName: Adult, type: ADULT}}
      resourceGroups:
        - id: boats
          title: Boats
          split: false
          resources:
            - id: big-boat
              title: Big boat
              seatMap:
                seats:
{seats}        - id: coaches
          title: Coaches
          split: true
          resources:
            - {{id: coach-a, title: Coach A, capacity: 120}}
            - {{id: coach-b, title: Coach B, capacity: 120}}
"""


async def _cruise_availability(ctx: BenchContext) -> Any:
    return {**CRUISE, "localDate": _day(2), "units": [{"id": "adult", "quantity": 2}]}


async def _cruise_resources(ctx: BenchContext) -> Any:
    slots = await ctx.reseller_post("/octo/availability", {**CRUISE, "localDate": _day(2)})
    return {**CRUISE, "availabilityId": slots[0]["id"], "units": [{"id": "adult", "quantity": 2}]}


async def _seated_reservation(ctx: BenchContext) -> Any:
    """Add the seated bench product; the body is the reservation template on its first line
    (with "{{uuid}}" and "{{slot}}"), then one availability id a line for booking_slots.lua."""
    await _add_product(ctx, "bench-seats", _seated_product())
    bench = {"productId": "bench-seats", "optionId": "DEFAULT"}
    slots = await ctx.reseller_post(
        "/octo/availability", {**bench, "localDateStart": _day(2), "localDateEnd": _day(SEATED_DAYS + 1)}
    )
    template = {
        "uuid": "{{uuid}}", **bench, "availabilityId": "{{slot}}",
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
    }  # fmt: skip
    return "\n".join([json.dumps(template), *(s["id"] for s in slots)])


async def _no_seat_twice(ctx: BenchContext, run: RouteRun) -> list[str]:
    """Straight from the database: no seat of a departure held by two live bookings, no
    resource over its capacity, and every booking answered 200 exists with its seats."""
    from sqlalchemy import func, select

    from berth.domain.bookings import HOLDING, BookingStatus
    from berth.store.database import Database
    from berth.store.tables import booking_resources, booking_seats, bookings

    capacity = {"big-boat": SEATED_ROWS * len(SEATED_COLUMNS), "coach-a": 120, "coach-b": 120}
    database = Database(ctx.database_url)
    problems: list[str] = []
    try:
        async with database.transaction(write=False) as conn:
            live = [s.value for s in HOLDING] + [BookingStatus.ON_HOLD.value]
            held = await conn.execute(
                select(
                    bookings.c.availability_id,
                    booking_resources.c.resource_id,
                    func.sum(booking_resources.c.places),
                )
                .select_from(
                    booking_resources.join(bookings, bookings.c.id == booking_resources.c.booking_id)
                )
                .where(bookings.c.product_id == "bench-seats", bookings.c.status.in_(live))
                .group_by(bookings.c.availability_id, booking_resources.c.resource_id)
            )
            for availability_id, resource_id, places in held:
                if int(places) > capacity[resource_id]:
                    problems.append(
                        f"{availability_id} {resource_id}: {places} places held, capacity {capacity[resource_id]}"
                    )
            doubled = await conn.execute(
                select(booking_seats.c.availability_id, booking_seats.c.seat_id, func.count())
                .where(booking_seats.c.product_id == "bench-seats")
                .group_by(
                    booking_seats.c.availability_id, booking_seats.c.resource_id, booking_seats.c.seat_id
                )
                .having(func.count() > 1)
            )
            problems.extend(f"{a} seat {s} held {n} times" for a, s, n in doubled)
            # One statement, one snapshot: requests still finishing cannot fall between counts.
            unseated = await conn.execute(
                select(bookings.c.uuid, func.count(booking_seats.c.seat_id))
                .select_from(bookings.outerjoin(booking_seats, booking_seats.c.booking_id == bookings.c.id))
                .where(bookings.c.product_id == "bench-seats", bookings.c.status.in_(live))
                .group_by(bookings.c.uuid)
                .having(func.count(booking_seats.c.seat_id) != 2)
            )
            problems.extend(f"live party of two {uuid} holds {n} seat(s)" for uuid, n in unseated)
            uuids = list(set(run.collected))
            found: set[str] = set()
            for start in range(0, len(uuids), 500):
                rows = await conn.execute(
                    select(bookings.c.uuid).where(bookings.c.uuid.in_(uuids[start : start + 500]))
                )
                found.update(row[0] for row in rows)
            if len(found) != len(uuids):
                problems.append(f"{len(uuids) - len(found)} bookings answered 200 are not in the database")
    finally:
        await database.dispose()
    return problems


ROUTES += [
    Route("availability-resources-1d", "POST", "/octo/availability", RESOURCES, setup=_cruise_availability),
    Route("resources-preview", "POST", "/octo/availability/resources", RESOURCES, setup=_cruise_resources),
    Route("booking-reserve-seats", "POST", "/octo/bookings", RESOURCES, setup=_seated_reservation,
          script="booking_slots.lua", check=_no_seat_twice,
          expected_errors=frozenset({"400 UNPROCESSABLE_ENTITY"})),
]  # fmt: skip


# --- octo/pickups and octo/extras (issue 22) --------------------------------------------------

PICKUPS_EXTRAS = {**RESELLER, "Octo-Capabilities": "octo/pickups, octo/extras"}
BENCH_COACH = {"productId": "bench-coach", "optionId": "DEFAULT"}
BENCH_COACH_POINT = "0b5e7f1a-2c3d-4e5f-8a9b-1c2d3e4f5a60"
COACH_LUNCHES = 2000  # per departure: a run sells out, so the stock check is exercised
BENCH_COACH_PRODUCT = f"""
- id: bench-coach
  internalName: Benchmark coach
  timeZone: Europe/London
  availabilityType: START_TIME
  deliveryFormats: [QRCODE]
  deliveryMethods: [TICKET]
  options:
    - id: DEFAULT
      internalName: Coach with pickup and lunch
      restrictions: {{maxUnits: 10}}
      schedules:
        - startTimes: ["09:00"]
          capacity: 1000000
      pickupRequired: true
      pickupPoints:
        - {{id: {BENCH_COACH_POINT}, name: Bench Hotel, minutesBefore: 30, windowMinutes: 10}}
      extras:
        - {{id: lunch, internalName: Lunch, perUnit: true, maxQuantity: 1, stock: {COACH_LUNCHES}}}
      units:
        - {{id: adult, internalName: Adult, type: ADULT}}
"""


async def _coach_reservation(ctx: BenchContext) -> Any:
    """Two guests picked up at the bench hotel, each with a lunch, on one departure in three
    days: the places and the lunches are counted under the same slot lock."""
    await _add_product(ctx, "bench-coach", BENCH_COACH_PRODUCT)
    (departure,) = [
        slot["id"]
        for slot in await ctx.reseller_post(
            "/octo/availability", {**BENCH_COACH, "localDateStart": _day(3), "localDateEnd": _day(3)}
        )
    ]
    guest = {"unitId": "adult", "extraItems": [{"extraId": "lunch"}]}
    return {
        "uuid": "{{uuid}}", **BENCH_COACH, "availabilityId": departure, "pickupPointId": BENCH_COACH_POINT,
        "unitItems": [guest, guest],
    }  # fmt: skip


async def _no_lunch_oversold(ctx: BenchContext, run: RouteRun) -> list[str]:
    """Straight from the database: no more lunches held than the stock, every booking answered
    200 is stored with its pickup."""
    from sqlalchemy import func, select

    from berth.domain.bookings import HOLDING, BookingStatus
    from berth.store.database import Database
    from berth.store.tables import booking_extras, bookings

    database = Database(ctx.database_url)
    problems: list[str] = []
    try:
        async with database.transaction(write=False) as conn:
            live = [s.value for s in HOLDING] + [BookingStatus.ON_HOLD.value]
            held = await conn.scalar(
                select(func.sum(booking_extras.c.quantity))
                .select_from(booking_extras.join(bookings, bookings.c.id == booking_extras.c.booking_id))
                .where(bookings.c.product_id == "bench-coach", bookings.c.status.in_(live))
            )
            if int(held or 0) > COACH_LUNCHES:
                problems.append(f"{held} lunches held on one departure; the stock is {COACH_LUNCHES}")
            uuids = list(set(run.collected))
            stored: dict[str, Any] = {}
            for start in range(0, len(uuids), 500):
                rows = await conn.execute(
                    select(bookings.c.uuid, bookings.c.extensions).where(
                        bookings.c.uuid.in_(uuids[start : start + 500])
                    )
                )
                stored.update({row.uuid: row.extensions for row in rows})
            if len(stored) != len(uuids):
                problems.append(f"{len(uuids) - len(stored)} bookings answered 200 are not in the database")
            unpicked = [
                u for u, ext in stored.items() if (ext or {}).get("octo/pickups", {}).get("pointId") is None
            ]
            if unpicked:
                problems.append(f"{len(unpicked)} bookings answered 200 lost their pickup point")
    finally:
        await database.dispose()
    return problems


ROUTES += [
    Route("booking-reserve-pickup-extra", "POST", "/octo/bookings", PICKUPS_EXTRAS, setup=_coach_reservation,
          script="booking.lua", check=_no_lunch_oversold,
          expected_errors=frozenset({"400 UNPROCESSABLE_ENTITY"})),  # the lunches sold out
]  # fmt: skip

# --- look-to-book (issue 31): 95 % availability and calendars, 5 % reserve then confirm -------
# Measured by mixed.py's own load generator (run.py), reported as two rows: LOOK_TO_BOOK-reads
# and LOOK_TO_BOOK-writes.
LOOK_TO_BOOK = "look-to-book"
ROUTES += [
    Route(LOOK_TO_BOOK, "POST", "/octo/availability", RESELLER,
          expected_errors=frozenset({"400 UNPROCESSABLE_ENTITY"})),  # random departures sell out
]  # fmt: skip

# --- allotments (issue 40): demo-reseller-b holds a block on the bench cruise in three days ------
# demo-reseller-a books and reads around it: its reservations count B's unused block under the
# departure's lock, and its availability reads each connection's holdings. Set up once per mode,
# after every other route (none of them meets the block), and compared in the same run with the
# same reads and writes on a day without a block (availability-1d-bench) and with booking-reserve.
BLOCK_HOLDER = "Demo reseller B"  # the demo connection of key demo-reseller-b


async def _block_for_b(ctx: BenchContext) -> None:
    """B sells the bench cruise and holds 100,000 places of its departure in three days."""
    await _add_product(ctx, "bench-cruise", BENCH_PRODUCT)
    path = f"/admin/api/connections/{quote(BLOCK_HOLDER)}/contract"
    current = await ctx.client.get(path, headers=ADMIN)
    current.raise_for_status()
    contract = current.json()["contract"]
    if contract.get("allotments", [])[-1:] and contract["allotments"][-1]["product"] == "bench-cruise":
        return
    products = contract.get("products", "ALL")
    if products != "ALL" and not any(p["product"] == "bench-cruise" for p in products):
        contract["products"] = [*products, {"product": "bench-cruise"}]
    block = {
        "product": "bench-cruise",
        "from": _day(3),
        "until": _day(3),
        "places": 100_000,
        "releaseHours": 0,
    }
    contract["allotments"] = [*contract.get("allotments", []), block]
    saved = await ctx.client.put(path, json=contract, headers=ADMIN)
    saved.raise_for_status()
    # The other workers read the contracts again after BERTH_AUTH_CACHE_SECONDS.
    from berth.settings import Settings

    await asyncio.sleep(float(Settings.model_fields["auth_cache_seconds"].default) + 0.2)


def _bench_day(offset: int) -> SetupHook:
    async def setup(ctx: BenchContext) -> Any:
        await _block_for_b(ctx)
        return {**BENCH_CRUISE, "localDate": _day(offset)}

    return setup


async def _reservation_beside_a_block(ctx: BenchContext) -> Any:
    await _block_for_b(ctx)
    return await _reservation(ctx)


ROUTES += [
    Route("availability-1d-bench", "POST", "/octo/availability", RESELLER, setup=_bench_day(4)),
    Route("availability-1d-allotment", "POST", "/octo/availability", RESELLER, setup=_bench_day(3)),
    Route("booking-reserve-allotment", "POST", "/octo/bookings", RESELLER, setup=_reservation_beside_a_block,
          script="booking.lua", check=_no_oversell),
]  # fmt: skip

# Issue 41 §5: booking flows with `emailReceipt` at a fixed rate, the receipts sent to an SMTP
# sink in the bench's process (mail_live.py); reported on a line per mode of its own.
ROUTES += [Route("mail-live", "POST", "/octo/bookings/{uuid}/confirm", RESELLER)]

# --- the web shop (issue 48): its pages beside the back office's of the same weight -------------
# A guest's pages are read with the session cookie the shop gave on the first page (a guest
# looking round, not a first visit), staff's with the signed-in session's cookie. The product
# page's calendar is the rest of the current month (late in a month, a few days); shop-calendar
# is the next month, whole. The checkout is measured by shop_checkout.py (run.py), reported as
# shop-checkout and its ceiling, shop-checkout-stripe (localstripe alone).
SHOP_TOUR = "thames-sightseeing"
# Each shop page and the back-office page it must be no slower than (ratio to hello at least as
# high, same mode and run): a month of the calendar beside the month of the product's departures
# with their places sold; the product's page, and a day's departures with the party's price,
# beside the catalogue's page of the product (which reads no departure: the stricter of the two).
SHOP_BESIDE_BACKOFFICE = {
    "shop-product": "backoffice-product",
    "shop-calendar": "backoffice-departures",
    "shop-day": "backoffice-product",
}


def _next_month() -> str:
    return f"{(dt.date.today().replace(day=1) + dt.timedelta(days=32)):%Y-%m}"


async def _shop_page(ctx: BenchContext, path: str, shown: str) -> Prepared:
    """`path` as a guest reads it with the session cookie the shop's first page gave; the page
    is checked to show `shown`."""
    async with httpx.AsyncClient(base_url=ctx.base_url, timeout=30) as browser:  # a new guest
        first = await browser.get("/shop")
        session = first.cookies.get("berth_shop")
        if first.status_code != 200 or not session:
            raise BenchError(f"GET /shop answered {first.status_code} without a session cookie")
        cookie = f"berth_shop={session}"
        page = await browser.get(path)
    if page.status_code != 200 or shown not in page.text:
        raise BenchError(f"GET {path} answered {page.status_code} without {shown!r}: {page.text[:300]}")
    return Prepared(path=path, headers={"Cookie": cookie})


async def _shop_product(ctx: BenchContext) -> Prepared:
    return await _shop_page(ctx, f"/shop/{SHOP_TOUR}", 'class="calendar"')


async def _shop_calendar(ctx: BenchContext) -> Prepared:
    return await _shop_page(ctx, f"/shop/{SHOP_TOUR}?option=DEFAULT&month={_next_month()}", 'class="open"')


async def _shop_day(ctx: BenchContext) -> Prepared:
    return await _shop_page(ctx, f"/shop/{SHOP_TOUR}/{_day(3)}?option=DEFAULT&unit-adult=2", "/book?")


async def _backoffice_page(ctx: BenchContext, path: str, shown: str) -> Prepared:
    cookie = await staff_cookie(ctx.base_url)
    page = await ctx.client.get(path, headers={"Cookie": cookie})
    if page.status_code != 200 or shown not in page.text:
        raise BenchError(f"GET {path} answered {page.status_code} without {shown!r}: {page.text[:300]}")
    return Prepared(path=path, headers={"Cookie": cookie})


async def _backoffice_product(ctx: BenchContext) -> Prepared:
    return await _backoffice_page(ctx, f"/admin/catalog/{SHOP_TOUR}", "Daytime departures")


async def _backoffice_departures(ctx: BenchContext) -> Prepared:
    path = f"/admin/departures?product={SHOP_TOUR}&option=DEFAULT&month={_next_month()}"
    return await _backoffice_page(ctx, path, ">Manifest</a>")


async def _checkouts_paid(ctx: BenchContext, run: RouteRun) -> list[str]:
    """Straight from the database: every checkout's booking confirmed, with exactly one payment
    captured for its stored price and claimed by the confirmation, and no refund; no departure
    over its capacity (`_no_oversell`, which also finds every booking answered)."""
    from sqlalchemy import select

    from berth.domain.bookings import BookingStatus
    from berth.domain.payments import Outcome, PaymentStatus, amount_due
    from berth.store.bookings_repo import booking_from_row
    from berth.store.database import Database
    from berth.store.tables import bookings, payment_refunds, payments

    problems = await _no_oversell(ctx, run)
    database = Database(ctx.database_url)
    try:
        async with database.transaction(write=False) as conn:
            uuids = list(set(run.collected))
            found = []
            for start in range(0, len(uuids), 500):
                chunk = uuids[start : start + 500]
                found += (await conn.execute(select(bookings).where(bookings.c.uuid.in_(chunk)))).all()
            paid: dict[str, list[Any]] = {}
            for start in range(0, len(found), 500):
                ids = [row.id for row in found[start : start + 500]]
                for row in await conn.execute(select(payments).where(payments.c.booking_id.in_(ids))):
                    paid.setdefault(row.booking_id, []).append(row)
            refunds = (await conn.execute(select(payment_refunds.c.id).limit(1))).all()
    finally:
        await database.dispose()
    for row in found:
        booking = booking_from_row(row)
        due = amount_due(booking)
        captured = [p for p in paid.get(booking.id, []) if p.status == PaymentStatus.SUCCEEDED.value]
        if booking.status is not BookingStatus.CONFIRMED:
            problems.append(f"booking {booking.uuid} is {booking.status.value}, not CONFIRMED")
        if len(captured) != 1:
            problems.append(f"booking {booking.uuid} has {len(captured)} captured payments, not one")
        elif (captured[0].amount, captured[0].currency, captured[0].outcome) != (
            due.amount, due.currency, Outcome.CLAIMED.value,
        ):  # fmt: skip
            p = captured[0]
            problems.append(
                f"booking {booking.uuid}: captured {p.amount} {p.currency} ({p.outcome}), due {due}"
            )
    if refunds:
        problems.append("a payment was refunded")
    return problems[:20]


ROUTES += [
    Route("shop-product", "GET", f"/shop/{SHOP_TOUR}", setup=_shop_product),
    Route("shop-calendar", "GET", f"/shop/{SHOP_TOUR}?month=…", setup=_shop_calendar),
    Route("shop-day", "GET", f"/shop/{SHOP_TOUR}/…?unit-adult=2", setup=_shop_day),
    Route("backoffice-product", "GET", f"/admin/catalog/{SHOP_TOUR}", setup=_backoffice_product),
    Route("backoffice-departures", "GET", f"/admin/departures?product={SHOP_TOUR}&month=…",
          setup=_backoffice_departures),
    # Measured by shop_checkout.py (run.py): two rows, shop-checkout and shop-checkout-stripe.
    Route("shop-checkout", "GET", "/shop/…/book → … → /shop/checkout/…/done", check=_checkouts_paid),
]  # fmt: skip
