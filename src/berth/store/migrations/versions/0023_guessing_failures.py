"""Failed sign-ins and wrong admin tokens per client address and per account, shared by every
process on the database: the growing delays and lockouts of guessing.

Revision ID: 0023
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0021"


def upgrade() -> None:
    op.create_table(
        "guessing_failures",
        sa.Column("key", sa.String(300), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_at", sa.Float, nullable=False),
        sa.Column("blocked_until", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("guessing_failures")
