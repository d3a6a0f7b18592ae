"""Many bookings written straight into a bench database, in bulk (issue 20, "flat as data
grows"), and the query plans of the statements the re-measured routes run on it.

run.py calls `seed_bookings` after a mode's normal rounds (`--bookings N`), while Berth is
running but idle, then `explain_statements`. Standalone, against a database Berth created
(with the bench cruise added, as run.py does before seeding):

    PYTHONPATH=src .venv/bin/python benchmarks/seed.py DATABASE_URL 1000000 [--plans]

What is written (see benchmarks/README.md, "The seeded bookings"):

- `bookings`: N rows over a year of departures (the 183 days before today and the 182 from
  today on), spread over every connection (one after the other), each valid for Berth (read
  back through `bookings_repo.booking_from_row`; the answers of the API and back office):
  - 60 % on the bench cruise (`bench-cruise`, one departure a day, room for 1,000,000):
    nine in ten CONFIRMED, one in ten CANCELLED; about 1,640 bookings per departure.
  - 40 % on the demo's Thames cruise (`thames-sightseeing` DEFAULT, four departures a day of
    200 places): the first 40 bookings of each departure CONFIRMED (80 of its 200 places),
    every further one CANCELLED or EXPIRED (an abandoned hold), in turn; about 275 a departure.
  Every booking is two adults (pax 2) with a contact, two unit items, a reseller reference
  (`RR-<n>`) and a supplier reference (`S<n>`, ten characters: Berth's own are eight, so they
  never collide); ids and uuids are uuid-shaped, unique per run.
- `booking_events`: two per booking, as Berth writes them (reserved; then confirmed,
  cancelled or expired).
- `slot_holds`: the places of the seeded CONFIRMED bookings added to each departure's row
  (computed from the rows just written), so availability counts them.
- No orders: seeded bookings belong to none.

SQLite: one transaction (BEGIN IMMEDIATE, after taking Berth's own write turn, the
`<db>.writelock` file lock) of INSERT … SELECT over a recursive CTE; then ANALYZE and a WAL
checkpoint. PostgreSQL: one transaction of INSERT … SELECT FROM generate_series; then
VACUUM (ANALYZE) of the three tables, so that autovacuum does not start on them during the
measurements that follow.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import fcntl
import re
import secrets
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
from servers import BenchError, postgres_admin_dsn
from sqlalchemy.engine import make_url

DAYS_BEFORE = 183  # departures from this many days before today...
DAYS_AFTER = 181  # ...to this many after (365 days in all)
PAX = 2
HOLDING_STATUSES = ("CONFIRMED", "PENDING", "REDEEMED")
HELD_FOR_GOOD = dt.datetime(9999, 12, 31)  # berth.domain.bookings.HELD_FOR_GOOD, naive UTC


@dataclass(frozen=True)
class Share:
    """One product's part of the seeded bookings."""

    product_id: str
    option_id: str
    unit_id: str
    weight: float
    # The first `holding` bookings of each departure are CONFIRMED, the others CANCELLED and
    # EXPIRED in turn; None: nine in ten CONFIRMED, every tenth CANCELLED.
    holding: int | None


SHARES = (
    Share("bench-cruise", "DEFAULT", "adult", 0.6, None),
    Share("thames-sightseeing", "DEFAULT", "adult", 0.4, 40),
)


