"""The tokens of bookings' ticket documents (PDF_URL, PKPASS_URL).

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.create_table(
        "tickets",
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_tickets_booking_id_bookings"),
        sa.PrimaryKeyConstraint("token", name="pk_tickets"),
        sa.UniqueConstraint("booking_id", "item_key", name="uq_tickets_booking_item"),
    )


def downgrade() -> None:
    op.drop_table("tickets")
