"""The write ceiling (issue 41): a bare Starlette app on the raw database driver that does the
essence of a reservation, and of its confirmation, in one transaction each.

- `POST /octo/bookings`: a conditional update of the departure's held places that refuses when
  full, the booking row (as many columns as Berth's `bookings` table, the same unique
  constraints and plain indexes), one event row, COMMIT; the answer is an OCTO-shaped booking
  about the size of Berth's (3.8 kB for a party of two).
- `POST /octo/bookings/{uuid}/confirm`: the status update (with the contact) and one event row.

No authentication, catalogue, validation beyond the request's shape, idempotency or outbox: it
is what a reservation cannot do without, so Berth's rate over its rate (`ceiling_ratio`) says
how far Berth's write is from what the database and the HTTP stack allow. Values are always
bound parameters, never written into SQL text.

SQLite: the stdlib `sqlite3` in WAL mode with Berth's settings (synchronous=NORMAL, busy
timeout, foreign keys), one connection per worker, statements run in the event loop's thread
as Berth runs them; a write starts with BEGIN IMMEDIATE and ends with COMMIT (one per request:
no group commit). PostgreSQL: asyncpg with a pool of 16 connections per worker (Berth's pool
size); each request is ONE statement (a data-modifying WITH: hold, booking, event), its own
transaction, so the departure's row is locked for the server's time alone. Sent as separate
statements in BEGIN … COMMIT, the lock would also be held over three round trips to a busy
event loop: that ran at under a third of the rate (209/s against 720/s, one try on a loaded
machine), and is not a ceiling.

Run by run.py as `python -m uvicorn bare_app:app --app-dir benchmarks --workers N` with
BARE_DATABASE_URL naming its own database (`sqlite:///path` or `postgresql://…`), after
`create_schema` and `add_departures` prepared it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import secrets
import sqlite3
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import asyncpg
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

CONNECTION_ID = "bare-reseller"
HOLD_MINUTES = 30
POOL_SIZE = 16

_JSON = "{json}"  # jsonb on PostgreSQL, JSON on SQLite
SCHEMA = (
    """CREATE TABLE bare_departures (
        product_id varchar(100) NOT NULL, option_id varchar(100) NOT NULL,
        availability_id varchar(40) NOT NULL, capacity integer NOT NULL, held integer NOT NULL,
        PRIMARY KEY (product_id, option_id, availability_id))""",
    """CREATE TABLE bare_bookings (
        id varchar(36) PRIMARY KEY, connection_id varchar(36) NOT NULL, uuid varchar(64) NOT NULL,
        test_mode boolean NOT NULL, status varchar(16) NOT NULL, product_id varchar(100) NOT NULL,
        option_id varchar(100) NOT NULL, availability_id varchar(40), slot_start timestamp,
        local_date varchar(10), pax integer NOT NULL, reseller_reference varchar(1000),
        supplier_reference varchar(16) NOT NULL UNIQUE, notes text, contact {json} NOT NULL,
        unit_items {json} NOT NULL, currency varchar(3), freesale boolean NOT NULL,
        request_fingerprint varchar(64) NOT NULL, created_at timestamp NOT NULL, updated_at timestamp,
        expires_at timestamp, confirmed_at timestamp, redeemed_at timestamp, cancellation {json},
        rejection {json}, order_id varchar(36), is_primary boolean NOT NULL, order_position integer,
        rental_duration_id varchar(100), slot_end timestamp, package_booking_id varchar(36),
        package_include_id varchar(100), resource_allocations {json}, extensions {json},
        price_lines {json}, UNIQUE (connection_id, uuid))""",
    "CREATE INDEX ix_bare_bookings_slot ON bare_bookings (product_id, option_id, slot_start)",
    "CREATE INDEX ix_bare_bookings_connection_date ON bare_bookings (connection_id, local_date)",
    "CREATE INDEX ix_bare_bookings_reseller_reference ON bare_bookings {reference_index}",
    "CREATE INDEX ix_bare_bookings_uuid ON bare_bookings (uuid)",
    "CREATE INDEX ix_bare_bookings_status_expires ON bare_bookings (status, expires_at)",
    """CREATE TABLE bare_booking_events (
        id {serial} PRIMARY KEY, booking_id varchar(36) NOT NULL REFERENCES bare_bookings (id),
        at timestamp NOT NULL, kind varchar(32) NOT NULL, actor varchar(64) NOT NULL,
        detail {json} NOT NULL)""",
    "CREATE INDEX ix_bare_booking_events_booking_id ON bare_booking_events (booking_id)",
)
DIALECT = {
    "sqlite": {"json": "JSON", "serial": "INTEGER", "reference_index": "(reseller_reference)"},
    "postgres": {"json": "jsonb", "serial": "serial", "reference_index": "USING hash (reseller_reference)"},
}

COLUMNS = (
    "id", "connection_id", "uuid", "test_mode", "status", "product_id", "option_id", "availability_id",
    "slot_start", "local_date", "pax", "reseller_reference", "supplier_reference", "notes", "contact",
    "unit_items", "currency", "freesale", "request_fingerprint", "created_at", "updated_at", "expires_at",
    "confirmed_at", "redeemed_at", "cancellation", "rejection", "order_id", "is_primary", "order_position",
    "rental_duration_id", "slot_end", "package_booking_id", "package_include_id", "resource_allocations",
    "extensions", "price_lines",
)  # fmt: skip
HOLD = (
    "UPDATE bare_departures SET held = held + $4 "
    "WHERE product_id = $1 AND option_id = $2 AND availability_id = $3 AND held + $4 <= capacity "
    "RETURNING capacity - held"
)
CONFIRM = (
    "UPDATE bare_bookings SET status = 'CONFIRMED', contact = $3, confirmed_at = $4, updated_at = $4, "
    "expires_at = NULL WHERE connection_id = $1 AND uuid = $2 AND status = 'ON_HOLD' "
    "RETURNING id, uuid, supplier_reference, product_id, option_id, availability_id, created_at, unit_items"
)


def _parameters(first: int, count: int) -> str:
    return ", ".join(f"${n}" for n in range(first, first + count))


# PostgreSQL: each as one statement (data-modifying WITH): nothing is written unless the hold
# (the confirmation's update) is. Parameters: the hold's 4, the booking's columns, the event's 5.
RESERVE_AT_ONCE = f"""WITH hold AS ({HOLD}),
    booking AS (INSERT INTO bare_bookings ({", ".join(COLUMNS)})
        SELECT {_parameters(5, len(COLUMNS))} FROM hold RETURNING id),
    event AS (INSERT INTO bare_booking_events (booking_id, at, kind, actor, detail)
        SELECT {_parameters(5 + len(COLUMNS), 5)} FROM booking)
    SELECT * FROM hold"""
CONFIRM_AT_ONCE = f"""WITH confirmed AS ({CONFIRM}),
    event AS (INSERT INTO bare_booking_events (booking_id, at, kind, actor, detail)
        SELECT id, {_parameters(5, 4)} FROM confirmed)
    SELECT * FROM confirmed"""
# SQLite: statement by statement, in BEGIN IMMEDIATE … COMMIT.
INSERT_BOOKING = f"INSERT INTO bare_bookings ({', '.join(COLUMNS)}) VALUES ({_parameters(1, len(COLUMNS))})"
INSERT_EVENT = (
    f"INSERT INTO bare_booking_events (booking_id, at, kind, actor, detail) VALUES ({_parameters(1, 5)})"
)
EMPTY_CONTACT: dict[str, Any] = {
    "fullName": None, "firstName": None, "lastName": None, "emailAddress": None, "phoneNumber": None,
    "postalCode": None, "country": None, "notes": None, "locales": [], "allowMarketing": False,
}  # fmt: skip
# What Berth's answer carries of the catalogue (the bench cruise's product, option and unit).
UNIT: dict[str, Any] = {
    "id": "adult", "internalName": "Adult", "reference": None, "type": "ADULT",
    "restrictions": {"minAge": 0, "maxAge": 100, "idRequired": False, "minQuantity": None,
                     "maxQuantity": None, "paxCount": 1, "accompaniedBy": []},
    "requiredContactFields": [],
}  # fmt: skip
OPTION: dict[str, Any] = {
    "id": "DEFAULT", "default": True, "internalName": "Big boat", "reference": None,
    "availabilityLocalStartTimes": ["10:00"], "cancellationCutoff": "0 hours", "cancellationCutoffAmount": 0,
    "cancellationCutoffUnit": "hour", "requiredContactFields": [], "restrictions": {"minUnits": None, "maxUnits": 10},
    "units": [UNIT],
}  # fmt: skip
PRODUCT: dict[str, Any] = {
    "id": "bench-cruise", "internalName": "Benchmark cruise", "reference": None, "locale": "en-GB",
    "timeZone": "Europe/London", "allowFreesale": False, "instantConfirmation": True, "instantDelivery": True,
    "availabilityRequired": True, "availabilityType": "START_TIME", "deliveryFormats": ["QRCODE"],
    "deliveryMethods": ["TICKET"], "redemptionMethod": "DIGITAL", "options": [OPTION],
}  # fmt: skip


def dialect_of(url: str) -> str:
    return "sqlite" if url.startswith("sqlite") else "postgres"


def _sqlite_path(url: str) -> str:
    return url.split(":///", 1)[1]


def _postgres_dsn(url: str) -> str:
    return "postgresql://" + url.split("://", 1)[1]


def _sqlite_text(statement: str) -> str:
    """$1 → ?1: SQLite takes numbered parameters too."""
    return statement.replace("$", "?")


def _connect_sqlite(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=5000", "foreign_keys=ON"):
        connection.execute(f"PRAGMA {pragma}")
    return connection


# --- preparing the database (run.py and the test, before the app starts) ------------------------


async def create_schema(url: str) -> None:
    statements = [statement.format(**DIALECT[dialect_of(url)]) for statement in SCHEMA]
    if dialect_of(url) == "sqlite":
        with contextlib.closing(_connect_sqlite(_sqlite_path(url))) as connection:
            for statement in statements:
                connection.execute(statement)
        return
    connection = await asyncpg.connect(_postgres_dsn(url))
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


async def add_departures(url: str, departures: Iterable[tuple[str, str, str, int]]) -> None:
    """(product id, option id, availability id, capacity) rows, none held yet; a departure
    already there is left as it is."""
    statement = "INSERT INTO bare_departures VALUES ($1, $2, $3, $4, 0) ON CONFLICT DO NOTHING"
    rows = list(departures)
    if dialect_of(url) == "sqlite":
        with contextlib.closing(_connect_sqlite(_sqlite_path(url))) as connection:
            connection.executemany(_sqlite_text(statement), rows)
        return
    connection = await asyncpg.connect(_postgres_dsn(url))
    try:
        await connection.executemany(statement, rows)
    finally:
        await connection.close()


async def audit(url: str, uuids: Sequence[str]) -> list[str]:
    """Problems in the database: a departure over its capacity or whose held places are not its
    bookings' places, or a booking of `uuids` (answered 200) not stored."""
    held = (
        "SELECT d.availability_id, d.capacity, d.held, COALESCE(SUM(b.pax), 0) FROM bare_departures d "
        "LEFT JOIN bare_bookings b ON (b.product_id, b.option_id, b.availability_id) = "
        "(d.product_id, d.option_id, d.availability_id) GROUP BY d.availability_id, d.capacity, d.held"
    )
    if dialect_of(url) == "sqlite":
        with contextlib.closing(_connect_sqlite(_sqlite_path(url))) as connection:
            departures = connection.execute(held).fetchall()
            stored = {row[0] for row in connection.execute("SELECT uuid FROM bare_bookings")}
    else:
        pg = await asyncpg.connect(_postgres_dsn(url))
        try:
            departures = [tuple(row) for row in await pg.fetch(held)]
            stored = {row[0] for row in await pg.fetch("SELECT uuid FROM bare_bookings")}
        finally:
            await pg.close()
    problems = [
        f"{slot}: {held_} places held, {booked} booked, capacity {capacity}"
        for slot, capacity, held_, booked in departures
        if held_ > capacity or held_ != booked
    ]
    missing = set(uuids) - stored
    if missing:
        problems.append(f"{len(missing)} bookings answered 200 are not stored")
    return problems


