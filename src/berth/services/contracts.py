"""Connections' contracts: read, save (versioned, audited, refused on a stale base), restore, and
the catalogue each contract sells (kept per contract, shared by connections on equal terms)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any, Protocol

from berth.domain.audit import Target
from berth.domain.connections import Connection
from berth.domain.contracts import (
    Contract,
    ContractConflict,
    catalog_problems,
    contract_catalog,
    is_default,
    parse_contract,
)
from berth.domain.errors import BadRequest, NotFound
from berth.domain.staff import Actor
from berth.services.allotments import AllotmentService
from berth.services.catalog import CatalogService, CatalogSnapshot
from berth.services.clock import Clock
from berth.services.connections import ConnectionService
from berth.store import audit_repo, connections_repo
from berth.store.connection import DbConnection
from berth.store.connections_repo import ContractVersion
from berth.store.database import Database

MAX_KEPT = 64  # catalogues kept per (catalogue version, contract, day)


class ContractObserver(Protocol):
    async def contract_changed(
        self, conn: DbConnection, connection: Connection, before: Contract, after: Contract
    ) -> None: ...


@dataclass(frozen=True)
class SavedContract:
    connection: Connection
    contract: Contract
    version: int


_FIELDS = (
    ("products", "products"),
    ("rate", "rate"),
    ("valid_from", "validFrom"),
    ("valid_until", "validUntil"),
    ("payment_terms", "paymentTerms"),
    ("box_office", "boxOffice"),
    ("takes_payment", "takesPayment"),
    ("notes", "notes"),
    ("allotments", "allotments"),
    ("stop_sells", "stopSells"),
)


def _summary(before: Contract, after: Contract) -> str:
    changed = [label for name, label in _FIELDS if getattr(before, name) != getattr(after, name)]
    return "changed " + ", ".join(changed) if changed else "saved unchanged"


class ContractService:
    def __init__(
        self,
        database: Database,
        clock: Clock,
        connections: ConnectionService,
        catalog: CatalogService,
        allotments: AllotmentService,
    ) -> None:
        self._db = database
        self._allotments = allotments
        self._clock = clock
        self._connections = connections
        self._catalog = catalog
        self._kept: dict[tuple[int, str, date], CatalogSnapshot] = {}
        # Set by the composition root: told of each save in its transaction (the webhooks).
        self.observer: ContractObserver | None = None

    def snapshot(self, base: CatalogSnapshot, connection: Connection) -> CatalogSnapshot:
        """The catalogue `connection`'s contract sells today: the base itself for the default
        contract; else one kept per catalogue version, contract and day."""
        contract = connection.contract
        if is_default(contract):
            return base
        today = self._clock().date()
        key = (base.version, contract.digest, today)
        found = self._kept.get(key)
        if found is None:
            if len(self._kept) >= MAX_KEPT:
                self._kept.clear()
            found = CatalogSnapshot(
                base.version, contract_catalog(base.catalog, contract, today), scope=key[1]
            )
            self._kept[key] = found
        return found

    async def get(self, id_or_name: str) -> Connection:
        return await self._connections.get(id_or_name)

    async def save(
        self, id_or_name: str, document: Any, *, base_version: int | None, actor: Actor
    ) -> SavedContract:
        contract = parse_contract(document)
        return await self._save(id_or_name, contract, base_version=base_version, actor=actor, restored=None)

    async def restore(self, id_or_name: str, version: int, *, actor: Actor) -> SavedContract:
        connection = await self._connections.get(id_or_name)
        async with self._db.transaction(write=False) as conn:
            found = await connections_repo.contract_version(conn, connection.id, version)
        if found is None:
            raise NotFound(f"Connection {connection.name} has no contract version {version}")
        return await self._save(
            connection.id, found.contract, base_version=None, actor=actor, restored=version
        )

    async def versions(self, id_or_name: str, limit: int = 100) -> list[ContractVersion]:
        connection = await self._connections.get(id_or_name)
        async with self._db.transaction(write=False) as conn:
            return await connections_repo.contract_versions_of(conn, connection.id, limit)

    async def _save(
        self,
        id_or_name: str,
        contract: Contract,
        *,
        base_version: int | None,
        actor: Actor,
        restored: int | None,
    ) -> SavedContract:
        catalog = (await self._catalog.snapshot()).catalog
        problems = catalog_problems(contract, catalog)
        if problems:
            raise BadRequest(
                f"The contract has {len(problems)} problem(s) with the catalogue; nothing was "
                "saved: " + "; ".join(problems),
                problems=problems,
            )
        async with self._db.transaction(write=True) as conn:
            # Held to the end: the version read here is the one replaced, with or without a base.
            connection = await connections_repo.find_connection(conn, id_or_name, lock=True)
            if connection is None:
                raise NotFound(f"No connection with id or name {id_or_name!r}")
            current = connection.contract_version
            if base_version is not None and base_version > current:
                raise BadRequest(
                    f"baseVersion {base_version} is not a version of this contract (the current one is "
                    f"{current}); nothing was saved"
                )
            if base_version is not None and base_version != current:
                raise ContractConflict(base_version, current)
            summary = f"restored version {restored}" if restored else _summary(connection.contract, contract)
            now = self._clock()
            await connections_repo.save_contract(
                conn, connection.id, contract, current + 1, actor=actor, summary=summary, at=now
            )
            if self.observer is not None:
                await self.observer.contract_changed(conn, connection, connection.contract, contract)
            await audit_repo.record(
                conn,
                actor,
                "contract.save",
                Target("connection", connection.id, connection.name),
                {"version": current + 1, "summary": summary},
                at=now,
            )
        self._connections.forget()
        self._allotments.forget()
        # What this save wrote (another may have come after it already).
        saved = replace(connection, contract=contract, contract_version=current + 1)
        return SavedContract(saved, contract, current + 1)