@dataclass
class SeedReport:
    requested: int
    bookings: int = 0  # rows written to `bookings`
    events: int = 0
    holding: int = 0  # of which CONFIRMED (their places counted in slot_holds)
    departures: int = 0
    by_product: dict[str, int] = field(default_factory=dict)
    by_status: dict[str, int] = field(default_factory=dict)
    steps: dict[str, float] = field(default_factory=dict)  # seconds per step
    seconds: float = 0.0  # the whole seed, ANALYZE included
    total_after: int = 0  # bookings in the database afterwards, the bench's own included
    id_prefix: str = ""
    # Per connection id, a seeded booking's references (for the plans and the checks).
    samples: dict[str, dict[str, str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "bookings": self.bookings,
            "booking_events": self.events,
            "confirmed": self.holding,
            "departures": self.departures,
            "by_product": self.by_product,
            "by_status": self.by_status,
            "steps_s": {key: round(value, 1) for key, value in self.steps.items()},
            "seconds": round(self.seconds, 1),
            "bookings_total_after": self.total_after,
            "samples": self.samples,
        }


@dataclass(frozen=True)
class _Slot:
    availability_id: str
    start: dt.datetime  # naive UTC, as Berth stores it
    local_date: str
    capacity: int | None


@dataclass(frozen=True)
class _Part:
    share: Share
    first: int  # global number of its first booking
    count: int
    slots: tuple[_Slot, ...]
    currency: str | None


# --- what to write -----------------------------------------------------------------------------


async def _plan(database_url: str, count: int, today: dt.date) -> tuple[list[_Part], list[str]]:
    """The parts to write (departures from the catalogue Berth holds) and the connections."""
    from sqlalchemy import select

    from berth.domain.slots import slots_between
    from berth.store import catalog_repo
    from berth.store.database import Database
    from berth.store.tables import connections

    database = Database(database_url)
    try:
        async with database.transaction(write=False) as conn:
            _, catalog = await catalog_repo.load_catalog(conn)
            connection_ids = [
                row[0]
                for row in await conn.execute(
                    select(connections.c.id)
                    .where(connections.c.revoked_at.is_(None))
                    .order_by(connections.c.created_at, connections.c.id)
                )
            ]
    finally:
        await database.dispose()
    if catalog is None:
        raise BenchError("the database holds no catalogue: start `berth serve --demo` on it first")
    if not connection_ids:
        raise BenchError("the database holds no connection to seed bookings for")
    parts: list[_Part] = []
    first = 0
    weights = sum(share.weight for share in SHARES)
    for index, share in enumerate(SHARES):
        product = catalog.product(share.product_id)
        option = product.option(share.option_id) if product is not None else None
        if product is None or option is None:
            raise BenchError(f"the catalogue has no {share.product_id}/{share.option_id} to seed bookings on")
        slots = tuple(
            _Slot(
                slot.id,
                slot.start.astimezone(dt.UTC).replace(tzinfo=None),
                slot.local_date.isoformat(),
                slot.capacity,
            )
            for slot in slots_between(
                product, option, today - dt.timedelta(days=DAYS_BEFORE), today + dt.timedelta(days=DAYS_AFTER)
            )
            if not slot.closed
        )
        capacities = [slot.capacity for slot in slots if slot.capacity is not None]
        if share.holding is not None and capacities and share.holding * PAX > min(capacities):
            raise BenchError(
                f"{share.product_id}: {share.holding} bookings of {PAX} exceed {min(capacities)} places"
            )
        part_count = count - first if index == len(SHARES) - 1 else round(count * share.weight / weights)
        parts.append(_Part(share, first, part_count, slots, product.currency))
        first += part_count
    return parts, connection_ids


def _status_case(share: Share) -> str:
    if share.holding is None:
        return "CASE WHEN n % 10 = 0 THEN 'CANCELLED' ELSE 'CONFIRMED' END"
    return (
        f"CASE WHEN k < {int(share.holding)} THEN 'CONFIRMED' "
        "WHEN k % 2 = 1 THEN 'CANCELLED' ELSE 'EXPIRED' END"
    )


_INSERT_COLUMNS = (
    "id, connection_id, uuid, test_mode, status, product_id, option_id, availability_id, slot_start, "
    "local_date, pax, reseller_reference, supplier_reference, contact, unit_items, currency, freesale, "
    "request_fingerprint, created_at, updated_at, expires_at, confirmed_at, cancellation, rejection, "
    "is_primary, resource_allocations"
)


@dataclass(frozen=True)
class _Names:
    """Per-run prefixes: ids and uuids are `<prefix>-<n as 12 hex digits>`."""

    id_prefix: str
    uuid_prefix: str
    item_prefixes: tuple[str, str]

    @staticmethod
    def new() -> _Names:
        def prefix(kind: str) -> str:
            return f"{secrets.token_hex(4)}-{kind}-4{secrets.token_hex(2)[1:]}-a{secrets.token_hex(2)[1:]}"

        return _Names(prefix("5eed"), prefix("0000"), (prefix("0001"), prefix("0002")))


# --- SQLite --------------------------------------------------------------------------------------


def _sqlite_time(value: dt.datetime) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S.%f}"  # SQLAlchemy's DateTime on SQLite


def _sqlite_bookings(part: _Part) -> str:
    def shifted(column: str, modifier: str) -> str:
        return f"strftime('%Y-%m-%d %H:%M:%S', substr({column}, 1, 19), {modifier}) || '.000000'"

    def iso(column: str) -> str:
        return f"strftime('%Y-%m-%dT%H:%M:%SZ', substr({column}, 1, 19))"

    # 1 to 60 days before the departure, and never after a moment of the last 28 hours
    created = shifted("s.slot_start", "printf('-%d days', 1 + j % 60), printf('-%d minutes', j % 1440)")
    earlier = shifted(":now", "printf('-%d seconds', j % 100000)")
    item = (
        '\'{{"uuid":"\' || printf(\'%s-%012x\', :item_prefix_{i}, n) || \'","unitId":"\' || :unit_id || '
        '\'","supplierReference":"\' || printf(\'%09d{letter}\', n) || \'","resellerReference":null,'
        '"contact":{{"values":{{}},"locales":[],"allowMarketing":null}}}}\''
    )
    items = (
        "'[' || " + item.format(i=1, letter="A") + " || ',' || " + item.format(i=2, letter="B") + " || ']'"
    )
    return f"""
WITH RECURSIVE seq(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM seq WHERE j + 1 < :count),
b AS (
  SELECT :first + j AS n, j / :slots AS k, j, s.availability_id, s.slot_start, s.local_date,
         c.id AS connection_id, min({earlier}, {created}) AS created_at
  FROM seq JOIN seed_slots s ON s.k = j % :slots JOIN seed_connections c ON c.k = j % :connections
),
st AS (SELECT b.*, {_status_case(part.share)} AS status FROM b),
t AS (
  SELECT st.*, CASE status
    WHEN 'EXPIRED' THEN {shifted("created_at", "'+30 minutes'")}
    WHEN 'CANCELLED' THEN min(:now, {shifted("created_at", "'+2 hours'")})
    ELSE created_at END AS changed_at
  FROM st
)
INSERT INTO bookings ({_INSERT_COLUMNS})
SELECT printf('%s-%012x', :id_prefix, n), connection_id, printf('%s-%012x', :uuid_prefix, n), 0, status,
  :product_id, :option_id, availability_id, slot_start, local_date, {PAX},
  printf('RR-%09d', n), printf('S%09d', n),
  '{{"values":{{"firstName":"Seed","lastName":"Guest ' || n || '","emailAddress":"guest' || n
    || '@example.com"}},"locales":[],"allowMarketing":null}}',
  {items},
  :currency, 0, printf('%064x', n), created_at, changed_at,
  CASE WHEN status = 'EXPIRED' THEN changed_at END,
  CASE WHEN status = 'CONFIRMED' THEN created_at END,
  CASE status
    WHEN 'CANCELLED' THEN '{{"refund":"FULL","reason":"Seeded cancellation","at":"' || {iso("changed_at")} || '"}}'
    WHEN 'EXPIRED' THEN '{{"refund":"FULL","reason":null,"at":"' || {iso("changed_at")} || '"}}'
    ELSE 'null' END,
  'null', 0, '[]'
FROM t
"""