# --- the two stores --------------------------------------------------------------------------


class SqliteStore:
    def __init__(self, path: str) -> None:
        self.connection = _connect_sqlite(path)
        self.hold, self.insert_booking, self.insert_event, self.confirm_ = (
            _sqlite_text(s) for s in (HOLD, INSERT_BOOKING, INSERT_EVENT, CONFIRM)
        )

    @staticmethod
    def stamp(moment: dt.datetime) -> str:
        return moment.replace(tzinfo=None).isoformat(sep=" ")

    async def reserve(self, slot: Sequence[Any], booking: Sequence[Any], event: Sequence[Any]) -> int | None:
        """The departure's vacancies after the hold, or None when it is full (nothing written)."""
        connection = self.connection
        connection.execute("BEGIN IMMEDIATE")
        with connection:  # COMMIT, or ROLLBACK on an exception
            vacancies = connection.execute(self.hold, slot).fetchone()
            if vacancies is None:
                connection.execute("ROLLBACK")
                return None
            connection.execute(self.insert_booking, booking)
            connection.execute(self.insert_event, event)
        return int(vacancies[0])

    async def confirm(self, key: Sequence[Any], event: Sequence[Any]) -> Sequence[Any] | None:
        connection = self.connection
        connection.execute("BEGIN IMMEDIATE")
        with connection:
            row: Sequence[Any] | None = connection.execute(self.confirm_, key).fetchone()
            if row is not None:
                connection.execute(self.insert_event, (row[0], *event))
        return row

    async def close(self) -> None:
        self.connection.close()


class PostgresStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @staticmethod
    def stamp(moment: dt.datetime) -> dt.datetime:
        return moment.replace(tzinfo=None)

    async def reserve(self, slot: Sequence[Any], booking: Sequence[Any], event: Sequence[Any]) -> int | None:
        # One statement, its own transaction: the departure's row stays locked for the
        # server's time alone, not for round trips to this process and back.
        vacancies: int | None = await self.pool.fetchval(RESERVE_AT_ONCE, *slot, *booking, *event)
        return vacancies

    async def confirm(self, key: Sequence[Any], event: Sequence[Any]) -> Sequence[Any] | None:
        row: Sequence[Any] | None = await self.pool.fetchrow(CONFIRM_AT_ONCE, *key, *event)
        return row

    async def close(self) -> None:
        await self.pool.close()


Store = SqliteStore | PostgresStore


# --- the answers -----------------------------------------------------------------------------


def _utc(text: str) -> str:
    """A stored timestamp ("2026-11-28 06:41:01.123456") as OCTO writes it."""
    return text[:19].replace(" ", "T") + "Z"


def _booking(
    row: Mapping[str, Any],
    status: str,
    contact: Mapping[str, Any],
    *,
    expires: str | None = None,
    confirmed: str | None = None,
    vacancies: int | None = None,
) -> bytes:
    availability_id = row["availability_id"]
    availability = {
        "id": availability_id, "localDateTimeStart": availability_id, "localDateTimeEnd": None,
        "utcCutoffAt": None, "allDay": False, "available": True, "status": "AVAILABLE", "vacancies": vacancies,
        "capacity": None, "maxUnits": 10, "openingHours": [],
    }  # fmt: skip
    items = [
        {
            "uuid": item["uuid"], "resellerReference": None, "supplierReference": item["supplierReference"],
            "unitId": item["unitId"], "status": status, "utcRedeemedAt": None, "contact": EMPTY_CONTACT,
            "ticket": {"redemptionMethod": "DIGITAL", "utcRedeemedAt": None, "deliveryOptions": (
                [{"deliveryFormat": "QRCODE", "deliveryValue": item["supplierReference"]}] if confirmed else [])},
            "unit": UNIT,
        }
        for item in row["unit_items"]
    ]  # fmt: skip
    return orjson.dumps({
        "id": row["id"], "uuid": row["uuid"], "testMode": False, "resellerReference": None,
        "supplierReference": row["supplier_reference"], "status": status, "utcCreatedAt": row["created"],
        "utcUpdatedAt": confirmed or row["created"], "utcExpiresAt": expires, "utcRedeemedAt": None,
        "utcConfirmedAt": confirmed, "productId": row["product_id"], "product": PRODUCT,
        "optionId": row["option_id"], "option": OPTION, "cancellable": True, "cancellation": None,
        "freesale": False, "availabilityId": availability_id,
        "availability": availability,
        "contact": contact, "notes": None, "deliveryMethods": ["TICKET"], "voucher": None, "unitItems": items,
    })  # fmt: skip


