"""Columns that fit the limits of the request models on PostgreSQL too (issue 39): a booking's
reseller reference takes 1,000 characters, as the OpenAPI description allows (it was 255, and
PostgreSQL refused longer ones with a 500 where SQLite stored them), and an audit entry's label
takes a webhook's whole URL. The reference's index becomes a hash index on PostgreSQL: a B-tree
entry holds at most 2,704 bytes, less than 1,000 characters of most scripts.

On SQLite the declared lengths stay as they were: SQLite enforces none (its columns already
take any length), and changing a declared type there means copying the table, which the
foreign keys that point at `bookings` refuse once it has rows (`tables.py` says so with a
variant).

Revision ID: 0030
Revises: 0027
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0027"


def _postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    op.drop_index("ix_bookings_reseller_reference", table_name="bookings")
    if _postgresql():
        op.alter_column(
            "bookings", "reseller_reference", existing_type=sa.String(255), type_=sa.String(1000),
            existing_nullable=True,
        )  # fmt: skip
        op.alter_column(
            "audit_log", "target_label", existing_type=sa.String(300), type_=sa.Text(), existing_nullable=True
        )
    op.create_index(
        "ix_bookings_reseller_reference", "bookings", ["reseller_reference"], postgresql_using="hash"
    )


def downgrade() -> None:
    op.drop_index("ix_bookings_reseller_reference", table_name="bookings")
    if _postgresql():
        op.alter_column(
            "audit_log", "target_label", existing_type=sa.Text(), type_=sa.String(300), existing_nullable=True
        )
        op.alter_column(
            "bookings", "reseller_reference", existing_type=sa.String(1000), type_=sa.String(255),
            existing_nullable=True,
        )  # fmt: skip
    op.create_index("ix_bookings_reseller_reference", "bookings", ["reseller_reference", "connection_id"])