_SQLITE_EVENTS = """
INSERT INTO booking_events (booking_id, at, kind, actor, detail)
SELECT id, created_at, 'reserved', 'reseller', '{"status":"ON_HOLD","availabilityId":"' || availability_id || '"}'
FROM bookings WHERE id > :low AND id < :high
UNION ALL
SELECT id, updated_at,
  CASE status WHEN 'CONFIRMED' THEN 'confirmed' WHEN 'CANCELLED' THEN 'cancelled' ELSE 'expired' END,
  CASE status WHEN 'EXPIRED' THEN 'system' ELSE 'reseller' END,
  CASE status WHEN 'CANCELLED' THEN '{"status":"CANCELLED","reason":"Seeded cancellation"}'
    ELSE '{"status":"' || status || '"}' END
FROM bookings WHERE id > :low AND id < :high
"""

_SQLITE_HOLDS = """
INSERT INTO slot_holds (product_id, option_id, availability_id, until, slot_start, pax)
SELECT product_id, option_id, availability_id, :forever, slot_start, sum(pax)
FROM bookings
WHERE id > :low AND id < :high AND status IN ('CONFIRMED', 'PENDING', 'REDEEMED') AND test_mode = 0
GROUP BY product_id, option_id, availability_id, slot_start
ON CONFLICT (product_id, option_id, availability_id, until) DO UPDATE SET pax = slot_holds.pax + excluded.pax
"""


@contextlib.contextmanager
def _sqlite_write_turn(path: str) -> Iterator[None]:
    """Berth's own write turn (berth.store.database: a file lock beside the database), so the
    idle server's background writers wait in the kernel rather than time out on SQLite's lock."""
    with open(f"{path}.writelock", "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _seed_sqlite(
    path: str, parts: Sequence[_Part], connection_ids: Sequence[str], names: _Names, now: dt.datetime,
    report: SeedReport, say: Callable[[str], None],
) -> None:  # fmt: skip
    connection = sqlite3.connect(path, isolation_level=None, timeout=30)
    low, high = f"{names.id_prefix}-", f"{names.id_prefix}."
    try:
        connection.execute("PRAGMA busy_timeout=30000")
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute("PRAGMA cache_size=-1048576")  # 1 GB: the indexes stay in memory while writing
        connection.execute("PRAGMA temp_store=MEMORY")
        with _sqlite_write_turn(path):
            started = time.monotonic()
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("CREATE TEMP TABLE seed_connections (k INTEGER PRIMARY KEY, id TEXT NOT NULL)")
            connection.executemany(
                "INSERT INTO seed_connections VALUES (?, ?)", list(enumerate(connection_ids))
            )
            for part in parts:
                connection.execute("DROP TABLE IF EXISTS temp.seed_slots")
                connection.execute(
                    "CREATE TEMP TABLE seed_slots (k INTEGER PRIMARY KEY, availability_id TEXT NOT NULL, "
                    "slot_start TEXT NOT NULL, local_date TEXT NOT NULL)"
                )
                connection.executemany(
                    "INSERT INTO seed_slots VALUES (?, ?, ?, ?)",
                    [
                        (k, s.availability_id, _sqlite_time(s.start), s.local_date)
                        for k, s in enumerate(part.slots)
                    ],
                )
                began = time.monotonic()
                connection.execute(
                    _sqlite_bookings(part),
                    {
                        "count": part.count, "first": part.first, "slots": len(part.slots),
                        "connections": len(connection_ids), "now": _sqlite_time(now),
                        "id_prefix": names.id_prefix, "uuid_prefix": names.uuid_prefix,
                        "item_prefix_1": names.item_prefixes[0], "item_prefix_2": names.item_prefixes[1],
                        "unit_id": part.share.unit_id, "product_id": part.share.product_id,
                        "option_id": part.share.option_id, "currency": part.currency,
                    },
                )  # fmt: skip
                made = int(connection.execute("SELECT changes()").fetchone()[0])
                report.bookings += made
                report.steps[f"bookings {part.share.product_id}"] = time.monotonic() - began
                say(f"  {made:,} bookings on {part.share.product_id} in {time.monotonic() - began:.1f} s")
            began = time.monotonic()
            connection.execute(_SQLITE_EVENTS, {"low": low, "high": high})
            report.events = int(connection.execute("SELECT changes()").fetchone()[0])
            report.steps["booking_events"] = time.monotonic() - began
            began = time.monotonic()
            connection.execute(
                _SQLITE_HOLDS, {"low": low, "high": high, "forever": _sqlite_time(HELD_FOR_GOOD)}
            )
            report.steps["slot_holds"] = time.monotonic() - began
            began = time.monotonic()
            connection.execute("COMMIT")
            report.steps["commit"] = time.monotonic() - began
            began = time.monotonic()
            connection.execute("ANALYZE")
            report.steps["analyze"] = time.monotonic() - began
            began = time.monotonic()
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            report.steps["checkpoint"] = time.monotonic() - began
            report.seconds = time.monotonic() - started
        _count_sqlite(connection, report, low, high)
    finally:
        connection.close()


