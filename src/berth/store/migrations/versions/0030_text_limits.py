"""Columns that fit the limits of the request models on PostgreSQL too (issue 39): a booking's
reseller reference takes 1,000 characters, as the OpenAPI description allows (it was 255, and
PostgreSQL refused longer ones with a 500 where SQLite stored them), and an audit entry's label
takes a webhook's whole URL. The reference's index becomes a hash index on PostgreSQL: a B-tree
entry holds at most 2,704 bytes, less than 1,000 characters of most scripts.

Revision ID: 0030
Revises: 0027
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0027"


def upgrade() -> None:
    op.drop_index("ix_bookings_reseller_reference", table_name="bookings")
    with op.batch_alter_table("bookings") as batch:
        batch.alter_column(
            "reseller_reference", existing_type=sa.String(255), type_=sa.String(1000), existing_nullable=True
        )
    with op.batch_alter_table("audit_log") as batch:
        batch.alter_column(
            "target_label", existing_type=sa.String(300), type_=sa.Text(), existing_nullable=True
        )
    op.create_index(
        "ix_bookings_reseller_reference", "bookings", ["reseller_reference"], postgresql_using="hash"
    )


def downgrade() -> None:
    op.drop_index("ix_bookings_reseller_reference", table_name="bookings")
    with op.batch_alter_table("audit_log") as batch:
        batch.alter_column(
            "target_label", existing_type=sa.Text(), type_=sa.String(300), existing_nullable=True
        )
    with op.batch_alter_table("bookings") as batch:
        batch.alter_column(
            "reseller_reference", existing_type=sa.String(1000), type_=sa.String(255), existing_nullable=True
        )
    op.create_index("ix_bookings_reseller_reference", "bookings", ["reseller_reference", "connection_id"])
