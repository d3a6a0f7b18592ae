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
from datetime import datetime, timedelta
from typing import Any

from berth.domain.audit import Target
from berth.domain.catalog import Catalog, Product, Supplier
from berth.domain.catalog.document import catalog_to_yaml, parse_catalog
from berth.domain.catalog.rules import CatalogRule
from berth.domain.catalog_changes import CatalogChanges, ImportRefused, compare_catalogs
from berth.domain.catalog_history import (
    CatalogConflict,
    CatalogVersion,
    Door,
    changes_words,
    summary_of,
    yaml_diff,
)
from berth.domain.errors import BadRequest, NotFound
from berth.domain.staff import COMMAND_LINE, SAVE_OVER_LIVE_BOOKINGS, Actor
from berth.services.clock import Clock
from berth.services.events import ChangeObserver
from berth.services.offload import off_loop
from berth.store import audit_repo, bookings_reads, catalog_repo, connections_repo
from berth.store.connection import DbConnection
from berth.store.database import Database

EMPTY_CATALOG = Catalog(supplier=Supplier(id="berth", name="Berth supplier"))


@dataclass
class CatalogSnapshot:
    version: int
    catalog: Catalog
    # What the catalogue is as sold: "" for the supplier's own, a contract's digest for what a
    # connection under that contract sees (services.contracts). Kept answers name it.
    scope: str = ""
    memo: dict[Any, Any] = field(default_factory=dict)
    languages: list[str] = field(init=False)  # the catalogue's, asked by every OCTO request

    def __post_init__(self) -> None:
        self.languages = self.catalog.languages


@dataclass(frozen=True)
class ImportOutcome:
    catalog: Catalog
    changes: CatalogChanges
    version: int | None  # the version stored; None for a dry run
    base_version: int  # the version compared with (and replaced, unless a dry run)


@dataclass(frozen=True)
class VersionDiff:
    """A version against the one before it: what changed in words, and the YAML diff."""

    version: CatalogVersion
    document: str
    previous: int | None  # None: the first version of the history
    words: list[str]
    diff: list[str]


# The audit action of a save through each door.
_ACTIONS = {Door.EDITOR: "catalog.edit", Door.API: "catalog.import", Door.CLI: "catalog.import"}


