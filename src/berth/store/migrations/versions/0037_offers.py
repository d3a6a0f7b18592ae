"""Issue 51: offers (octo/offers): the versions of the offers document, and the bookings'
uses of offers that count against their limits.

Revision ID: 0037
Revises: 0036
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0037"
down_revision = "0036"


def upgrade() -> None:
    op.create_table(
        "offer_versions",
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(254), nullable=False),
        sa.Column("actor_id", sa.String(36), nullable=True),
        sa.Column("actor_role", sa.String(16), nullable=False),
        sa.Column("summary", sa.String(300), nullable=False),
        sa.Column("document", JSONDocument, nullable=False),
    )
    op.create_table(
        "offer_uses",
        sa.Column("booking_id", sa.String(36), sa.ForeignKey("bookings.id"), primary_key=True),
        sa.Column("offer_id", sa.String(100), nullable=False),
        sa.Column("email", sa.String(254), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_offer_uses_offer_email", "offer_uses", ["offer_id", "email"])


def downgrade() -> None:
    op.drop_table("offer_uses")
    op.drop_table("offer_versions")
