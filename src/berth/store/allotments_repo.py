"""What the allotment arithmetic reads of a departure: the places each connection holds, and
the blocks released on it (domain.allotments)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Integer, String, bindparam, case, exists, func, select, union_all
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.sql.elements import ColumnElement

from berth.domain.slots import Slot
from berth.store import bookings_one_call
from berth.store.bookings_reads import HOLDING_NOW
from berth.store.connection import DbConnection
from berth.store.tables import allotment_releases, bookings

# Departure (product id, option id, availability id).
Departure = tuple[str, str, str]

# The holdings of the connections with blocks only, through their bookings of those days
# (`ix_bookings_connection_date`, which holds every column read here: the index alone).
_HOLDINGS = (
    select(bookings.c.availability_id, bookings.c.connection_id, func.sum(bookings.c.pax))
    .where(
        bookings.c.connection_id.in_(bindparam("connections", expanding=True)),
        bookings.c.local_date >= bindparam("first_day"),
        bookings.c.local_date <= bindparam("last_day"),
        bookings.c.product_id == bindparam("product_id"),
        bookings.c.option_id == bindparam("option_id"),
        bookings.c.slot_start >= bindparam("first"),
        bookings.c.slot_start <= bindparam("last"),
        HOLDING_NOW,
    )
    .group_by(bookings.c.availability_id, bookings.c.connection_id)
)
_HOLDINGS_EXCLUDING = _HOLDINGS.where(bookings.c.id != bindparam("excluding"))
_RELEASED = select(
    allotment_releases.c.availability_id,
    allotment_releases.c.connection_id,
    allotment_releases.c.early,
    allotment_releases.c.released_at,
).where(
    allotment_releases.c.product_id == bindparam("product_id"),
    allotment_releases.c.option_id == bindparam("option_id"),
    allotment_releases.c.slot_start >= bindparam("first"),
    allotment_releases.c.slot_start <= bindparam("last"),
)


def reserving(dialect: str, blocks: Sequence[tuple[str, int]], day: str) -> bookings_one_call.Reserving:
    """What a reservation on a departure of `day` counts as taken besides the holds: the
    unused places of other connections' `blocks` (connection id, places) not released by the
    clock, less blocks released early (`bookings_one_call.lock_and_hold_reserving`)."""
    parameters: dict[str, Any] = {"block_day": day}
    for n, (connection_id, places) in enumerate(blocks):
        parameters |= {f"block_connection_{n}": connection_id, f"block_places_{n}": places}
    return bookings_one_call.Reserving(tuple(blocks), day, _hold_beside(dialect, len(blocks)), parameters)


@lru_cache(maxsize=32)
def _hold_beside(dialect: str, count: int) -> Any:
    return bookings_one_call.hold_if_room_reserving(dialect, _others_unused(count))


def _others_unused(count: int) -> ColumnElement[Any]:
    """The unused places of `count` blocks on the hold's departure (its product_id, option_id,
    availability_id and now): each holder's places from its own bookings of that day
    (`ix_bookings_connection_date`, read alone: it holds every column the sum reads)."""
    # Portable rows of bound values (SQLite's VALUES takes no column names).
    listed = union_all(
        *(
            select(
                bindparam(f"block_connection_{n}", type_=String()).label("connection_id"),
                bindparam(f"block_places_{n}", type_=Integer()).label("places"),
            )
            for n in range(count)
        )
    ).subquery("blocks")
    held = (
        select(func.coalesce(func.sum(bookings.c.pax), 0))
        .where(
            bookings.c.connection_id == listed.c.connection_id,
            bookings.c.local_date == bindparam("block_day"),
            bookings.c.product_id == bindparam("product_id"),
            bookings.c.option_id == bindparam("option_id"),
            bookings.c.availability_id == bindparam("availability_id"),
            HOLDING_NOW,
        )
        .scalar_subquery()
    )
    r = allotment_releases.c
    early = exists().where(
        r.connection_id == listed.c.connection_id,
        r.product_id == bindparam("product_id"),
        r.option_id == bindparam("option_id"),
        r.availability_id == bindparam("availability_id"),
        r.early.is_(True),
    )
    standing = select(listed.c.places, held.label("held")).where(~early).subquery("standing")
    unused = case((standing.c.places > standing.c.held, standing.c.places - standing.c.held), else_=0)
    return select(func.coalesce(func.sum(unused), 0)).scalar_subquery()


_INSERT: dict[str, Any] = {
    "sqlite": sqlite_insert(allotment_releases),
    "postgresql": pg_insert(allotment_releases),
}


class Standing:
    """A range of one option's departures: the places each connection holds in each, and the
    blocks released early on each, with when."""

    def __init__(self, holdings: dict[str, dict[str, int]], early: dict[str, dict[str, datetime]]) -> None:
        self._holdings = holdings
        self._early = early

    def holdings(self, availability_id: str) -> dict[str, int]:
        return self._holdings.get(availability_id, {})

    def released_early(self, availability_id: str) -> frozenset[str]:
        return frozenset(self._early.get(availability_id, {}))

    def released_early_at(self, availability_id: str) -> dict[str, datetime]:
        """The connections whose blocks were released early on the departure, and when."""
        return self._early.get(availability_id, {})


async def standing(
    conn: DbConnection,
    product_id: str,
    option_id: str,
    slots: Sequence[Slot],
    connections: Collection[str],
    now: datetime,
    *,
    excluding: str | None = None,
) -> Standing:
    """The places `connections` (those with blocks) hold on `slots` of one option, and the
    blocks released early there: two queries."""
    parameters = {
        "product_id": product_id,
        "option_id": option_id,
        "first": min(s.start for s in slots).astimezone(UTC),
        "last": max(s.start for s in slots).astimezone(UTC),
        "now": now,
    }
    days = {
        "connections": sorted(connections),
        "first_day": min(s.local_date for s in slots).isoformat(),
        "last_day": max(s.local_date for s in slots).isoformat(),
    }
    if excluding is None:
        rows = await conn.execute(_HOLDINGS, {**parameters, **days})
    else:
        rows = await conn.execute(_HOLDINGS_EXCLUDING, {**parameters, **days, "excluding": excluding})
    holdings: dict[str, dict[str, int]] = {}
    for availability_id, connection_id, pax in rows:
        if pax:
            holdings.setdefault(availability_id, {})[connection_id] = int(pax)
    early: dict[str, dict[str, datetime]] = {}
    for availability_id, connection_id, was_early, at in await conn.execute(_RELEASED, parameters):
        if was_early:
            early.setdefault(availability_id, {})[connection_id] = at
    return Standing(holdings, early)


async def recorded(
    conn: DbConnection, releases: Sequence[tuple[str, Departure, datetime]]
) -> set[tuple[str, Departure]]:
    """Which of `releases` (connection id, departure, its start) are recorded: one query per
    option, over the range of their starts."""
    c = allotment_releases.c
    by_option: dict[tuple[str, str], list[datetime]] = {}
    for _, (product_id, option_id, _), start in releases:
        by_option.setdefault((product_id, option_id), []).append(start)
    found: set[tuple[str, Departure]] = set()
    for (product_id, option_id), starts in by_option.items():
        rows = await conn.execute(
            select(c.connection_id, c.availability_id).where(
                c.product_id == product_id,
                c.option_id == option_id,
                c.slot_start >= min(starts),
                c.slot_start <= max(starts),
            )
        )
        found.update((row[0], (product_id, option_id, row[1])) for row in rows)
    return found


async def record_releases(
    conn: DbConnection,
    releases: Iterable[tuple[str, Departure, datetime]],
    at: datetime,
    *,
    early: bool,
    actor: str | None = None,
) -> set[tuple[str, Departure]]:
    """Record releases (connection id, departure, its start) not recorded yet; answers those
    this call recorded (a release is recorded once, whichever process gets there first)."""
    rows = [
        {
            "connection_id": connection_id,
            "product_id": departure[0],
            "option_id": departure[1],
            "availability_id": departure[2],
            "slot_start": start,
            "released_at": at,
            "early": early,
            "actor": actor,
        }
        for connection_id, departure, start in releases
    ]
    if not rows:
        return set()
    c = allotment_releases.c
    statement = (
        _INSERT[conn.dialect.name]
        .on_conflict_do_nothing()
        .returning(c.connection_id, c.product_id, c.option_id, c.availability_id)
    )
    recorded: set[tuple[str, Departure]] = set()
    for row in rows:  # one by one: RETURNING of a many-row insert is not kept by every driver
        found = (await conn.execute(statement, row)).first()
        if found is not None:
            recorded.add((found[0], (found[1], found[2], found[3])))
    return recorded
