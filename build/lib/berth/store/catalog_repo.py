"""Reading and writing the catalogue documents."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update

from berth.domain.catalog import Catalog, Product, Supplier
from berth.store.database import DbConnection
from berth.store.tables import catalog_meta, products


async def catalog_version(conn: DbConnection) -> int:
    """0 when no catalogue was ever saved."""
    version = await conn.scalar(select(catalog_meta.c.version).where(catalog_meta.c.id == 1))
    return int(version or 0)


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


async def save_catalog(conn: DbConnection, catalog: Catalog, now: datetime) -> int:
    """Replace the catalogue; products no longer in it are archived. Returns the new version."""
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
    return version
