"""Bookings keep what booking extensions add to them (octo/pickups, octo/questions,
octo/extras), one JSON document per capability id; the extras each booking has on its
departure are indexed for counting their stock (octo/extras).

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument

revision = "0016"
down_revision = "0015"


# Plain ALTER TABLE on both databases (SQLite adds and drops a column in place since 3.35): a
# batch would copy `bookings`, which the tables referencing it forbid on a downgrade.


def upgrade() -> None:
    op.add_column("bookings", sa.Column("extensions", JSONDocument, nullable=True))
    op.create_table(
        "booking_extras",
        sa.Column("booking_id", sa.String(36), sa.ForeignKey("bookings.id"), primary_key=True),
        sa.Column("extra_id", sa.String(100), primary_key=True),
        sa.Column("product_id", sa.String(100), nullable=False),
        sa.Column("option_id", sa.String(100), nullable=False),
        sa.Column("availability_id", sa.String(40), nullable=False),
        sa.Column("quantity", sa.Integer, nullable=False),
    )
    op.create_index(
        "ix_booking_extras_slot", "booking_extras", ["product_id", "option_id", "availability_id", "extra_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_booking_extras_slot", table_name="booking_extras")
    op.drop_table("booking_extras")
    op.drop_column("bookings", "extensions")
