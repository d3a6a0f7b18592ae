"""A block holder's places on a departure are read from `ix_bookings_connection_date` alone
(issue 41): the index holds every column of `bookings` the allotment arithmetic reads, so a
reservation beside a block and a calendar of a holder's days do not read the holder's bookings
from the table, however many it has on the departure."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, select
from sqlalchemy.sql import visitors

from berth.container import Services
from berth.store import allotments_repo
from berth.store.tables import bookings

INDEX = next(index for index in bookings.indexes if index.name == "ix_bookings_connection_date")


def _bookings_columns(statement: Any) -> set[str]:
    return {
        element.name
        for element in visitors.iterate(statement)
        if isinstance(element, Column) and element.table is bookings
    }


def test_the_index_holds_every_column_the_allotment_statements_read() -> None:
    indexed = {column.name for column in INDEX.columns}
    for statement in (allotments_repo._others_unused(2), allotments_repo._HOLDINGS_EXCLUDING):
        read = _bookings_columns(statement)
        assert read, "the statement reads bookings"
        assert read <= indexed, sorted(read - indexed)


async def test_sqlite_sums_a_holders_places_from_the_index_alone(services: Services) -> None:
    if not services.database.is_sqlite:
        return  # PostgreSQL's choice depends on its statistics and visibility map
    statement = select(allotments_repo._others_unused(1))
    compiled = statement.compile(dialect=services.database.sync_engine.dialect)
    values = tuple(None for _ in compiled.positiontup or ())
    async with services.database.transaction(write=False) as conn:
        rows = await conn.run_sync(
            lambda c: c.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}", values).all()
        )
    plan = [row[-1] for row in rows]
    on_bookings = [step for step in plan if "bookings" in step and "slot_holds" not in step]
    assert on_bookings, plan
    assert all("COVERING INDEX ix_bookings_connection_date" in step for step in on_bookings), plan
