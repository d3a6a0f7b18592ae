"""The tokens of bookings' ticket documents (berth.domain.tickets)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import bindparam, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from berth.domain.bookings import Booking
from berth.domain.tickets import new_token
from berth.store.bookings_repo import booking_from_row
from berth.store.connection import DbConnection
from berth.store.tables import bookings, tickets

_ISSUE = {
    "sqlite": sqlite_insert(tickets).on_conflict_do_nothing(index_elements=["booking_id", "item_key"]),
    "postgresql": pg_insert(tickets).on_conflict_do_nothing(index_elements=["booking_id", "item_key"]),
}
_OF_BOOKINGS = select(tickets.c.booking_id, tickets.c.item_key, tickets.c.token).where(
    tickets.c.booking_id.in_(bindparam("ids", expanding=True))
)
_FIND = (
    select(tickets.c.item_key, bookings)
    .join(bookings, bookings.c.id == tickets.c.booking_id)
    .where(tickets.c.token == bindparam("token"))
)


async def issue(conn: DbConnection, booking_id: str, keys: Iterable[str]) -> None:
    """A token for each key of the booking that has none yet (existing tokens never change)."""
    rows = [{"token": new_token(), "booking_id": booking_id, "item_key": key} for key in keys]
    if rows:
        await conn.execute(_ISSUE[conn.dialect.name], rows)


async def tokens_of(conn: DbConnection, booking_ids: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each booking's tokens by key."""
    found: dict[str, dict[str, str]] = {}
    if not booking_ids:
        return found
    for row in await conn.execute(_OF_BOOKINGS, {"ids": list(booking_ids)}):
        found.setdefault(row.booking_id, {})[row.item_key] = row.token
    return found


async def find(conn: DbConnection, token: str) -> tuple[Booking, str] | None:
    """The booking a token belongs to and the token's key: one lookup by primary key."""
    row = (await conn.execute(_FIND, {"token": token})).first()
    if row is None:
        return None
    return booking_from_row(row), row.item_key
