"""Issue 48: the supplier's web shop, a sales channel: the connection it sells as, and its
bookings' browser sessions, addresses (the limits on holds) and "manage my booking" links.

Revision ID: 0036
Revises: 0035
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0036"
down_revision = "0035"


def upgrade() -> None:
    op.create_table(
        "shop_channel",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("connection_id", sa.String(36), sa.ForeignKey("connections.id"), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_table(
        "shop_bookings",
        sa.Column("booking_id", sa.String(36), sa.ForeignKey("bookings.id"), primary_key=True),
        sa.Column("session_hash", sa.String(64), nullable=False),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("places", sa.Integer, nullable=False),
        sa.Column("link_salt", sa.String(32), nullable=False),
        sa.Column("link_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("language", sa.String(35), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_shop_bookings_session_hash", "shop_bookings", ["session_hash"])
    op.create_index("ix_shop_bookings_address", "shop_bookings", ["address"])


def downgrade() -> None:
    op.drop_table("shop_bookings")
    op.drop_table("shop_channel")
