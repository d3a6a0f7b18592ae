"""Places held per slot, kept beside the bookings (slot_holds), filled from the live bookings.

Revision ID: 0010
Revises: 0009
"""

from collections import Counter
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0010"
down_revision = "0009"

HELD_FOR_GOOD = datetime(9999, 12, 31, tzinfo=UTC)
_HOLDING = ("CONFIRMED", "PENDING", "REDEEMED")

_bookings = sa.table(
    "bookings",
    sa.column("product_id", sa.String),
    sa.column("option_id", sa.String),
    sa.column("availability_id", sa.String),
    sa.column("slot_start", UTCDateTime),
    sa.column("status", sa.String),
    sa.column("expires_at", UTCDateTime),
    sa.column("test_mode", sa.Boolean),
    sa.column("pax", sa.Integer),
)


def _until(status: str, expires_at: datetime | None) -> datetime | None:
    """As berth.domain.bookings.place_hold, as of this revision."""
    if status in _HOLDING:
        return HELD_FOR_GOOD
    if status != "ON_HOLD" or expires_at is None:
        return None
    return expires_at.replace(microsecond=0) + (
        timedelta(seconds=1) if expires_at.microsecond else timedelta()
    )


def upgrade() -> None:
    holds = op.create_table(
        "slot_holds",
        sa.Column("product_id", sa.String(100), primary_key=True),
        sa.Column("option_id", sa.String(100), primary_key=True),
        sa.Column("availability_id", sa.String(40), primary_key=True),
        sa.Column("until", UTCDateTime, primary_key=True),
        sa.Column("slot_start", UTCDateTime, nullable=False),
        sa.Column("pax", sa.Integer, nullable=False),
    )
    op.create_index("ix_slot_holds_start", "slot_holds", ["product_id", "option_id", "slot_start"])
    rows = op.get_bind().execute(
        sa.select(_bookings).where(
            _bookings.c.test_mode.is_(False),
            _bookings.c.availability_id.is_not(None),
            _bookings.c.slot_start.is_not(None),
            _bookings.c.status.in_(["ON_HOLD", *_HOLDING]),
        )
    )
    counts: Counter[tuple[str, str, str, datetime, datetime]] = Counter()
    for row in rows:
        until = _until(row.status, row.expires_at)
        if until is not None:
            counts[(row.product_id, row.option_id, row.availability_id, until, row.slot_start)] += row.pax
    if counts:
        op.bulk_insert(
            holds,
            [
                {"product_id": p, "option_id": o, "availability_id": a, "until": u, "slot_start": s, "pax": n}
                for (p, o, a, u, s), n in counts.items()
            ],
        )


def downgrade() -> None:
    op.drop_index("ix_slot_holds_start", table_name="slot_holds")
    op.drop_table("slot_holds")
