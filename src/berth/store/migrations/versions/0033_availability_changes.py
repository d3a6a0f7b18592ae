"""Issue 41 §2: `availability_changes`, the products and local dates whose places changed, so
that a process drops only the kept availability answers a commit changed (berth.services.answers).

Revision ID: 0033
Revises: 0032
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0033"
down_revision = "0032"


def upgrade() -> None:
    op.create_table(
        "availability_changes",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("product_id", sa.String(100), nullable=True),
        sa.Column("local_date", sa.String(10), nullable=True),
        sa.Column("xid", sa.BigInteger(), nullable=True),
        sa.Column("changed_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_availability_changes"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_availability_changes_xid",
        "availability_changes",
        ["xid"],
        sqlite_where=sa.text("xid IS NOT NULL"),
        postgresql_where=sa.text("xid IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_availability_changes_xid", table_name="availability_changes")
    op.drop_table("availability_changes")
