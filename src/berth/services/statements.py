"""Connections' monthly statements (domain.statements), read from the bookings' stored lines."""

from __future__ import annotations

import asyncio

from berth.domain.catalog import Catalog
from berth.domain.connections import Connection
from berth.domain.errors import NotFound
from berth.domain.statements import (
    Basis,
    Month,
    Statement,
    StatementLine,
    gift_lines,
    statement_lines,
    statement_of,
)
from berth.services.clock import Clock
from berth.store import connections_repo, gifts_repo, statements_repo
from berth.store.database import Database

# The connection page lists this many of its newest months; older ones are a URL away.
LISTED_MONTHS = 24


class StatementService:
    def __init__(self, database: Database, basis: Basis, clock: Clock) -> None:
        self._db = database
        self.basis = basis
        self._clock = clock

    async def connection(self, id_or_name: str) -> Connection:
        async with self._db.transaction(write=False) as conn:
            found = await connections_repo.find_connection(conn, id_or_name)
        if found is None:
            raise NotFound(f"No connection with id or name {id_or_name!r}")
        return found

    async def of(self, catalog: Catalog, connection: Connection, month: Month) -> Statement:
        """The connection's statement of `month`, read in one transaction, batch by batch, each
        batch made into lines (with what gift vouchers paid of its bookings) before the next is
        read, then the gift vouchers it sold in the month. Other requests get the event loop
        between batches: SQLite reads in the loop's thread, and a month may hold thousands."""
        lines: list[StatementLine] = []
        async with self._db.transaction(write=False) as conn:
            async for batch in statements_repo.month_bookings(conn, connection.id, month, self.basis):
                paid = await gifts_repo.paid_for_bookings(conn, [booking.id for booking in batch])
                lines += statement_lines(connection.id, month, self.basis, batch, catalog, paid)
                await asyncio.sleep(0)
            gifts = await gifts_repo.confirmed_between(
                conn, connection.id, month.starts_at(), month.next.starts_at()
            )
            lines += gift_lines(connection.id, month, gifts)
        contract = connection.contract
        return statement_of(
            connection.id,
            connection.name,
            month,
            self.basis,
            lines,
            rate_kind=contract.rate.kind,
            payment_terms=contract.payment_terms,
            created_at=self._clock(),
            reseller_address=contract.reseller_address,
        )

    async def sold_in(self, catalog: Catalog, month: Month) -> list[Statement]:
        """The statements of `month` that have a line, one per connection (revoked ones too:
        they may have sold in it), in the order the connections were made."""
        async with self._db.transaction(write=False) as conn:
            connections = await connections_repo.list_connections(conn)
        found = [await self.of(catalog, connection, month) for connection in connections]
        return [statement for statement in found if statement.lines]

    async def months(self, catalog: Catalog, connection: Connection) -> list[Statement]:
        """The statements of the connection's newest months with bookings, newest first."""
        async with self._db.transaction(write=False) as conn:
            months = await statements_repo.months_with_bookings(conn, connection.id, self.basis)
            months.update(
                Month.of(at.date()) for at in await gifts_repo.confirmation_times(conn, connection.id)
            )
        newest = sorted(months, reverse=True)[:LISTED_MONTHS]
        return [await self.of(catalog, connection, month) for month in newest]
