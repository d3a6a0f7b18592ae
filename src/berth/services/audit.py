"""Reading the audit trail (entries are written by each service in its action's transaction,
through `berth.store.audit_repo.record`)."""

from __future__ import annotations

from berth.domain.audit import AuditEntry, AuditFilter
from berth.store import audit_repo
from berth.store.database import Database


class AuditService:
    def __init__(self, database: Database) -> None:
        self._db = database

    async def search(self, where: AuditFilter, limit: int, offset: int) -> tuple[list[AuditEntry], int]:
        async with self._db.transaction(write=False) as conn:
            return await audit_repo.search(conn, where, limit=limit, offset=offset)