def _error(status: int, code: str, message: str) -> Response:
    return Response(
        orjson.dumps({"error": code, "errorMessage": message}), status, media_type="application/json"
    )


# --- the routes ------------------------------------------------------------------------------


async def reserve(request: Request) -> Response:
    store: Store = request.app.state.store
    raw = await request.body()
    try:
        body = orjson.loads(raw)
        key, product_id, option_id = str(body["uuid"]), str(body["productId"]), str(body["optionId"])
        availability_id = str(body["availabilityId"])
        start = dt.datetime.fromisoformat(availability_id)
        units = [str(item["unitId"]) for item in body["unitItems"]]
    except (ValueError, KeyError, TypeError) as exc:  # orjson's decode error is a ValueError
        return _error(400, "BAD_REQUEST", f"not a reservation: {exc}")
    if not units:
        return _error(400, "BAD_REQUEST", "unitItems is empty")
    now = dt.datetime.now(dt.UTC)
    stamp, expires = store.stamp(now), store.stamp(now + dt.timedelta(minutes=HOLD_MINUTES))
    items = [{"uuid": str(uuid.uuid4()), "unitId": unit, "supplierReference": secrets.token_hex(5).upper()}
             for unit in units]  # fmt: skip
    booking = {
        "id": str(uuid.uuid4()), "uuid": key, "supplier_reference": secrets.token_hex(8).upper(),
        "product_id": product_id, "option_id": option_id, "availability_id": availability_id,
        "unit_items": items, "created": _utc(str(stamp)),
    }  # fmt: skip
    values = {
        **booking, "connection_id": CONNECTION_ID, "test_mode": False, "status": "ON_HOLD",
        "slot_start": store.stamp(start), "local_date": availability_id[:10],
        "pax": len(units), "contact": orjson.dumps(EMPTY_CONTACT).decode(), "unit_items": orjson.dumps(items).decode(),
        "currency": "GBP", "freesale": False, "request_fingerprint": hashlib.sha256(raw).hexdigest(),
        "created_at": stamp, "updated_at": stamp, "expires_at": expires, "is_primary": False,
    }  # fmt: skip
    vacancies = await store.reserve(
        (product_id, option_id, availability_id, len(units)),
        [values.get(column) for column in COLUMNS],
        (booking["id"], stamp, "reserved", CONNECTION_ID, '{"status": "ON_HOLD"}'),
    )
    if vacancies is None:
        return _error(400, "UNPROCESSABLE_ENTITY", "not enough places left on this departure")
    answer = _booking(booking, "ON_HOLD", EMPTY_CONTACT, expires=_utc(str(expires)), vacancies=vacancies)
    return Response(answer, media_type="application/json")