def _count_sqlite(connection: sqlite3.Connection, report: SeedReport, low: str, high: str) -> None:
    rows = connection.execute(
        "SELECT product_id, status, count(*) FROM bookings WHERE id > ? AND id < ? GROUP BY 1, 2", (low, high)
    ).fetchall()
    _tally(report, rows)
    report.total_after = int(connection.execute("SELECT count(*) FROM bookings").fetchone()[0])


def _tally(report: SeedReport, rows: Sequence[tuple[str, str, int]]) -> None:
    for product_id, status, number in rows:
        report.by_product[product_id] = report.by_product.get(product_id, 0) + int(number)
        report.by_status[status] = report.by_status.get(status, 0) + int(number)
    report.holding = sum(report.by_status.get(status, 0) for status in HOLDING_STATUSES)


# --- PostgreSQL ----------------------------------------------------------------------------------


def _numbered(sql: str, names: Sequence[str]) -> str:
    """`:name` placeholders as asyncpg's `$1`… (in the order of `names`); `::type` casts stay."""

    def number(found: re.Match[str]) -> str:
        name = found.group(1)
        return f"${names.index(name) + 1}" if name in names else found.group(0)

    return re.sub(r"(?<![:\w]):([a-z_0-9]+)\b", number, sql)


_PG_PARAMETERS = (
    "skip", "count", "first", "slots", "connections", "now", "id_prefix", "uuid_prefix", "item_prefix_1",
    "item_prefix_2", "unit_id", "product_id", "option_id", "currency",
)  # fmt: skip


