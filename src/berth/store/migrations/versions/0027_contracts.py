"""Contracts per connection (issue 37): `connections.contract` and `contract_version`, and every
saved contract in `contract_versions`. Existing connections keep a NULL contract: every product
at the catalogue's own net, as before.

Revision ID: 0027
Revises: 0026
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0027"
down_revision = "0026"


def upgrade() -> None:
    # Plain ALTERs, also on the way down (no batch copy): on SQLite a copy of `connections`
    # would break the foreign keys that point at it.
    op.add_column("connections", sa.Column("contract", JSONDocument, nullable=True))
    op.add_column(
        "connections",
        sa.Column("contract_version", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.create_table(
        "contract_versions",
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(254), nullable=False),
        sa.Column("actor_id", sa.String(36), nullable=True),
        sa.Column("actor_role", sa.String(16), nullable=False),
        sa.Column("summary", sa.String(300), nullable=False),
        sa.Column("document", JSONDocument, nullable=False),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_contract_versions_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("connection_id", "version", name="pk_contract_versions"),
    )


def downgrade() -> None:
    op.drop_table("contract_versions")
    for column in ("contract_version", "contract"):
        op.execute(f"ALTER TABLE connections DROP COLUMN {column}")
