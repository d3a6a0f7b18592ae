"""Check-in at the gate: admitted tickets and the scans that admitted them (issue 29).

Revision ID: 0020
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0020"
down_revision = "0019"


def upgrade() -> None:
    op.create_table(
        "admissions",
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.Column("unit_uuid", sa.String(64), nullable=False),
        sa.Column("admitted_at", UTCDateTime(), nullable=False),
        sa.Column("admitted_by", sa.String(254), nullable=False),
        sa.Column("device", sa.String(100), nullable=True),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_admissions_booking_id_bookings"),
        sa.PrimaryKeyConstraint("booking_id", "unit_uuid", name="pk_admissions"),
    )
    op.create_index("ix_admissions_nonce", "admissions", ["nonce"])
    op.create_table(
        "checkin_scans",
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.Column("outcome", JSONDocument, nullable=False),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_checkin_scans_booking_id_bookings"),
        sa.PrimaryKeyConstraint("nonce", name="pk_checkin_scans"),
    )


def downgrade() -> None:
    op.drop_table("checkin_scans")
    op.drop_index("ix_admissions_nonce", table_name="admissions")
    op.drop_table("admissions")
