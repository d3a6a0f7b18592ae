"""Issue 48 §3: the payments ledger (`payments`, `payment_refunds`) and the provider events
already processed (`payment_events`).

Revision ID: 0035
Revises: 0034
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import UTCDateTime

revision = "0035"
down_revision = "0034"


def upgrade() -> None:
    op.create_table(
        "payments",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("booking_id", sa.String(36), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(16), nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("provider_id", sa.String(255), nullable=True),
        sa.Column("provider_customer", sa.String(255), nullable=True),
        sa.Column("provider_setup", sa.String(255), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=True),
        sa.Column("failure_reason", sa.String(500), nullable=True),
        sa.Column("reference", sa.String(200), nullable=True),
        sa.Column("actor", sa.String(254), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("captured_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["booking_id"], ["bookings.id"], name="fk_payments_booking_id_bookings"),
        sa.PrimaryKeyConstraint("id", name="pk_payments"),
        sa.UniqueConstraint("provider_id", name="uq_payments_provider_id"),
    )
    op.create_index("ix_payments_booking_id", "payments", ["booking_id", "attempt"])
    op.create_index("ix_payments_status", "payments", ["status", "updated_at"])
    op.create_index("ix_payments_created_at", "payments", ["created_at"])
    op.create_table(
        "payment_refunds",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("payment_id", sa.String(36), nullable=False),
        sa.Column("provider_id", sa.String(255), nullable=True),
        sa.Column("idempotency_key", sa.String(255), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(500), nullable=False),
        sa.Column("actor", sa.String(254), nullable=False),
        sa.Column("failure_reason", sa.String(500), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["payment_id"], ["payments.id"], name="fk_payment_refunds_payment_id_payments"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_payment_refunds"),
        sa.UniqueConstraint("provider_id", name="uq_payment_refunds_provider_id"),
        sa.UniqueConstraint("idempotency_key", name="uq_payment_refunds_idempotency_key"),
    )
    op.create_index("ix_payment_refunds_payment_id", "payment_refunds", ["payment_id"])
    op.create_index("ix_payment_refunds_status", "payment_refunds", ["status"])
    op.create_table(
        "payment_events",
        sa.Column("provider", sa.String(16), nullable=False),
        sa.Column("event_id", sa.String(255), nullable=False),
        sa.Column("type", sa.String(100), nullable=False),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("provider", "event_id", name="pk_payment_events"),
    )


def downgrade() -> None:
    op.drop_table("payment_events")
    op.drop_index("ix_payment_refunds_status", table_name="payment_refunds")
    op.drop_index("ix_payment_refunds_payment_id", table_name="payment_refunds")
    op.drop_table("payment_refunds")
    op.drop_index("ix_payments_created_at", table_name="payments")
    op.drop_index("ix_payments_status", table_name="payments")
    op.drop_index("ix_payments_booking_id", table_name="payments")
    op.drop_table("payments")
