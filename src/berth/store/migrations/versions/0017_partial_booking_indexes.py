"""The bookings' indexes of a rental's end, its order and its package booking hold only the
bookings that have one: lookups never ask for NULL, and each reservation no longer adds its
NULL to three B-trees that grow with every booking.

Revision ID: 0017
Revises: 0016
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"

# name, the column that must be set, the indexed columns
INDEXES: Sequence[tuple[str, str, list[str]]] = (
    ("ix_bookings_rental_end", "slot_end", ["product_id", "option_id", "slot_end"]),
    ("ix_bookings_order_id", "order_id", ["order_id"]),
    ("ix_bookings_package_booking_id", "package_booking_id", ["package_booking_id"]),
)


def upgrade() -> None:
    for name, set_column, columns in INDEXES:
        where = sa.text(f"{set_column} IS NOT NULL")
        op.drop_index(name, table_name="bookings")
        op.create_index(name, "bookings", columns, sqlite_where=where, postgresql_where=where)


def downgrade() -> None:
    for name, _, columns in INDEXES:
        op.drop_index(name, table_name="bookings")
        op.create_index(name, "bookings", columns)
