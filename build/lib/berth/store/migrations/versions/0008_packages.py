"""Package bookings (octo/packages): an included booking's link to its package booking.

Revision ID: 0008
Revises: 0007 (re-chained after the other branches' revisions when they merge)
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("package_booking_id", sa.String(36), nullable=True))
        batch.add_column(sa.Column("package_include_id", sa.String(100), nullable=True))
        batch.create_foreign_key(
            "fk_bookings_package_booking_id_bookings", "bookings", ["package_booking_id"], ["id"]
        )
        batch.create_index("ix_bookings_package_booking_id", ["package_booking_id"])


def downgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.drop_index("ix_bookings_package_booking_id")
        batch.drop_constraint("fk_bookings_package_booking_id_bookings", type_="foreignkey")
        batch.drop_column("package_include_id")
        batch.drop_column("package_booking_id")
