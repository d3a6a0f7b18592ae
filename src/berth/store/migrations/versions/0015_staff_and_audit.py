"""Staff accounts with roles, and the audit trail of what staff do (issue 21).

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.create_table(
        "staff",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("must_change_password", sa.Boolean(), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=True),
        sa.Column("token_hint", sa.String(12), nullable=True),
        sa.Column("session_generation", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("disabled_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_staff"),
        sa.UniqueConstraint("email", name="uq_staff_email"),
        sa.UniqueConstraint("token_hash", name="uq_staff_token_hash"),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(254), nullable=False),
        sa.Column("actor_id", sa.String(36), nullable=True),
        sa.Column("actor_role", sa.String(16), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("target_kind", sa.String(32), nullable=False),
        sa.Column("target_id", sa.String(300), nullable=False),
        sa.Column("target_label", sa.String(300), nullable=True),
        sa.Column("details", JSONDocument, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    op.create_index("ix_audit_log_actor", "audit_log", ["actor", "at"])
    op.create_index("ix_audit_log_target", "audit_log", ["target_id", "at"])


def downgrade() -> None:
    op.drop_table("audit_log")
    op.drop_table("staff")
