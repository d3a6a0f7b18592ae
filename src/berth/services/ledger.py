"""The payments ledger as the back office reads it (domain.ledger): a page of its movements with
their totals, every movement for an export, a month's sales report per channel, and what needs
staff (refunds that failed). The payments service writes the ledger; this only reads it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from berth.domain.ledger import ChannelSales, Movement
from berth.domain.statements import Month
from berth.services.clock import Clock
from berth.store import ledger_repo
from berth.store.database import Database
from berth.store.ledger_repo import LedgerFilter

# Movements read per batch by an export.
EXPORT_BATCH = 500
# The dashboard calls out refunds that failed in these last days.
FAILED_REFUND_DAYS = 30
# The sales reports listed: this many of the newest months with money.
LISTED_MONTHS = 24


@dataclass(frozen=True)
class LedgerPage:
    movements: list[Movement]
    total: int  # how many movements match
    sales: list[ChannelSales]  # the money that moved among them, by channel and currency


class LedgerService:
    def __init__(self, database: Database, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    async def page(self, where: LedgerFilter, limit: int, offset: int) -> LedgerPage:
        async with self._db.transaction(write=False) as conn:
            movements, total = await ledger_repo.ledger_page(conn, where, limit, offset)
            sales = await ledger_repo.channel_sales(conn, where) if total else []
        return LedgerPage(movements, total, sales)

    async def export(self, where: LedgerFilter, batch: int = EXPORT_BATCH) -> AsyncIterator[list[Movement]]:
        """Every matching movement, oldest first, in batches of `batch`, each read in a
        transaction of its own: an export never holds the whole ledger."""
        after: tuple[datetime, str] | None = None
        while True:
            async with self._db.transaction(write=False) as conn:
                found = await ledger_repo.ledger_after(conn, where, after, batch)
            if found:
                yield found
            if len(found) < batch:
                return
            after = (found[-1].at, found[-1].id)

    async def sales(self, month: Month) -> list[ChannelSales]:
        """The month's sales report (UTC): money that moved, by channel and currency."""
        period = LedgerFilter(moved_from=month.starts_at(), moved_before=month.next.starts_at())
        async with self._db.transaction(write=False) as conn:
            return await ledger_repo.channel_sales(conn, period)

    async def months(self) -> list[Month]:
        """The months with money that moved, newest first (at most LISTED_MONTHS)."""
        async with self._db.transaction(write=False) as conn:
            span = await ledger_repo.moved_between(conn)
        if span is None:
            return []
        first, last = (Month(at.year, at.month) for at in span)
        months = [last]
        while months[-1] > first and len(months) < LISTED_MONTHS:
            previous = months[-1]
            months.append(
                Month(previous.year - 1, 12)
                if previous.month == 1
                else Month(previous.year, previous.month - 1)
            )
        return months

    async def failed_refunds(self) -> tuple[int, datetime]:
        """How many refunds failed in the last FAILED_REFUND_DAYS days, and since when."""
        since = self._clock() - timedelta(days=FAILED_REFUND_DAYS)
        async with self._db.transaction(write=False) as conn:
            return await ledger_repo.failed_refunds_since(conn, since), since
