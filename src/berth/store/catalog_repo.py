"""Reading and writing the catalogue documents."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update

from berth.domain.catalog import Catalog, Product, Supplier
from berth.domain.catalog.document import catalog_to_yaml
from berth.domain.catalog_history import CatalogVersion, Door
from berth.domain.staff import Actor
from berth.store import availability_changes_repo
from berth.store.change_marks import EVERYTHING
from berth.store.connection import DbConnection
from berth.store.tables import LAST_VERSION, catalog_meta, catalog_versions, products


async def catalog_version(conn: DbConnection) -> int:
    """0 when no catalogue was ever saved."""
    version = await conn.scalar(select(catalog_meta.c.version).where(catalog_meta.c.id == 1))
    return int(version or 0)


async def lock_catalog(conn: DbConnection) -> None:
    """Hold the catalogue's row until the transaction ends: saves take turns (PostgreSQL; a
    SQLite write transaction holds the whole database already)."""
    await conn.execute(select(catalog_meta.c.version).where(catalog_meta.c.id == 1).with_for_update())


async def load_catalog(conn: DbConnection) -> tuple[int, Catalog | None]:
    meta = (await conn.execute(select(catalog_meta).where(catalog_meta.c.id == 1))).first()
    if meta is None:
        return 0, None
    rows = await conn.execute(
        select(products.c.document).where(products.c.archived.is_(False)).order_by(products.c.position)
    )
    catalog = Catalog(
        supplier=Supplier.model_validate(meta.supplier),
        products=tuple(Product.model_validate(row.document) for row in rows),
    )
    return int(meta.version), catalog


async def load_archived_product(conn: DbConnection, product_id: str) -> Product | None:
    document = await conn.scalar(select(products.c.document).where(products.c.id == product_id))
    return None if document is None else Product.model_validate(document)


async def save_catalog(
    conn: DbConnection, catalog: Catalog, now: datetime, *, actor: Actor, door: Door, summary: str
) -> int:
    """Replace the catalogue; products no longer in it are archived; the catalogue is kept in
    the history as the new version, which is returned."""
    supplier_doc = catalog.supplier.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    current = (
        await conn.execute(select(catalog_meta.c.version).where(catalog_meta.c.id == 1).with_for_update())
    ).first()
    if current is None:
        version = 1
        await conn.execute(
            insert(catalog_meta).values(id=1, version=version, supplier=supplier_doc, updated_at=now)
        )
    else:
        version = int(current.version) + 1
        await conn.execute(
            update(catalog_meta)
            .where(catalog_meta.c.id == 1)
            .values(version=version, supplier=supplier_doc, updated_at=now)
        )
    existing = set((await conn.scalars(select(products.c.id))).all())
    kept = set()
    for position, product in enumerate(catalog.products):
        document = product.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        values = {"position": position, "archived": False, "document": document, "updated_at": now}
        if product.id in existing:
            await conn.execute(update(products).where(products.c.id == product.id).values(**values))
        else:
            await conn.execute(insert(products).values(id=product.id, **values))
        kept.add(product.id)
    gone = existing - kept
    if gone:
        await conn.execute(
            update(products).where(products.c.id.in_(gone)).values(archived=True, updated_at=now)
        )
    await conn.execute(
        insert(catalog_versions).values(
            version=version,
            created_at=now,
            actor=actor.name,
            actor_id=actor.staff_id,
            actor_role=actor.role.value,
            door=door.value,
            summary=summary,
            document=catalog_to_yaml(catalog),
        )
    )
    # A new catalogue changes what any product may be shown, and the catalogue itself, which
    # the web shop keeps until everything changes (`AnswerCache.until_everything_changes`).
    await availability_changes_repo.record(conn, [EVERYTHING], now)
    return version


_VERSION_COLUMNS = (
    catalog_versions.c.version,
    catalog_versions.c.created_at,
    catalog_versions.c.actor,
    catalog_versions.c.actor_role,
    catalog_versions.c.door,
    catalog_versions.c.summary,
)


def _bounded(version: int) -> int:
    return max(0, min(version, LAST_VERSION))


async def list_versions(conn: DbConnection, *, limit: int, before: int | None = None) -> list[CatalogVersion]:
    """The newest versions first (those older than `before`, when given)."""
    query = select(*_VERSION_COLUMNS).order_by(catalog_versions.c.version.desc()).limit(limit)
    if before is not None:
        query = query.where(catalog_versions.c.version < _bounded(before))
    return [_version(row) for row in await conn.execute(query)]


async def find_version(conn: DbConnection, version: int) -> tuple[CatalogVersion, str] | None:
    """A version and its document (YAML)."""
    if not 0 < version <= LAST_VERSION:
        return None
    row = (
        await conn.execute(
            select(*_VERSION_COLUMNS, catalog_versions.c.document).where(
                catalog_versions.c.version == version
            )
        )
    ).first()
    return None if row is None else (_version(row), str(row.document))


async def previous_document(conn: DbConnection, version: int) -> tuple[int, str] | None:
    """The version before `version` that the history holds, and its document."""
    row = (
        await conn.execute(
            select(catalog_versions.c.version, catalog_versions.c.document)
            .where(catalog_versions.c.version < _bounded(version))
            .order_by(catalog_versions.c.version.desc())
            .limit(1)
        )
    ).first()
    return None if row is None else (int(row.version), str(row.document))


def _version(row: Any) -> CatalogVersion:
    return CatalogVersion(
        version=int(row.version),
        created_at=row.created_at,
        actor=row.actor,
        actor_role=row.actor_role,
        door=Door(row.door),
        summary=row.summary,
    )
