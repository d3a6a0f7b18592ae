"""Table definitions. Migrations in `migrations/versions` must produce exactly this schema
(a test compares them)."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Integer, MetaData, String, Table

from berth.store.types import JSONDocument, UTCDateTime

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# One row (id = 1): the supplier document and the catalogue version. Every catalogue write
# bumps `version`; API processes compare it with their cached copy to know when to reload.
catalog_meta = Table(
    "catalog_meta",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", Integer, nullable=False),
    Column("supplier", JSONDocument, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# Products as validated documents (see domain.catalog.Product). A product left out of a
# later import is archived, not deleted: bookings keep pointing at it.
products = Table(
    "products",
    metadata,
    Column("id", String(100), primary_key=True),
    Column("position", Integer, nullable=False),
    Column("archived", Boolean, nullable=False, default=False),
    Column("document", JSONDocument, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

connections = Table(
    "connections",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("key_hint", String(12), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
)
