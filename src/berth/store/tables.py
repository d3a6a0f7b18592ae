"""Table definitions. Migrations in `migrations/versions` must produce exactly this schema
(a test compares them)."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

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

# Bookings. Availability is derived from these rows: a slot's held places are the sum of
# `pax` over its live bookings (ON_HOLD until `expires_at`, CONFIRMED, PENDING, REDEEMED).
bookings = Table(
    "bookings",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("connection_id", String(36), ForeignKey("connections.id"), nullable=False),
    Column("uuid", String(64), nullable=False),
    Column("test_mode", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("product_id", String(100), nullable=False),
    Column("option_id", String(100), nullable=False),
    Column("availability_id", String(40), nullable=True),
    Column("slot_start", UTCDateTime, nullable=True),
    Column("local_date", String(10), nullable=True),
    Column("pax", Integer, nullable=False),
    Column("reseller_reference", String(255), nullable=True),
    Column("supplier_reference", String(16), nullable=False, unique=True),
    Column("notes", Text, nullable=True),
    Column("contact", JSONDocument, nullable=False),
    Column("unit_items", JSONDocument, nullable=False),
    Column("currency", String(3), nullable=True),
    Column("freesale", Boolean, nullable=False),
    Column("request_fingerprint", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=True),
    Column("expires_at", UTCDateTime, nullable=True),
    Column("confirmed_at", UTCDateTime, nullable=True),
    Column("redeemed_at", UTCDateTime, nullable=True),
    Column("cancellation", JSONDocument, nullable=True),
    Column("rejection", JSONDocument, nullable=True),
    UniqueConstraint("connection_id", "uuid", name="uq_bookings_connection_uuid"),
    Index("ix_bookings_slot", "product_id", "option_id", "slot_start"),
    Index("ix_bookings_connection_date", "connection_id", "local_date"),
    Index("ix_bookings_connection_reseller_reference", "connection_id", "reseller_reference"),
    Index("ix_bookings_status_expires", "status", "expires_at"),
)

# One row per slot that was ever written to; writers lock it (SELECT … FOR UPDATE on
# PostgreSQL) before re-checking capacity, so two writers to one slot take turns.
slot_locks = Table(
    "slot_locks",
    metadata,
    Column("product_id", String(100), primary_key=True),
    Column("option_id", String(100), primary_key=True),
    Column("availability_id", String(40), primary_key=True),
)

# What happened to each booking, in order: the back office shows it as the booking's history.
booking_events = Table(
    "booking_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("booking_id", String(36), ForeignKey("bookings.id"), nullable=False, index=True),
    Column("at", UTCDateTime, nullable=False),
    Column("kind", String(32), nullable=False),
    Column("actor", String(64), nullable=False),
    Column("detail", JSONDocument, nullable=False),
)
