"""The offers document (domain.offers): read (kept by each process until a commit anywhere
changes everything: a save writes `EVERYTHING` to the change feed), save (versioned, audited,
refused on a stale base), restore; and which offers a sale may use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from berth.domain.audit import Target
from berth.domain.errors import BadRequest, Conflict, NotFound
from berth.domain.offers import OffersDocument, catalog_problems, parse_offers
from berth.domain.staff import Actor
from berth.services.answers import AnswerCache
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.store import audit_repo, connections_repo, offers_repo, shop_repo
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.offers_repo import NEVER_SAVED, OffersVersion

KEPT = "offers"  # the document's key in the answers kept until everything changes


@dataclass(frozen=True)
class CurrentOffers:
    """The offers document as this process last read it, with the shop's connection (whose
    sales the `SHOP` channel names)."""

    version: OffersVersion
    shop_connection_id: str | None

    @property
    def document(self) -> OffersDocument:
        return self.version.document


class OffersConflict(Conflict):
    def __init__(self, base: int, current: int) -> None:
        super().__init__(
            f"The offers were saved by someone else since version {base} (the current one is {current}); "
            "nothing was saved: load them again and redo the change",
            baseVersion=base,
            currentVersion=current,
        )


def _summary(before: OffersDocument, after: OffersDocument) -> str:
    old = {o.id: o for o in before.offers}
    new = {o.id: o for o in after.offers}
    parts = [f"added {i}" for i in new if i not in old]
    parts += [f"removed {i}" for i in old if i not in new]
    parts += [f"changed {i}" for i in new if i in old and old[i] != new[i]]
    return ", ".join(parts) or "no change"


class OffersService:
    def __init__(
        self, database: Database, clock: Clock, catalog: CatalogService, answers: AnswerCache
    ) -> None:
        self._db = database
        self._clock = clock
        self._catalog = catalog
        self._answers = answers
        self.latest = CurrentOffers(NEVER_SAVED, None)

    async def current(self) -> CurrentOffers:
        """The current offers (read again only after a commit that changed everything)."""
        self.latest = await self._answers.until_everything_changes((KEPT,), self._read)
        return self.latest

    async def current_in(self, conn: DbConnection) -> CurrentOffers:
        """`current`, read on `conn` when it must be read (for callers inside a transaction,
        which must not ask the pool for a second connection)."""
        self.latest = await self._answers.until_everything_changes((KEPT,), lambda: self._read_in(conn))
        return self.latest

    async def _read(self) -> CurrentOffers:
        async with self._db.transaction(write=False) as conn:
            return await self._read_in(conn)

    @staticmethod
    async def _read_in(conn: DbConnection) -> CurrentOffers:
        return CurrentOffers(await offers_repo.current(conn), await shop_repo.channel_connection_id(conn))

    async def versions(self, limit: int = 100) -> list[OffersVersion]:
        async with self._db.transaction(write=False) as conn:
            return await offers_repo.versions(conn, limit)

    async def save(self, document: Any, *, base_version: int | None, actor: Actor) -> OffersVersion:
        return await self._save(parse_offers(document), base_version=base_version, actor=actor, restored=None)

    async def restore(self, number: int, *, actor: Actor) -> OffersVersion:
        async with self._db.transaction(write=False) as conn:
            found = await offers_repo.version(conn, number)
        if found is None:
            raise NotFound(f"The offers have no version {number}")
        return await self._save(found.document, base_version=None, actor=actor, restored=number)

    async def _save(
        self, document: OffersDocument, *, base_version: int | None, actor: Actor, restored: int | None
    ) -> OffersVersion:
        catalog = (await self._catalog.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            await offers_repo.lock_document(conn)
            connection_ids = {c.id for c in await connections_repo.list_connections(conn)}
            problems = catalog_problems(document, catalog, connection_ids)
            if problems:
                raise BadRequest(
                    f"The offers have {len(problems)} problem(s) with the catalogue; nothing was saved: "
                    + "; ".join(problems),
                    problems=problems,
                )
            before = await offers_repo.current(conn)
            if base_version is not None and base_version > before.version:
                raise BadRequest(
                    f"baseVersion {base_version} is not a version of the offers (the current one is "
                    f"{before.version}); nothing was saved"
                )
            if base_version is not None and base_version != before.version:
                raise OffersConflict(base_version, before.version)
            number = before.version + 1
            summary = f"restored version {restored}" if restored else _summary(before.document, document)
            now = self._clock()
            await offers_repo.save(conn, document, number, actor=actor, summary=summary, at=now)
            await audit_repo.record(
                conn,
                actor,
                "offers.save",
                Target("offers", str(number), "Offers"),
                {"version": number, "summary": summary},
                at=now,
            )
        return OffersVersion(number, now, actor.name, actor.role.value, summary, document)
