"""Allotments and stop-sells as they apply (domain.allotments): the places a connection may
not take on a departure because they are other connections' blocks, the state of a departure
as each connection sees it, what staff see of each block, and the release of blocks (by the
sweep at their time, or early by staff), each recorded and announced once.

The blocks come from the connections' contracts, read once and kept for
`BERTH_AUTH_CACHE_SECONDS` (as API keys are): a contract saved in another process applies here
within that time; one saved in this process at once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from berth.domain.allotments import (
    AllotmentBook,
    Block,
    BlockUse,
    StopSell,
    closed_to,
    reserved_for,
    seen_with,
    stopped,
    uses,
)
from berth.domain.audit import Target
from berth.domain.availability import SlotState
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.errors import NotFound
from berth.domain.slots import Slot, slots_between
from berth.domain.staff import Actor
from berth.services.clock import Clock
from berth.store import allotments_repo, audit_repo, connections_repo
from berth.store.allotments_repo import Departure
from berth.store.connection import DbConnection
from berth.store.database import Database


@dataclass(frozen=True)
class Viewer:
    """Who asks about availability: a connection (None: staff) and its stop-sells."""

    connection_id: str | None
    stop_sells: tuple[StopSell, ...] = ()


STAFF = Viewer(None)

# How far back the release sweep looks for releases to record and announce: a sweep that did
# not run for longer (every process down) leaves older ones unannounced, never wrong.
RELEASE_LOOKBACK = timedelta(hours=6)


def _blocks(book: AllotmentBook, product: Product, option: Option, slot: Slot) -> tuple[Block, ...]:
    """The departure's blocks. None on a rental option: it is rented by duration, not sold by
    departure (a contract cannot name one; a block left on an option that became a rental
    since holds nothing)."""
    return () if option.is_rental else book.blocks(product.id, option.id, slot)


@dataclass(frozen=True)
class _Terms:
    """What the contracts in force say of places: every allotment, each connection's stop-sells."""

    book: AllotmentBook
    stop_sells: dict[str, tuple[StopSell, ...]]


class ReleaseObserver(Protocol):
    async def slots_changed(
        self, conn: DbConnection, slots: Sequence[Departure], unchanged_for: Sequence[str] = ()
    ) -> None: ...