def _postgres_chunk(part: _Part) -> str:
    """One chunk of a part: its bookings, and their two events each from what was inserted."""

    def iso(column: str) -> str:
        return f'to_char({column}, \'YYYY-MM-DD"T"HH24:MI:SS"Z"\')'

    def hex12(prefix: str) -> str:
        return f"{prefix} || '-' || lpad(to_hex(n), 12, '0')"

    item = (
        '\'{{"uuid":"\' || ' + hex12(":item_prefix_{i}::text") + ' || \'","unitId":"\' || :unit_id::text || '
        '\'","supplierReference":"\' || lpad(n::text, 9, \'0\') || \'{letter}","resellerReference":null,'
        '"contact":{{"values":{{}},"locales":[],"allowMarketing":null}}}}\''
    )
    items = (
        "('[' || " + item.format(i=1, letter="A") + " || ',' || " + item.format(i=2, letter="B") + " || ']')"
    )
    sql = f"""
WITH b AS (
  SELECT :first::bigint + g.j AS n, g.j / :slots::bigint AS k, g.j, s.availability_id, s.slot_start,
         s.local_date, c.id AS connection_id,
         LEAST(:now::timestamp - make_interval(secs => (g.j % 100000)::int),
               s.slot_start - make_interval(days => (1 + g.j % 60)::int, mins => (g.j % 1440)::int)) AS created_at
  FROM generate_series(:skip::bigint, :skip::bigint + :count::bigint - 1) AS g(j)
  JOIN seed_slots s ON s.product_id = :product_id::text AND s.k = g.j % :slots::bigint
  JOIN seed_connections c ON c.k = g.j % :connections::bigint
),
st AS (SELECT b.*, {_status_case(part.share)} AS status FROM b),
t AS (
  SELECT st.*, CASE status
    WHEN 'EXPIRED' THEN created_at + interval '30 minutes'
    WHEN 'CANCELLED' THEN LEAST(:now::timestamp, created_at + interval '2 hours')
    ELSE created_at END AS changed_at
  FROM st
),
made AS (
  INSERT INTO bookings ({_INSERT_COLUMNS})
  SELECT {hex12(":id_prefix::text")}, connection_id, {hex12(":uuid_prefix::text")}, false, status,
    :product_id::text, :option_id::text, availability_id, slot_start, local_date, {PAX},
    'RR-' || lpad(n::text, 9, '0'), 'S' || lpad(n::text, 9, '0'),
    ('{{"values":{{"firstName":"Seed","lastName":"Guest ' || n || '","emailAddress":"guest' || n
      || '@example.com"}},"locales":[],"allowMarketing":null}}')::jsonb,
    {items}::jsonb,
    :currency::text, false, lpad(to_hex(n), 64, '0'), created_at, changed_at,
    CASE WHEN status = 'EXPIRED' THEN changed_at END,
    CASE WHEN status = 'CONFIRMED' THEN created_at END,
    (CASE status
      WHEN 'CANCELLED' THEN '{{"refund":"FULL","reason":"Seeded cancellation","at":"' || {iso("changed_at")} || '"}}'
      WHEN 'EXPIRED' THEN '{{"refund":"FULL","reason":null,"at":"' || {iso("changed_at")} || '"}}'
      ELSE 'null' END)::jsonb,
    'null'::jsonb, false, '[]'::jsonb
  FROM t
  RETURNING id, status, availability_id, created_at, updated_at
)
INSERT INTO booking_events (booking_id, at, kind, actor, detail)
SELECT made.id, e.at, e.kind, e.actor, e.detail::jsonb
FROM made CROSS JOIN LATERAL (VALUES
  (made.created_at, 'reserved', 'reseller',
   '{{"status":"ON_HOLD","availabilityId":"' || made.availability_id || '"}}'),
  (made.updated_at,
   CASE made.status WHEN 'CONFIRMED' THEN 'confirmed' WHEN 'CANCELLED' THEN 'cancelled' ELSE 'expired' END,
   CASE made.status WHEN 'EXPIRED' THEN 'system' ELSE 'reseller' END,
   CASE made.status WHEN 'CANCELLED' THEN '{{"status":"CANCELLED","reason":"Seeded cancellation"}}'
     ELSE '{{"status":"' || made.status || '"}}' END)
) AS e(at, kind, actor, detail)
"""
    return _numbered(sql, _PG_PARAMETERS)


_PG_HOLDS = """
INSERT INTO slot_holds (product_id, option_id, availability_id, until, slot_start, pax)
SELECT product_id, option_id, availability_id, $2::timestamp, slot_start, sum(pax)
FROM bookings
WHERE starts_with(id, $1) AND status IN ('CONFIRMED', 'PENDING', 'REDEEMED') AND NOT test_mode
GROUP BY product_id, option_id, availability_id, slot_start
ON CONFLICT (product_id, option_id, availability_id, until) DO UPDATE SET pax = slot_holds.pax + excluded.pax
"""

PG_WRITERS = 2  # connections writing chunks at once (one per core of the bench machine)
CHUNK = 125_000  # bookings per chunk (one transaction each on PostgreSQL)


def _rows_of(status: str) -> int:
    """The row count of an asyncpg command status (`INSERT 0 123`)."""
    return int(status.rsplit(" ", 1)[-1])


async def _pg_scratch(
    connection: asyncpg.Connection, parts: Sequence[_Part], connection_ids: Sequence[str]
) -> None:
    """The departures and connections to spread bookings over, as temporary tables of the session."""
    await connection.execute("SET work_mem = '256MB'")
    await connection.execute("SET synchronous_commit = off")
    await connection.execute("CREATE TEMP TABLE seed_connections (k bigint PRIMARY KEY, id text NOT NULL)")
    await connection.executemany(
        "INSERT INTO seed_connections VALUES ($1, $2)", list(enumerate(connection_ids))
    )
    await connection.execute(
        "CREATE TEMP TABLE seed_slots (product_id text, k bigint, availability_id text NOT NULL, "
        "slot_start timestamp NOT NULL, local_date text NOT NULL, PRIMARY KEY (product_id, k))"
    )
    await connection.executemany(
        "INSERT INTO seed_slots VALUES ($1, $2, $3, $4, $5)",
        [
            (part.share.product_id, k, s.availability_id, s.start, s.local_date)
            for part in parts
            for k, s in enumerate(part.slots)
        ],
    )
    await connection.execute("ANALYZE seed_slots")
    await connection.execute("ANALYZE seed_connections")


