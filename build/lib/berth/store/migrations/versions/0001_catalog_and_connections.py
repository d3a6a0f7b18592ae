"""Catalogue documents and reseller connections.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "catalog_meta",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("supplier", JSONDocument, nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_catalog_meta"),
    )
    op.create_table(
        "products",
        sa.Column("id", sa.String(100), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("archived", sa.Boolean(), nullable=False),
        sa.Column("document", JSONDocument, nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_products"),
    )
    op.create_table(
        "connections",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("key_hint", sa.String(12), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_connections"),
        sa.UniqueConstraint("key_hash", name="uq_connections_key_hash"),
    )


def downgrade() -> None:
    op.drop_table("connections")
    op.drop_table("products")
    op.drop_table("catalog_meta")
