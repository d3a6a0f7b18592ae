"""octo/resources: allocations on bookings, and the index of live allocations and seats.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    with op.batch_alter_table("bookings") as batch:
        batch.add_column(sa.Column("resource_allocations", JSONDocument, nullable=True))
    op.create_table(
        "booking_resources",
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.Column("resource_id", sa.String(100), nullable=False),
        sa.Column("resource_group_id", sa.String(100), nullable=False),
        sa.Column("places", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["booking_id"], ["bookings.id"], name="fk_booking_resources_booking_id_bookings"
        ),
        sa.PrimaryKeyConstraint("booking_id", "resource_id", name="pk_booking_resources"),
    )
    op.create_table(
        "booking_seats",
        sa.Column("product_id", sa.String(100), nullable=False),
        sa.Column("option_id", sa.String(100), nullable=False),
        sa.Column("availability_id", sa.String(40), nullable=False),
        sa.Column("resource_id", sa.String(100), nullable=False),
        sa.Column("seat_id", sa.String(40), nullable=False),
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_booking_seats_booking_id_bookings"),
        sa.PrimaryKeyConstraint(
            "product_id", "option_id", "availability_id", "resource_id", "seat_id", name="pk_booking_seats"
        ),
    )
    op.create_index("ix_booking_seats_booking_id", "booking_seats", ["booking_id"])


def downgrade() -> None:
    op.drop_table("booking_seats")
    op.drop_table("booking_resources")
    with op.batch_alter_table("bookings") as batch:
        batch.drop_column("resource_allocations")