async def _seed_postgres(
    database_url: str, parts: Sequence[_Part], connection_ids: Sequence[str], names: _Names, now: dt.datetime,
    report: SeedReport, say: Callable[[str], None],
) -> None:  # fmt: skip
    dsn = postgres_admin_dsn(database_url)
    writers = [await asyncpg.connect(dsn, timeout=10) for _ in range(PG_WRITERS)]
    prefix = f"{names.id_prefix}-"
    chunks = list(_chunks(parts))
    try:
        started = time.monotonic()
        for writer in writers:
            await _pg_scratch(writer, parts, connection_ids)
        statements = {part.share.product_id: _postgres_chunk(part) for part in parts}
        spent: dict[str, float] = {}

        async def write(writer: asyncpg.Connection) -> None:
            while chunks:
                part, skip, count = chunks.pop(0)
                began = time.monotonic()
                values = {
                    "skip": skip, "count": count, "first": part.first, "slots": len(part.slots),
                    "connections": len(connection_ids), "now": now, "id_prefix": names.id_prefix,
                    "uuid_prefix": names.uuid_prefix, "item_prefix_1": names.item_prefixes[0],
                    "item_prefix_2": names.item_prefixes[1], "unit_id": part.share.unit_id,
                    "product_id": part.share.product_id, "option_id": part.share.option_id,
                    "currency": part.currency,
                }  # fmt: skip
                events = _rows_of(
                    await writer.execute(
                        statements[part.share.product_id], *(values[name] for name in _PG_PARAMETERS)
                    )
                )
                report.events += events
                report.bookings += events // 2
                key = f"bookings {part.share.product_id}"
                spent[key] = spent.get(key, 0.0) + time.monotonic() - began

        began = time.monotonic()
        await asyncio.gather(*(write(writer) for writer in writers))
        report.steps["bookings and booking_events"] = time.monotonic() - began
        say(
            f"  {report.bookings:,} bookings and {report.events:,} events in {time.monotonic() - began:.1f} s "
            f"({PG_WRITERS} connections, {CHUNK:,} bookings a transaction)"
        )
        connection = writers[0]
        began = time.monotonic()
        await connection.execute(_PG_HOLDS, prefix, HELD_FOR_GOOD)
        report.steps["slot_holds"] = time.monotonic() - began
        began = time.monotonic()
        await connection.execute("VACUUM (ANALYZE) bookings, booking_events, slot_holds")
        report.steps["vacuum_analyze"] = time.monotonic() - began
        report.seconds = time.monotonic() - started
        rows = await connection.fetch(
            "SELECT product_id, status, count(*) FROM bookings WHERE starts_with(id, $1) GROUP BY 1, 2",
            prefix,
        )
        _tally(report, [(row[0], row[1], row[2]) for row in rows])
        report.total_after = int(await connection.fetchval("SELECT count(*) FROM bookings"))
    finally:
        for writer in writers:
            await writer.close()


def _chunks(parts: Sequence[_Part]) -> Iterator[tuple[_Part, int, int]]:
    for part in parts:
        for skip in range(0, part.count, CHUNK):
            yield part, skip, min(CHUNK, part.count - skip)


# --- entry points --------------------------------------------------------------------------------


def _today(parts_zone: str = "Europe/London") -> dt.date:
    return dt.datetime.now(ZoneInfo(parts_zone)).date()