def _compared(
    before_text: str | None, before_number: int | None, document: str, version: int, now: datetime
) -> tuple[list[str], list[str]]:
    """What `version` changed from the version before it (None: there was none), in words,
    and the YAML diff of their documents."""
    before = parse_catalog(before_text, ()) if before_text is not None else EMPTY_CATALOG
    changes = compare_catalogs(before, parse_catalog(document, ()), (), now)
    before_name = f"version {before_number}" if before_number is not None else "nothing"
    return changes_words(changes), yaml_diff(before_text or "", document, before_name, f"version {version}")


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

    async def replace(self, catalog: Catalog, *, actor: Actor = COMMAND_LINE) -> int:
        """Store `catalog` as it is (the demo loader's way; imports go through `import_text`)."""
        async with self._db.transaction(write=True) as conn:
            _, before = await catalog_repo.load_catalog(conn)
            changes = compare_catalogs(before or EMPTY_CATALOG, catalog, (), self._clock())
            summary = summary_of(changes)
            version = await self._save(conn, before or EMPTY_CATALOG, catalog, actor, Door.SETUP, summary)
        self._snapshot = CatalogSnapshot(version, catalog)
        return version

    async def _save(
        self, conn: DbConnection, before: Catalog, catalog: Catalog, actor: Actor, door: Door, summary: str
    ) -> int:
        version = await catalog_repo.save_catalog(
            conn, catalog, self._clock(), actor=actor, door=door, summary=summary
        )
        if self.observer is not None:
            await self.observer.catalog_changed(conn, before, catalog)
        return version

    async def import_text(
        self,
        text: str,
        *,
        actor: Actor,
        door: Door = Door.CLI,
        dry_run: bool = False,
        force: bool = False,
        cap_nets: bool = False,
        base_version: int | None = None,
        restoring: int | None = None,
    ) -> ImportOutcome:
        """Parse a catalogue file and compare it with the stored one; store it as a new version
        unless `dry_run`. `base_version`: the version the file was made from (the editor's and
        the API's `baseVersion`); `restoring`: the version whose document this is.

        Raises CatalogFileError for a file with problems, CatalogConflict when the catalogue is
        no longer at `base_version`, and ImportRefused when it removes or shrinks what live
        bookings hold and `force` is not given, or puts contracts' nets above the retail they
        apply to and `cap_nets` (sell them at the retail) is not given; whichever, nothing is
        stored.
        """
        # Parsing and comparing a large catalogue takes long enough to hold up every request of
        # the process: both run off the event loop.
        catalog = await off_loop(parse_catalog, text, self._rules)
        now = self._clock()
        async with self._db.transaction(write=not dry_run) as conn:
            if not dry_run:  # held to the end: a save in between cannot slip past the check
                await catalog_repo.lock_catalog(conn)
            current, stored = await catalog_repo.load_catalog(conn)
            before = stored or EMPTY_CATALOG
            if base_version is not None and base_version != current:
                raise await self._conflict(conn, base_version, current, before)
            # Two days back reach every day (OPENING_HOURS) not yet over, whatever its zone and
            # length; the domain keeps the bookings of departures ahead.
            live = await bookings_reads.holding_places_since(conn, now - timedelta(days=2), now)
            connections = await connections_repo.list_connections(conn)
            changes = await off_loop(compare_catalogs, before, catalog, live, now, connections)
            if dry_run:
                return ImportOutcome(catalog, changes, None, current)
            refuse_bookings = bool(changes.conflicts) and not force
            refuse_nets = bool(changes.nets_above_retail) and not cap_nets
            if refuse_bookings or refuse_nets:
                raise ImportRefused(changes, bookings=refuse_bookings, nets=refuse_nets)
            if changes.conflicts:
                doing = (
                    "Restoring over live bookings" if restoring is not None else "Saving over live bookings"
                )
                actor.require(SAVE_OVER_LIVE_BOOKINGS, doing)
            prefix = f"Restored version {restoring}: " if restoring is not None else ""
            summary = summary_of(changes, prefix)
            version = await self._save(conn, before, catalog, actor, door, summary)
            details = {
                "version": version,
                "door": door.value,
                "summary": summary,
                "products": len(catalog.products),
                "force": force,
                "affectedBookings": changes.affected_bookings,
                "netsSoldAtRetail": [str(net) for net in changes.nets_above_retail],
            }
            action = "catalog.restore" if restoring is not None else _ACTIONS.get(door, "catalog.import")
            target = Target("catalog_version", str(version), f"catalogue version {version}")
            await audit_repo.record(conn, actor, action, target, details, at=now)
        self._snapshot = CatalogSnapshot(version, catalog)
        return ImportOutcome(catalog, changes, version, current)

    async def _conflict(
        self, conn: DbConnection, base_version: int, current: int, catalog: Catalog
    ) -> BadRequest | CatalogConflict:
        if base_version > current or base_version < 0:
            return BadRequest(
                f"baseVersion {base_version} is not a version of the catalogue (the current one is {current})"
            )
        latest = await catalog_repo.find_version(conn, current)
        base = await catalog_repo.find_version(conn, base_version)
        since: list[str] = []
        if base is not None:
            changes = compare_catalogs(parse_catalog(base[1], ()), catalog, (), self._clock())
            since = changes_words(changes)
        return CatalogConflict(base_version, latest[0] if latest else None, current, since)

    async def restore(
        self,
        version: int,
        *,
        actor: Actor,
        door: Door,
        dry_run: bool = False,
        force: bool = False,
        cap_nets: bool = False,
    ) -> ImportOutcome:
        """Save the document of `version` as a new version, with the checks of an import."""
        async with self._db.transaction(write=False) as conn:
            found = await catalog_repo.find_version(conn, version)
        if found is None:
            raise NotFound(f"The catalogue has no version {version}")
        return await self.import_text(
            found[1],
            actor=actor,
            door=door,
            dry_run=dry_run,
            force=force,
            cap_nets=cap_nets,
            restoring=version,
        )

    async def versions(self, *, limit: int = 50, before: int | None = None) -> list[CatalogVersion]:
        async with self._db.transaction(write=False) as conn:
            return await catalog_repo.list_versions(conn, limit=limit, before=before)

    async def version_document(self, version: int) -> tuple[CatalogVersion, str]:
        async with self._db.transaction(write=False) as conn:
            found = await catalog_repo.find_version(conn, version)
        if found is None:
            raise NotFound(f"The catalogue has no version {version}")
        return found

    async def version_diff(self, version: int) -> VersionDiff:
        """`version` against the version before it in the history."""
        async with self._db.transaction(write=False) as conn:
            found = await catalog_repo.find_version(conn, version)
            previous = await catalog_repo.previous_document(conn, version)
        if found is None:
            raise NotFound(f"The catalogue has no version {version}")
        entry, document = found
        before_number, before_text = previous if previous is not None else (None, "")
        words, diff = await off_loop(
            _compared,
            before_text if previous is not None else None,
            before_number,
            document,
            version,
            self._clock(),
        )
        return VersionDiff(entry, document, before_number, words, diff)

    async def export_text(self) -> str:
        return (await self.export())[1]

    async def export(self) -> tuple[int, str]:
        """The current version and its YAML: an editor's `baseVersion` and what it starts from."""
        snapshot = await self.snapshot()
        return snapshot.version, await off_loop(catalog_to_yaml, snapshot.catalog)

    async def product(self, product_id: str) -> Product | None:
        return (await self.snapshot()).catalog.product(product_id)
