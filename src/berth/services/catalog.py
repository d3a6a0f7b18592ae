"""The catalogue: imported and exported as a file, read from an in-process cache.

Every process keeps the last catalogue it loaded and the version it had. A request hands in
the version the database holds now (read together with the API key); a different version
reloads. Anything derived from the catalogue (serialized products per capability set) is
memoised on the snapshot, so it is dropped with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from berth.domain.audit import Target
from berth.domain.catalog import Catalog, Product, Supplier
from berth.domain.catalog.document import catalog_to_yaml, parse_catalog
from berth.domain.catalog.rules import CatalogRule
from berth.domain.catalog_changes import CatalogChanges, ImportRefused, compare_catalogs
from berth.domain.staff import Actor
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.store import audit_repo, bookings_repo, catalog_repo
from berth.store.database import Database, DbConnection

EMPTY_CATALOG = Catalog(supplier=Supplier(id="berth", name="Berth supplier"))


@dataclass
class CatalogSnapshot:
    version: int
    catalog: Catalog
    memo: dict[Any, Any] = field(default_factory=dict)
    languages: list[str] = field(init=False)  # the catalogue's, asked by every OCTO request

    def __post_init__(self) -> None:
        self.languages = self.catalog.languages


@dataclass(frozen=True)
class ImportOutcome:
    catalog: Catalog
    changes: CatalogChanges
    version: int | None  # the version stored; None for a dry run


class CatalogService:
    def __init__(self, database: Database, clock: Clock, rules: Sequence[CatalogRule]) -> None:
        """`rules`: the catalogue rules of the capabilities' declarations."""
        self._rules = tuple(rules)
        self._db = database
        self._clock = clock
        # Set by the composition root: the webhook fan-out needs this service too.
        self.observer: ChangeObserver | None = None
        self._snapshot = CatalogSnapshot(-1, EMPTY_CATALOG)
        self._reload_lock = asyncio.Lock()

    async def snapshot(self, version: int | None = None) -> CatalogSnapshot:
        """The catalogue at `version` (the database's current one when not given)."""
        if version is not None and version <= self._snapshot.version:
            # Versions only grow: a caller holding an older number (a remembered key check)
            # gets the newer catalogue this process already has.
            return self._snapshot
        async with self._reload_lock:
            if version is None or version > self._snapshot.version:  # not loaded meanwhile
                async with self._db.transaction(write=False) as conn:
                    return await self.snapshot_in(conn)
        return self._snapshot

    async def snapshot_in(self, conn: DbConnection) -> CatalogSnapshot:
        """The current catalogue, read on `conn`. Callers inside a transaction use this: they must
        not ask the pool for a second connection, since once such callers hold every pooled
        connection, each would wait for another's until the pool's timeout."""
        version = await catalog_repo.catalog_version(conn)
        if version > self._snapshot.version:
            loaded_version, catalog = await catalog_repo.load_catalog(conn)
            if loaded_version > self._snapshot.version:
                self._snapshot = CatalogSnapshot(loaded_version, catalog or EMPTY_CATALOG)
        return self._snapshot

    async def replace(self, catalog: Catalog) -> int:
        """Store `catalog` as it is (the demo loader's way; imports go through `import_text`)."""
        async with self._db.transaction(write=True) as conn:
            _, before = await catalog_repo.load_catalog(conn)
            version = await self._save(conn, before or EMPTY_CATALOG, catalog)
        self._snapshot = CatalogSnapshot(version, catalog)
        return version

    async def _save(self, conn: DbConnection, before: Catalog, catalog: Catalog) -> int:
        version = await catalog_repo.save_catalog(conn, catalog, self._clock())
        if self.observer is not None:
            await self.observer.catalog_changed(conn, before, catalog)
        return version

    async def import_text(
        self, text: str, *, actor: Actor, dry_run: bool = False, force: bool = False
    ) -> ImportOutcome:
        """Parse a catalogue file and compare it with the stored one; store it unless `dry_run`.

        Raises CatalogFileError for a file with problems and ImportRefused when it removes or
        shrinks what live bookings hold and `force` is not given; either way nothing is stored.
        """
        catalog = parse_catalog(text, self._rules)
        now = self._clock()
        async with self._db.transaction(write=not dry_run) as conn:
            _, stored = await catalog_repo.load_catalog(conn)
            before = stored or EMPTY_CATALOG
            # Two days back reach every day (OPENING_HOURS) not yet over, whatever its zone and
            # length; the domain keeps the bookings of departures ahead.
            live = await bookings_repo.holding_places_since(conn, now - timedelta(days=2), now)
            changes = compare_catalogs(before, catalog, live, now)
            if dry_run:
                return ImportOutcome(catalog, changes, None)
            if changes.conflicts and not force:
                raise ImportRefused(changes)
            version = await self._save(conn, before, catalog)
            details = {
                "version": version,
                "products": len(catalog.products),
                "force": force,
                "affectedBookings": changes.affected_bookings,
            }
            await audit_repo.record(
                conn, actor, "catalog.import", Target("catalog", "catalog"), details, at=now
            )
        self._snapshot = CatalogSnapshot(version, catalog)
        return ImportOutcome(catalog, changes, version)

    async def export_text(self) -> str:
        return catalog_to_yaml((await self.snapshot()).catalog)

    async def product(self, product_id: str) -> Product | None:
        return (await self.snapshot()).catalog.product(product_id)