async def seed_bookings(
    database_url: str, count: int, say: Callable[[str], None] = print, *, today: dt.date | None = None
) -> SeedReport:
    """Write `count` bookings (and their events and held places) into Berth's database."""
    report = SeedReport(requested=count)
    today = today or _today()
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)
    parts, connection_ids = await _plan(database_url, count, today)
    report.departures = sum(len(part.slots) for part in parts)
    names = _Names.new()
    report.id_prefix = names.id_prefix
    url = make_url(database_url)
    say(
        f"seeding {count:,} bookings over {report.departures:,} departures "
        f"({today - dt.timedelta(days=DAYS_BEFORE)} to {today + dt.timedelta(days=DAYS_AFTER)}), "
        f"{len(connection_ids)} connections"
    )
    if url.get_backend_name() == "sqlite":
        path = url.database
        if not path or path == ":memory:":
            raise BenchError("seeding needs a SQLite file")
        await asyncio.to_thread(_seed_sqlite, path, parts, connection_ids, names, now, report, say)
    else:
        await _seed_postgres(database_url, parts, connection_ids, names, now, report, say)
    # References that exist, per connection: a booking in the middle of the first part.
    middle = parts[0].first + (parts[0].count // 2 // len(connection_ids)) * len(connection_ids)
    for index, connection_id in enumerate(connection_ids):
        n = middle + index
        report.samples[connection_id] = {
            "connection_id": connection_id,
            "reseller_reference": f"RR-{n:09d}",
            "supplier_reference": f"S{n:09d}",
            "uuid": f"{names.uuid_prefix}-{n:012x}",
        }
    return report


async def connection_of_key(database_url: str, api_key: str) -> str:
    """The id of the connection an API key belongs to."""
    from berth.domain.connections import hash_api_key
    from berth.store import connections_repo
    from berth.store.database import Database

    database = Database(database_url)
    try:
        async with database.transaction(write=False) as conn:
            found = await connections_repo.find_by_key_hash(conn, hash_api_key(api_key))
    finally:
        await database.dispose()
    if found is None:
        raise BenchError("no connection has the demo reseller's API key")
    return found.id


async def verify_seed(database_url: str, report: SeedReport) -> list[str]:
    """Read seeded rows back as Berth does, and check the held places of every seeded departure:
    its slot_holds row (held for good) counts what its CONFIRMED bookings hold."""
    from sqlalchemy import and_, func, select

    from berth.store.bookings_repo import booking_from_row
    from berth.store.database import Database
    from berth.store.tables import bookings, slot_holds

    problems: list[str] = []
    database = Database(database_url)
    prefix = f"{report.id_prefix}-"
    try:
        async with database.transaction(write=False) as conn:
            for status in report.by_status:
                row = (
                    await conn.execute(
                        select(bookings)
                        .where(bookings.c.id.startswith(prefix), bookings.c.status == status)
                        .limit(1)
                    )
                ).first()
                if row is None:
                    problems.append(f"no seeded {status} booking to read back")
                    continue
                try:
                    booking = booking_from_row(row)
                except Exception as exc:
                    problems.append(
                        f"a seeded {status} booking does not read back: {type(exc).__name__}: {exc}"
                    )
                    continue
                if booking.status.value != status or len(booking.unit_items) != booking.pax:
                    problems.append(f"seeded booking {booking.id} reads back as {booking}")
                if status in ("CANCELLED", "EXPIRED") and booking.cancellation is None:
                    problems.append(f"seeded {status} booking {booking.id} has no cancellation")
            live = (
                select(
                    bookings.c.product_id, bookings.c.availability_id, func.sum(bookings.c.pax).label("pax")
                )
                .where(
                    bookings.c.product_id.in_([share.product_id for share in SHARES]),
                    bookings.c.status.in_(HOLDING_STATUSES),
                    bookings.c.test_mode.is_(False),
                )
                .group_by(bookings.c.product_id, bookings.c.availability_id)
                .subquery()
            )
            forever = HELD_FOR_GOOD.replace(tzinfo=dt.UTC)
            rows = await conn.execute(
                select(live.c.product_id, live.c.availability_id, live.c.pax, slot_holds.c.pax).select_from(
                    live.outerjoin(
                        slot_holds,
                        and_(
                            slot_holds.c.product_id == live.c.product_id,
                            slot_holds.c.availability_id == live.c.availability_id,
                            slot_holds.c.until == forever,
                        ),
                    )
                )
            )
            wrong = [(p, a, int(b), h) for p, a, b, h in rows if h is None or int(h) != int(b)]
            if wrong:
                problems.append(
                    f"{len(wrong)} departures whose slot_holds differ from their CONFIRMED bookings, e.g. {wrong[:3]}"
                )
    finally:
        await database.dispose()
    return problems


# --- query plans ---------------------------------------------------------------------------------


@dataclass
class Plan:
    route: str
    what: str
    statement: str
    parameters: str
    plan: str

    def as_json(self) -> dict[str, str]:
        return {
            "route": self.route,
            "what": self.what,
            "statement": self.statement,
            "parameters": self.parameters,
            "plan": self.plan,
        }

    def text(self) -> str:
        return (
            f"[{self.route}] {self.what}\n  {self.statement}\n  parameters: {self.parameters}\n"
            + "\n".join("    " + line for line in self.plan.splitlines())
        )


def _sqlite_plan_text(rows: Sequence[Any]) -> str:
    """EXPLAIN QUERY PLAN rows (id, parent, notused, detail) as an indented tree."""
    depth: dict[int, int] = {0: -1}
    lines = []
    for node, parent, _, detail in rows:
        depth[node] = depth.get(parent, -1) + 1
        lines.append("  " * depth[node] + str(detail))
    return "\n".join(lines)


async def explain_statements(
    database_url: str, sample: dict[str, str], today: dt.date | None = None
) -> list[Plan]:
    """The statements the re-measured routes run against the bookings (through Berth's own
    repository functions, captured as SQLAlchemy sends them), each with its plan: EXPLAIN
    QUERY PLAN on SQLite; on PostgreSQL EXPLAIN (ANALYZE, BUFFERS) of the generic plan (the
    conditions name $1, $2…), the one a prepared statement may settle on after its first five
    runs (asyncpg prepares every statement)."""
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import create_async_engine

    from berth.settings import Settings
    from berth.store import bookings_reads, bookings_repo, departures_repo
    from berth.store.bookings_reads import BookingFilter
    from berth.store.connection import SqliteConnection
    from berth.store.urls import normalize_url

    today = today or _today()
    url = normalize_url(database_url)
    sqlite = make_url(url).get_backend_name() == "sqlite"
    captured: list[tuple[str, Any]] = []
    slots = await _departures_for_plans(database_url, today)
    now = dt.datetime.now(dt.UTC)
    cap = int(Settings.model_fields["max_list_items"].default)
    calls: list[tuple[str, str, Callable[[Any], Any]]] = [
        ("availability-1d", "staff's overrides and held places of one day's departures (UNION ALL)",
         lambda c: departures_repo.overrides_and_held(c, "thames-sightseeing", "DEFAULT", *slots["day"], now)),
        ("calendar-30d", "staff's overrides and held places of 30 days' departures (UNION ALL)",
         lambda c: departures_repo.overrides_and_held(c, "thames-sightseeing", "DEFAULT", *slots["month"], now)),
        ("booking-reserve", "is the uuid new? (get_by_uuid)",
         lambda c: bookings_repo.get_by_uuid(c, sample["connection_id"], "8d0b1c6e-0000-4000-8000-000000000000")),
        ("booking-reserve", "the answer's overrides and held places of the departure (UNION ALL)",
         lambda c: departures_repo.overrides_and_held(c, "bench-cruise", "DEFAULT", *slots["cruise"], now)),
        ("bookings-by-reference", "find_bookings(connection_id, reseller_reference), as GET /octo/bookings",
         lambda c: bookings_reads.find_bookings(
             c, BookingFilter(connection_id=sample["connection_id"], reseller_reference=sample["reseller_reference"]),
             limit=cap + 1, offset=0, count=False)),
        ("backoffice-search", "find_bookings(reference), as the back office's search: page of 25 and count",
         lambda c: bookings_reads.find_bookings(
             c, BookingFilter(reference=sample["supplier_reference"]), limit=25, offset=0)),
    ]  # fmt: skip
    plans: list[Plan] = []

    def capture(
        _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool
    ) -> None:
        captured.append((statement, parameters))

    if sqlite:
        from sqlalchemy import create_engine

        engine = create_engine(url)
        event.listen(engine, "before_cursor_execute", capture)
        try:
            with engine.connect() as sync_conn:
                for route, what, call in calls:
                    captured.clear()
                    await call(SqliteConnection(sync_conn, {}))
                    for statement, parameters in list(captured):
                        rows = sync_conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
                        plans.append(
                            Plan(
                                route,
                                what,
                                _one_line(statement),
                                _values(parameters),
                                _sqlite_plan_text(rows),
                            )
                        )
                sync_conn.rollback()
        finally:
            engine.dispose()
    else:
        async_engine = create_async_engine(url)
        event.listen(async_engine.sync_engine, "before_cursor_execute", capture)
        explaining = await asyncpg.connect(postgres_admin_dsn(database_url), timeout=10)
        try:
            await explaining.execute("SET plan_cache_mode = force_generic_plan")
            async with async_engine.connect() as conn:
                for route, what, call in calls:
                    captured.clear()
                    await call(conn)
                    for statement, parameters in list(captured):
                        # PREPARE, then EXECUTE with the values: the generic plan, $1… in its conditions.
                        await explaining.execute(f"PREPARE berth_plan AS {statement}")
                        values = ", ".join(_literal(value) for value in parameters)
                        rows = await explaining.fetch(
                            f"EXPLAIN (ANALYZE, BUFFERS) EXECUTE berth_plan({values})"
                        )
                        await explaining.execute("DEALLOCATE berth_plan")
                        text = "\n".join(str(row[0]) for row in rows)
                        plans.append(Plan(route, what, _one_line(statement), _values(parameters), text))
                await conn.rollback()
        finally:
            await explaining.close()
            await async_engine.dispose()
    return plans


def _values(parameters: Any) -> str:
    return ", ".join(_literal(value) for value in parameters)


def _literal(value: Any) -> str:
    """A parameter's value as an SQL literal (for EXECUTE of a prepared statement)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _one_line(statement: str) -> str:
    """The statement on one line, a select list of every column of bookings written short."""
    from berth.store.tables import bookings

    text = " ".join(statement.split())
    every = ", ".join(f"bookings.{column.name}" for column in bookings.columns)
    return text.replace(
        f"SELECT {every} FROM", f"SELECT <the {len(bookings.columns)} columns of bookings> FROM"
    )


async def _departures_for_plans(
    database_url: str, today: dt.date
) -> dict[str, tuple[dt.datetime, dt.datetime]]:
    """First and last start (UTC) of the departures the routes read: the Thames cruise in two
    days and over the next 30, the bench cruise in three days."""
    from berth.domain.slots import slots_between
    from berth.store import catalog_repo
    from berth.store.database import Database

    database = Database(database_url)
    try:
        async with database.transaction(write=False) as conn:
            _, catalog = await catalog_repo.load_catalog(conn)
    finally:
        await database.dispose()
    assert catalog is not None

    def span(product_id: str, first: int, last: int) -> tuple[dt.datetime, dt.datetime]:
        product = catalog.product(product_id)
        assert product is not None
        found = slots_between(
            product, product.default_option, today + dt.timedelta(days=first), today + dt.timedelta(days=last)
        )
        return found[0].start.astimezone(dt.UTC), found[-1].start.astimezone(dt.UTC)

    return {"day": span("thames-sightseeing", 2, 2), "month": span("thames-sightseeing", 1, 30),
            "cruise": span("bench-cruise", 3, 3)}  # fmt: skip


async def _main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/seed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("database_url")
    parser.add_argument("bookings", type=int)
    parser.add_argument("--plans", action="store_true", help="print the query plans afterwards")
    args = parser.parse_args(argv)
    report = await seed_bookings(args.database_url, args.bookings)
    print(
        f"{report.bookings:,} bookings, {report.events:,} events in {report.seconds:.1f} s: {report.as_json()}"
    )
    problems = await verify_seed(args.database_url, report)
    for problem in problems:
        print("problem:", problem)
    if args.plans:
        for plan in await explain_statements(args.database_url, next(iter(report.samples.values()))):
            print(plan.text())
    return 1 if problems else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(asyncio.run(_main(sys.argv[1:])))