class AllotmentService:
    def __init__(self, database: Database, clock: Clock, cache_seconds: float) -> None:
        self._db = database
        self._clock = clock
        self._cache_seconds = cache_seconds
        self._kept: tuple[float, _Terms] | None = None
        self.observer: ReleaseObserver | None = None

    def forget(self) -> None:
        """Read the contracts again at the next question (a contract was saved here)."""
        self._kept = None

    async def book(self, conn: DbConnection | None = None) -> AllotmentBook:
        """Every in-force contract's allotments (read in `conn` when given)."""
        return (await self._terms(conn)).book

    async def stopped(
        self, conn: DbConnection, connection_id: str, product: Product, option: Option, slot: Slot
    ) -> bool:
        """Whether the connection's contract stops it selling `slot` (a new sale or a move)."""
        terms = await self._terms(conn)
        return stopped(terms.stop_sells.get(connection_id, ()), product.id, option.id, slot.local_date)

    async def _terms(self, conn: DbConnection | None) -> _Terms:
        kept = self._kept
        if kept is not None and time.monotonic() - kept[0] < self._cache_seconds:
            return kept[1]
        if conn is None:
            async with self._db.single_read() as read:
                listed = await connections_repo.list_connections(read)
        else:
            listed = await connections_repo.list_connections(conn)
        today = self._clock().date()
        live = [c for c in listed if c.active and c.contract.in_force(today)]
        terms = _Terms(
            AllotmentBook((c.id, c.contract.allotments) for c in live if c.contract.allotments),
            {c.id: c.contract.stop_sells for c in live if c.contract.stop_sells},
        )
        self._kept = (time.monotonic(), terms)
        return terms

    async def blocking(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        connection_id: str,
        now: datetime,
    ) -> list[tuple[str, int]]:
        """The other connections' blocks on `slot` not released by the clock yet (connection
        id, places): a writer counts what is unused of them under the departure's lock."""
        book = await self.book(conn)
        if not book.has_blocks(product.id):
            return []
        return [
            (b.connection_id, b.places)
            for b in _blocks(book, product, option, slot)
            if b.connection_id != connection_id and now < b.release_at
        ]

    async def reserved_in(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slot: Slot,
        connection_id: str,
        now: datetime,
        *,
        excluding: str | None = None,
    ) -> int:
        """The places of `slot` that `connection_id` may not take: the others' unused blocks,
        read in the caller's transaction (a writer: under the departure's lock). Whether the
        departure has places to hold (not freesale) is the caller's count to say."""
        book = await self.book(conn)
        if not book.has_blocks(product.id):
            return 0
        others = [b for b in _blocks(book, product, option, slot) if b.connection_id != connection_id]
        if not others:
            return 0
        holders = {b.connection_id for b in others}
        standing = await allotments_repo.standing(
            conn, product.id, option.id, [slot], holders, now, excluding=excluding
        )
        return reserved_for(
            connection_id, others, standing.holdings(slot.id), now, standing.released_early(slot.id)
        )

    async def seen_by(
        self,
        conn: DbConnection,
        viewer: Viewer,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        states: list[SlotState],
        now: datetime,
        requested: int | None,
    ) -> list[SlotState]:
        """`states` of `slots` as `viewer` sees them: closed by its stop-sells, less the others'
        unused blocks. Reads the holdings only where a departure has others' blocks."""
        if viewer.stop_sells:
            states = [
                closed_to(state)
                if stopped(viewer.stop_sells, product.id, option.id, slot.local_date)
                else state
                for slot, state in zip(slots, states, strict=True)
            ]
        book = await self.book(conn)
        if not book.has_blocks(product.id) or not slots:
            return states
        blocks = [_blocks(book, product, option, slot) for slot in slots]
        if not any(b.connection_id != viewer.connection_id for found in blocks for b in found):
            return states
        holders = {b.connection_id for found in blocks for b in found}
        standing = await allotments_repo.standing(conn, product.id, option.id, slots, holders, now)
        return [
            seen_with(
                state,
                reserved_for(
                    viewer.connection_id,
                    found,
                    standing.holdings(slot.id),
                    now,
                    standing.released_early(slot.id),
                ),
                requested,
            )
            if found
            else state
            for slot, state, found in zip(slots, states, blocks, strict=True)
        ]

    async def blocks_of(
        self, product: Product, option: Option, slots: Sequence[Slot]
    ) -> list[list[BlockUse]]:
        """For staff: each departure's blocks, with what their connections use of them."""
        now = self._clock()
        book = await self.book()
        blocks = [_blocks(book, product, option, slot) for slot in slots]
        if not any(blocks):
            return [[] for _ in slots]
        async with self._db.single_read() as conn:
            holders = {b.connection_id for found in blocks for b in found}
            standing = await allotments_repo.standing(conn, product.id, option.id, slots, holders, now)
        return [
            uses(found, standing.holdings(slot.id), now, standing.released_early_at(slot.id))
            for slot, found in zip(slots, blocks, strict=True)
        ]

    async def release_early(
        self, product: Product, option: Option, slot: Slot, connection_id: str, *, actor: Actor
    ) -> bool:
        """Staff give a block's unused places back to the general pool now, in the audit trail
        (`allotment.release`, the connection its target). False: it was released already (or
        its time had come)."""
        book = await self.book()
        block = next(
            (b for b in _blocks(book, product, option, slot) if b.connection_id == connection_id), None
        )
        if block is None:
            raise NotFound(f"Connection {connection_id} has no block on availability {slot.id}")
        now = self._clock()
        if now >= block.release_at:
            return False
        departure = (product.id, option.id, slot.id)
        async with self._db.transaction(write=True) as conn:
            recorded = await allotments_repo.record_releases(
                conn,
                [(connection_id, departure, slot.start.astimezone(UTC))],
                now,
                early=True,
                actor=actor.name,
            )
            if recorded:
                connection = await connections_repo.find_connection(conn, connection_id)
                target = Target("connection", connection_id, connection.name if connection else None)
                details = {"departure": "/".join(departure), "places": block.places}
                await audit_repo.record(conn, actor, "allotment.release", target, details, at=now)
            if recorded and self.observer is not None:
                await self.observer.slots_changed(conn, [departure], unchanged_for=[connection_id])
        return bool(recorded)

    async def release_due(self, catalog: Catalog) -> int:
        """Record the blocks whose release time came within the last `RELEASE_LOOKBACK`, on
        departures not yet started, and announce each departure once (to everyone but the
        block's connection, whose view does not change). Any process may run it: each release
        is recorded once. (Reads never wait for it: a block past its time is released.)"""
        now = self._clock()
        book = await self.book()
        if not book:
            return 0
        due: list[tuple[str, Departure, datetime]] = []
        for connection_id, allotment in book.allotments():
            product = catalog.product(allotment.product)
            if product is None:
                continue
            # Departures released in (now - lookback, now]: starting that much after now.
            latest = now + timedelta(hours=allotment.release_hours)
            earliest = max(now, latest - RELEASE_LOOKBACK)
            zone = ZoneInfo(product.time_zone)
            for option in product.options:
                if allotment.option not in (None, option.id) or option.is_rental:
                    continue
                days = (earliest.astimezone(zone).date(), latest.astimezone(zone).date())
                for slot in slots_between(product, option, *days):
                    start = slot.start.astimezone(UTC)
                    if earliest < start <= latest and allotment.covers(product.id, option.id, slot):
                        due.append((connection_id, (product.id, option.id, slot.id), start))
        if not due:
            return 0
        async with self._db.single_read() as conn:  # no write turn (SQLite) when all are recorded
            done = await allotments_repo.recorded(conn, due)
        due = [(c, d, start) for c, d, start in due if (c, d) not in done]
        if not due:
            return 0
        async with self._db.transaction(write=True) as conn:
            recorded = await allotments_repo.record_releases(conn, due, now, early=False)
            if recorded and self.observer is not None:
                for connection_id, departure in sorted(recorded):
                    await self.observer.slots_changed(conn, [departure], unchanged_for=[connection_id])
        return len(recorded)
