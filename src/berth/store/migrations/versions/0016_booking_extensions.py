"""Bookings keep what booking extensions add to them (octo/pickups, octo/questions,
octo/extras), one JSON document per capability id.

Revision ID: 0016
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument

revision = "0016"
down_revision = "0013"


# Plain ALTER TABLE on both databases (SQLite adds and drops a column in place since 3.35): a
# batch would copy `bookings`, which the tables referencing it forbid on a downgrade.


def upgrade() -> None:
    op.add_column("bookings", sa.Column("extensions", JSONDocument, nullable=True))


def downgrade() -> None:
    op.drop_column("bookings", "extensions")
