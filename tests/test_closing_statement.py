"""A transaction's closing statement on PostgreSQL (issue 31, `berth.store.database.close_with`):
a reservation's lock, check and hold sent in one message with the COMMIT.

What must hold: the statement runs last and commits with everything before it; when it refuses,
nothing of the transaction is written and the connection serves the next one; values written
into it come back exactly as given, quotes and backslashes included; only a transaction opened
for it may close so, once. And a reservation refused at the COMMIT is answered with the reason,
as one refused inside its transaction is, with nothing written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import String, func, select, text

from berth.capabilities.cart.orders import OrderInput
from berth.container import Services
from berth.domain.bookings import HELD_FOR_GOOD, Contact
from berth.domain.errors import UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from berth.store.database import (
    ClosingRefused,
    Database,
    DatabaseUnavailable,
    DbConnection,
    close_with,
    fault_of,
    sql_literal,
)
from berth.store.tables import booking_events, bookings, slot_holds, slot_locks
from berth.store.types import UTCDateTime
from tests.statement_counts import counting
from tests.test_catalog_import import MINIMAL

SLOT = "2026-06-02T10:00:00+01:00"
GUEST = Contact({"firstName": "Ada", "lastName": "Guest", "emailAddress": "ada@example.com"})
AWKWARD = ("it's", "back\\slash\\", "$$dollar$$", "E'\\x41'", "Zürich ✓", "")


@pytest.fixture
async def db(services: Services) -> AsyncIterator[Database]:
    if services.database.is_sqlite:
        pytest.skip("a closing statement is PostgreSQL's (SQLite's write lock is the transaction)")
    yield services.database


async def _locks(db: Database) -> list[tuple[str, str, str]]:
    async with db.transaction(write=False) as conn:
        rows = await conn.execute(select(slot_locks).order_by(slot_locks.c.product_id))
        return [tuple(row) for row in rows]


def _lock_row(conn: DbConnection, product: str) -> str:
    values = ", ".join(sql_literal(conn, String(), value) for value in (product, "o", "a"))
    return f"INSERT INTO slot_locks (product_id, option_id, availability_id) VALUES ({values})"


async def test_the_closing_statement_runs_last_and_commits_with_the_rest(db: Database) -> None:
    async with db.transaction(write=True, closing=True) as conn:
        assert close_with(conn, _lock_row(conn, "closing"))
        assert not close_with(conn, _lock_row(conn, "second")), "one closing statement a transaction"
        await conn.execute(text("INSERT INTO slot_locks VALUES ('before', 'o', 'a')"))
        # Not yet sent: the transaction's own statements come first.
        assert await conn.scalar(select(func.count()).select_from(slot_locks)) == 1
    assert await _locks(db) == [("before", "o", "a"), ("closing", "o", "a")]


async def test_only_a_transaction_opened_for_it_may_close_with_a_statement(db: Database) -> None:
    async with db.transaction(write=True) as conn:
        assert not close_with(conn, _lock_row(conn, "never"))
    # A pooled connection's next transaction does not inherit the permission.
    async with db.transaction(write=True, closing=True) as conn:
        pass
    async with db.transaction(write=True) as conn:
        assert not close_with(conn, _lock_row(conn, "never"))
    assert await _locks(db) == []


async def test_a_refusal_writes_nothing_and_the_connection_serves_on(db: Database) -> None:
    refuse = "SELECT berth_hold_or_refuse('p', 'o', 'a', now()::timestamp, now()::timestamp, 3, 2, 3, now()::timestamp)"
    with pytest.raises(ClosingRefused, match="no room for 3 places"):
        async with db.transaction(write=True, closing=True) as conn:
            await conn.execute(text("INSERT INTO slot_locks VALUES ('written', 'o', 'a')"))
            assert close_with(conn, refuse)
    assert await _locks(db) == []
    for _ in range(3):  # every pooled connection, the one that refused included
        async with db.transaction(write=True) as conn:
            await conn.execute(text("SELECT 1"))
    async with db.transaction(write=True, closing=True) as conn:
        assert close_with(conn, _lock_row(conn, "after"))
    assert await _locks(db) == [("after", "o", "a")]


async def test_values_written_into_a_statement_come_back_exactly(db: Database) -> None:
    at = datetime(2026, 6, 2, 9, 0, 0, 123456, tzinfo=UTC)
    async with db.transaction(write=True, closing=True) as conn:
        products = [f"{n}{value}" for n, value in enumerate(AWKWARD)]
        rows = ", ".join(
            f"({sql_literal(conn, String(), product)}, 'o', {sql_literal(conn, String(), value)})"
            for product, value in zip(products, AWKWARD, strict=True)
        )
        assert close_with(conn, f"INSERT INTO slot_locks VALUES {rows}")
    assert await _locks(db) == [(p, "o", v) for p, v in sorted(zip(products, AWKWARD, strict=True))]
    async with db.transaction(write=False) as conn:
        sent = await conn.scalar(text(f"SELECT {sql_literal(conn, UTCDateTime(), at)}::timestamp"))
        assert sent == at.replace(tzinfo=None)
        assert sql_literal(conn, String(), None) == "NULL"


async def test_a_connection_lost_with_the_commit_is_the_database_unavailable(db: Database) -> None:
    with pytest.raises(DatabaseUnavailable) as raised:
        async with db.transaction(write=True, closing=True) as conn:
            await conn.execute(text("INSERT INTO slot_locks VALUES ('lost', 'o', 'a')"))
            assert close_with(conn, "SELECT pg_terminate_backend(pg_backend_pid())")
    assert fault_of(raised.value) == "unavailable"
    assert await _locks(db) == []
    for _ in range(3):  # the pool dropped the lost connection: every one it hands out works
        async with db.transaction(write=True) as conn:
            await conn.execute(text("SELECT 1"))


def _request(uuid: str, adults: int = 1) -> ReserveInput:
    return ReserveInput(
        product_id="walk", option_id="DEFAULT", availability_id=SLOT, uuid=uuid,
        unit_items=tuple(UnitItemInput("adult") for _ in range(adults)),
    )  # fmt: skip


async def _written(services: Services) -> tuple[int, int, int]:
    async with services.database.transaction(write=False) as conn:
        return (
            int(await conn.scalar(select(func.count()).select_from(bookings)) or 0),
            int(await conn.scalar(select(func.count()).select_from(booking_events)) or 0),
            int(await conn.scalar(select(func.coalesce(func.sum(slot_holds.c.pax), 0))) or 0),
        )


async def test_a_reservation_refused_at_the_commit_says_why_and_writes_nothing(
    db: Database, services: Services
) -> None:
    await services.catalog.import_text(MINIMAL.replace("capacity: 12", "capacity: 3"), actor=COMMAND_LINE)
    connection = await services.connections.ensure("Closer", "closer-key")
    catalog = (await services.catalog.snapshot()).catalog
    with counting(db) as placed:
        await services.bookings.reserve(catalog, connection.id, _request("two", adults=2))
    assert any(sent.startswith("SELECT berth_hold_or_refuse(") for sent in placed.sent)
    before = await _written(services)
    assert before[2] == 2
    with counting(db) as refused, pytest.raises(UnprocessableEntity) as raised:
        await services.bookings.reserve(catalog, connection.id, _request("three", adults=2))
    # Refused at the COMMIT, then placed again with the check inside the transaction, which
    # names the reason.
    kinds = refused.kinds()
    assert sum(sent.startswith("SELECT berth_hold_or_refuse(") for sent in refused.sent) == 1
    again = kinds[kinds.index("BEGIN", 1) :]
    assert again[-2:] == ["SELECT departure_overrides", "SELECT slot_holds"], kinds
    assert "COMMIT" not in kinds, kinds
    assert raised.value.message.endswith("is sold out: 1 place(s) left, 2 requested"), raised.value.message
    assert await _written(services) == before
    # The place left is still for the taking, through the closing statement.
    await services.bookings.reserve(catalog, connection.id, _request("one"))
    assert (await _written(services))[2] == 3


async def _counts(services: Services) -> dict[str, int]:
    """Places held in the bench slot's count rows: for good, and until some expiry."""
    async with services.database.transaction(write=False) as conn:
        rows = await conn.execute(select(slot_holds.c.until, slot_holds.c.pax))
        counts = {"for good": 0, "on hold": 0}
        for until, pax in rows:
            counts["for good" if until == HELD_FOR_GOOD else "on hold"] += pax
        return counts


