"""Bookings, slot locks and booking history.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "bookings",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("uuid", sa.String(64), nullable=False),
        sa.Column("test_mode", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("product_id", sa.String(100), nullable=False),
        sa.Column("option_id", sa.String(100), nullable=False),
        sa.Column("availability_id", sa.String(40), nullable=True),
        sa.Column("slot_start", UTCDateTime(), nullable=True),
        sa.Column("local_date", sa.String(10), nullable=True),
        sa.Column("pax", sa.Integer(), nullable=False),
        sa.Column("reseller_reference", sa.String(255), nullable=True),
        sa.Column("supplier_reference", sa.String(16), nullable=False),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("contact", JSONDocument, nullable=False),
        sa.Column("unit_items", JSONDocument, nullable=False),
        sa.Column("currency", sa.String(3), nullable=True),
        sa.Column("freesale", sa.Boolean(), nullable=False),
        sa.Column("request_fingerprint", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=True),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("confirmed_at", UTCDateTime(), nullable=True),
        sa.Column("redeemed_at", UTCDateTime(), nullable=True),
        sa.Column("cancellation", JSONDocument, nullable=True),
        sa.Column("rejection", JSONDocument, nullable=True),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_bookings_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_bookings"),
        sa.UniqueConstraint("connection_id", "uuid", name="uq_bookings_connection_uuid"),
        sa.UniqueConstraint("supplier_reference", name="uq_bookings_supplier_reference"),
    )
    op.create_index("ix_bookings_slot", "bookings", ["product_id", "option_id", "slot_start"])
    op.create_index("ix_bookings_connection_date", "bookings", ["connection_id", "local_date"])
    op.create_index(
        "ix_bookings_connection_reseller_reference", "bookings", ["connection_id", "reseller_reference"]
    )
    op.create_index("ix_bookings_status_expires", "bookings", ["status", "expires_at"])
    op.create_table(
        "slot_locks",
        sa.Column("product_id", sa.String(100), nullable=False),
        sa.Column("option_id", sa.String(100), nullable=False),
        sa.Column("availability_id", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("product_id", "option_id", "availability_id", name="pk_slot_locks"),
    )
    op.create_table(
        "booking_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("detail", JSONDocument, nullable=False),
        sa.ForeignKeyConstraint(
            ["booking_id"], ["bookings.id"], name="fk_booking_events_booking_id_bookings"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_booking_events"),
    )
    op.create_index("ix_booking_events_booking_id", "booking_events", ["booking_id"])


def downgrade() -> None:
    op.drop_table("booking_events")
    op.drop_table("slot_locks")
    op.drop_table("bookings")
