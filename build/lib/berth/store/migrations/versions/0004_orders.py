"""Orders (octo/cart) and the bookings' link to them.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "orders",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("supplier_reference", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("test_mode", sa.Boolean(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=True),
        sa.Column("contact", JSONDocument, nullable=False),
        sa.Column("email_receipt", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.Column("confirmed_at", UTCDateTime(), nullable=True),
        sa.Column("cancellation", JSONDocument, nullable=True),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_orders_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_orders"),
        sa.UniqueConstraint("supplier_reference", name="uq_orders_supplier_reference"),
    )
    op.create_index("ix_orders_connection_id", "orders", ["connection_id"])
    op.create_index("ix_orders_status_expires", "orders", ["status", "expires_at"])
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("order_id", sa.String(36), nullable=True))
        batch.add_column(sa.Column("is_primary", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("order_position", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_bookings_order_id_orders", "orders", ["order_id"], ["id"])
        batch.create_index("ix_bookings_order_id", ["order_id"])


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_index("ix_bookings_order_id")
        batch.drop_constraint("fk_bookings_order_id_orders", type_="foreignkey")
        batch.drop_column("order_position")
        batch.drop_column("is_primary")
        batch.drop_column("order_id")
    op.drop_table("orders")
