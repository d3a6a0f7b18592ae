"""Allotments (issue 40): `allotment_releases`, a block's release on one departure, recorded
once (staff's early release, or the sweep at the release time). The blocks are in contracts.

Revision ID: 0031
Revises: 0030
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0031"
down_revision = "0030"


def upgrade() -> None:
    op.create_table(
        "allotment_releases",
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("product_id", sa.String(100), nullable=False),
        sa.Column("option_id", sa.String(100), nullable=False),
        sa.Column("availability_id", sa.String(40), nullable=False),
        sa.Column("slot_start", UTCDateTime(), nullable=False),
        sa.Column("released_at", UTCDateTime(), nullable=False),
        sa.Column("early", sa.Boolean(), nullable=False),
        sa.Column("actor", sa.String(254), nullable=True),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_allotment_releases_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint(
            "connection_id", "product_id", "option_id", "availability_id", name="pk_allotment_releases"
        ),
    )
    op.create_index(
        "ix_allotment_releases_slot", "allotment_releases", ["product_id", "option_id", "slot_start"]
    )


def downgrade() -> None:
    op.drop_index("ix_allotment_releases_slot", table_name="allotment_releases")
    op.drop_table("allotment_releases")
