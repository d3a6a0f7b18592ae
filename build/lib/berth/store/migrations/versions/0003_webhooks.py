"""Webhooks, signing secrets, the outbox, deliveries and their attempts.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "signing_secrets",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("secret", sa.String(100), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_signing_secrets_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_signing_secrets"),
    )
    op.create_index("ix_signing_secrets_connection_id", "signing_secrets", ["connection_id"])
    op.create_table(
        "webhooks",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("capabilities", JSONDocument, nullable=False),
        sa.Column("use_contact_language", sa.Boolean(), nullable=False),
        sa.Column("headers", JSONDocument, nullable=False),
        sa.Column("retry_on_error", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("disabled_at", UTCDateTime(), nullable=True),
        sa.Column("disabled_reason", sa.String(200), nullable=True),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_webhooks_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhooks"),
    )
    op.create_index("ix_webhooks_connection_id", "webhooks", ["connection_id"])
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("subject", JSONDocument, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("claimed_until", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
    )
    op.create_table(
        "deliveries",
        sa.Column("sequence", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("webhook_id", sa.String(36), nullable=True),
        sa.Column("connection_id", sa.String(36), nullable=False),
        sa.Column("target_key", sa.String(80), nullable=False),
        sa.Column("subject_key", sa.String(200), nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("headers", JSONDocument, nullable=False),
        sa.Column("payload", JSONDocument, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("retry_on_error", sa.Boolean(), nullable=False),
        sa.Column("retry_forever", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("lease_until", UTCDateTime(), nullable=True),
        sa.Column("delivered_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["webhook_id"], ["webhooks.id"], name="fk_deliveries_webhook_id_webhooks", ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["connection_id"], ["connections.id"], name="fk_deliveries_connection_id_connections"
        ),
        sa.PrimaryKeyConstraint("sequence", name="pk_deliveries"),
        sa.UniqueConstraint("id", name="uq_deliveries_id"),
    )
    op.create_index("ix_deliveries_due", "deliveries", ["status", "next_attempt_at"])
    op.create_index("ix_deliveries_order", "deliveries", ["target_key", "subject_key", "sequence"])
    op.create_index("ix_deliveries_webhook", "deliveries", ["webhook_id", "created_at"])
    op.create_table(
        "delivery_attempts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("delivery_id", sa.String(40), nullable=False),
        sa.Column("attempted_at", UTCDateTime(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(500), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("response_excerpt", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["delivery_id"], ["deliveries.id"], name="fk_delivery_attempts_delivery_id_deliveries"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_delivery_attempts"),
    )
    op.create_index("ix_delivery_attempts_delivery_id", "delivery_attempts", ["delivery_id"])


def downgrade() -> None:
    op.drop_table("delivery_attempts")
    op.drop_table("deliveries")
    op.drop_table("outbox")
    op.drop_table("webhooks")
    op.drop_table("signing_secrets")
