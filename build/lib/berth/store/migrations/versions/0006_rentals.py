"""octo/rentals: the rental duration of a booking and when its item is due back.

Revision ID: 0006
Revises: 0005 (re-chained onto the branch's head when merged)
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("rental_duration_id", sa.String(100), nullable=True))
        batch.add_column(sa.Column("slot_end", UTCDateTime(), nullable=True))
        batch.create_index("ix_bookings_rental_end", ["product_id", "option_id", "slot_end"])


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_index("ix_bookings_rental_end")
        batch.drop_column("slot_end")
        batch.drop_column("rental_duration_id")
