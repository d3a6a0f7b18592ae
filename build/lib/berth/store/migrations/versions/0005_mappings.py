"""Self-service mapping rows (vendor/mappings).

Revision ID: 0005
Revises: 0004 (re-chained after 0004 when the branches merge)
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "mappings",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("reseller_reference", sa.String(255), nullable=False),
        sa.Column("reseller_status", sa.String(100), nullable=True),
        sa.Column("reseller_product", sa.String(1000), nullable=True),
        sa.Column("option_required", sa.Boolean(), nullable=False),
        sa.Column("unit_required", sa.Boolean(), nullable=False),
        sa.Column("validity_days", sa.Integer(), nullable=True),
        sa.Column("webhook_url", sa.String(2048), nullable=True),
        sa.Column("product_id", sa.String(100), nullable=True),
        sa.Column("option_id", sa.String(100), nullable=True),
        sa.Column("unit_id", sa.String(100), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("mapped_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_mappings_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_mappings"),
        sa.UniqueConstraint("connection_id", "reseller_reference", name="uq_mappings_connection_reference"),
    )


def downgrade() -> None:
    op.drop_table("mappings")