async def test_a_confirmation_moves_its_places_with_the_commit_unless_more_follows(
    db: Database, services: Services
) -> None:
    await services.catalog.import_text(MINIMAL, actor=COMMAND_LINE)
    connection = await services.connections.ensure("Closer", "closer-key")
    catalog = (await services.catalog.snapshot()).catalog
    await services.bookings.reserve(catalog, connection.id, _request("alone", adults=2))
    await services.orders.create(
        catalog, connection.id, OrderInput(bookings=(_request("ordered", adults=3),))
    )
    assert await _counts(services) == {"for good": 0, "on hold": 5}
    with counting(db) as alone:
        await services.bookings.confirm(catalog, connection.id, "alone", ConfirmInput(contact=GUEST))
    assert alone.sent[alone.kinds().index("COMMIT") - 1].endswith("; COMMIT; BEGIN"), alone.kinds()
    assert await _counts(services) == {"for good": 2, "on hold": 3}
    # A booking of an order: the order follows it in the same transaction, after the step, so
    # its count moves in its place and the COMMIT goes alone.
    with counting(db) as ordered:
        await services.bookings.confirm(catalog, connection.id, "ordered", ConfirmInput(contact=GUEST))
    assert not any(sent.endswith("; COMMIT; BEGIN") for sent in ordered.sent), ordered.sent
    assert await _counts(services) == {"for good": 5, "on hold": 0}
