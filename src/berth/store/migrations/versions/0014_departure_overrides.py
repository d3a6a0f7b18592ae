"""Departure operations (issue 21): staff's changes to one departure, closed, capacity, note.

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    op.create_table(
        "departure_overrides",
        sa.Column("product_id", sa.String(100), primary_key=True),
        sa.Column("option_id", sa.String(100), primary_key=True),
        sa.Column("availability_id", sa.String(40), primary_key=True),
        sa.Column("slot_start", UTCDateTime, nullable=False),
        sa.Column("closed", sa.Boolean, nullable=False),
        sa.Column("capacity", sa.Integer, nullable=True),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_index(
        "ix_departure_overrides_start", "departure_overrides", ["product_id", "option_id", "slot_start"]
    )


def downgrade() -> None:
    op.drop_index("ix_departure_overrides_start", table_name="departure_overrides")
    op.drop_table("departure_overrides")