async def confirm(request: Request) -> Response:
    store: Store = request.app.state.store
    try:
        contact = {**EMPTY_CONTACT, **orjson.loads(await request.body())["contact"]}
    except (ValueError, KeyError, TypeError) as exc:
        return _error(400, "BAD_REQUEST", f"not a confirmation: {exc}")
    stamp = store.stamp(dt.datetime.now(dt.UTC))
    row = await store.confirm(
        (CONNECTION_ID, request.path_params["uuid"], orjson.dumps(contact).decode(), stamp),
        (stamp, "confirmed", CONNECTION_ID, '{"status": "CONFIRMED"}'),
    )
    if row is None:
        return _error(400, "INVALID_BOOKING_UUID", "no booking on hold with this uuid")
    names = ("id", "uuid", "supplier_reference", "product_id", "option_id", "availability_id")
    booking = {
        **dict(zip(names, row, strict=False)),
        "created": _utc(str(row[6])),
        "unit_items": orjson.loads(row[7]),
    }
    answer = _booking(booking, "CONFIRMED", contact, confirmed=_utc(str(stamp)))
    return Response(answer, media_type="application/json")


async def healthz(request: Request) -> Response:
    return Response(b"ok")


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    url = os.environ["BARE_DATABASE_URL"]
    if dialect_of(url) == "sqlite":
        app.state.store = SqliteStore(_sqlite_path(url))
    else:
        app.state.store = PostgresStore(
            await asyncpg.create_pool(_postgres_dsn(url), min_size=1, max_size=POOL_SIZE)
        )
    try:
        yield
    finally:
        await app.state.store.close()


app = Starlette(
    routes=[
        Route("/octo/bookings", reserve, methods=["POST"]),
        Route("/octo/bookings/{uuid}/confirm", confirm, methods=["POST"]),
        Route("/healthz", healthz),
    ],
    lifespan=lifespan,
)
