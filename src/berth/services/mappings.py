"""Self-service mapping: the reseller's upload and listing (PUT/GET /mappings), the rows that
`mappings[]` draws from, and the supplier's side (pending list, completion with notification).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from berth.domain.audit import Target
from berth.domain.catalog import Catalog
from berth.domain.contracts import contract_catalog
from berth.domain.errors import NotFound
from berth.domain.mappings import (
    MappedRows,
    MappingFilter,
    MappingRow,
    MappingUpload,
    Resolution,
    apply_upload,
    check_resolution,
    check_uploads,
    needs_notification,
    new_row,
    notification_target,
    plan_upload,
    resolve,
)
from berth.domain.staff import Actor
from berth.services.clock import Clock
from berth.services.events import MappingObserver
from berth.settings import Settings
from berth.store import audit_repo, connections_repo, deliveries_repo, mappings_repo
from berth.store.database import Database
from berth.store.deliveries_repo import Delivery

log = structlog.get_logger("berth.mappings")


@dataclass(frozen=True)
class StaffRow:
    row: MappingRow
    connection_name: str


@dataclass(frozen=True)
class MappingCounts:
    connection_id: str
    connection_name: str
    pending: int
    mapped: int


class MappingService:
    def __init__(
        self, database: Database, settings: Settings, clock: Clock, observer: MappingObserver
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._observer = observer

    # --- the reseller ---------------------------------------------------------------------

    async def replace_all(self, connection_id: str, uploads: Sequence[MappingUpload]) -> list[MappingRow]:
        """PUT /mappings: the upload is the connection's full set. Upsert by reference, remove
        the rest, keep the supplier's side; all of it or (on any bad row) nothing."""
        check_uploads(uploads, self._settings.webhook_allow_private_targets)
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            await mappings_repo.lock_connection(conn, connection_id)
            existing = await mappings_repo.connection_rows(conn, connection_id, for_update=True)
            plan = plan_upload(existing, uploads)
            if plan.empty:
                return existing
            added = [
                new_row(str(uuid.uuid4()), connection_id, position, upload, now)
                for position, upload in plan.inserts
            ]
            await mappings_repo.insert_rows(conn, added)
            updated = [
                (row, apply_upload(row, position, upload, now)) for row, position, upload in plan.updates
            ]
            await mappings_repo.save_reseller_sides(conn, [after for _, after in updated])
            for before, after in updated:
                if after.webhook_url != before.webhook_url:
                    await self._observer.mapping_url_changed(conn, after)
            await mappings_repo.delete_rows(conn, [row.id for row in plan.removals])
            await self._observer.mappings_removed(conn, plan.removals)
            stored = await mappings_repo.connection_rows(conn, connection_id)
        if added:
            # The supplier learns of new rows from the pending list (GET /admin/api/mappings).
            log.info("mapping rows waiting for the supplier", connection=connection_id, added=len(added))
        return stored

    async def find(self, connection_id: str, where: MappingFilter) -> list[MappingRow]:
        async with self._db.transaction(write=False) as conn:
            return await mappings_repo.find_rows(conn, connection_id, where)

    async def view_rows(self, connection_id: str) -> MappedRows:
        """The connection's mapped rows, for `mappings[]` (one query)."""
        async with self._db.transaction(write=False) as conn:
            return await mappings_repo.mapped_rows(conn, connection_id)

    # --- the supplier ---------------------------------------------------------------------

    async def search(
        self,
        *,
        pending: bool | None = None,
        connection_id: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[StaffRow], int]:
        async with self._db.transaction(write=False) as conn:
            found, total = await mappings_repo.staff_rows(
                conn, pending=pending, connection_id=connection_id, limit=limit, offset=offset
            )
        return [StaffRow(row, name) for row, name in found], total

    async def counts(self) -> list[MappingCounts]:
        async with self._db.transaction(write=False) as conn:
            return [MappingCounts(*entry) for entry in await mappings_repo.counts(conn)]

    async def get(self, row_id: str) -> tuple[MappingRow, list[Delivery]]:
        """A row and its notifications, newest first."""
        async with self._db.transaction(write=False) as conn:
            row = await mappings_repo.get_row(conn, row_id)
            if row is None:
                raise NotFound(f"No mapping with id {row_id!r}")
            notifications, _ = await deliveries_repo.list_deliveries(
                conn, target_key=notification_target(row.id), limit=100
            )
        return row, notifications

    async def complete(
        self, catalog: Catalog, row_id: str, chosen: Resolution, *, actor: Actor, notify: bool = True
    ) -> MappingRow:
        """The supplier maps a row to a product (and option and unit where the row requires
        them), checked against the catalogue as the row's connection's contract sells it. A row that becomes mapped, or whose resolved ids
        change, queues the notification POST to its `webhookUrl` in the same transaction."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            row = await mappings_repo.get_row(conn, row_id, for_update=True)
            if row is None:
                raise NotFound(f"No mapping with id {row_id!r}")
            # Only what the row's connection may sell: its contract's catalogue.
            owner = await connections_repo.find_connection(conn, row.connection_id)
            sold = contract_catalog(catalog, owner.contract, now.date()) if owner is not None else catalog
            resolution = check_resolution(sold, row, chosen)
            if row.mapped and (row.product_id, row.option_id, row.unit_id) == (
                resolution.product_id,
                resolution.option_id,
                resolution.unit_id,
            ):
                return row  # the same choice again: nothing changes, nobody is notified
            after = resolve(row, resolution, now)
            await mappings_repo.save_supplier_side(conn, after)
            if notify and needs_notification(row, after):
                await self._observer.mapping_resolved(conn, after)
            details = {
                "productId": after.product_id,
                "optionId": after.option_id,
                "unitId": after.unit_id,
                "connectionId": after.connection_id,
            }
            await audit_repo.record(
                conn,
                actor,
                "mapping.complete",
                Target("mapping", row.id, row.reseller_reference),
                details,
                at=now,
            )
        return after
