"""Guests' emails: the mail outbox, which is also the demo's mailbox.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.create_table(
        "mail_messages",
        sa.Column("sequence", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("booking_id", sa.String(36), nullable=True),
        sa.Column("order_id", sa.String(36), nullable=True),
        sa.Column("subject_key", sa.String(60), nullable=False),
        sa.Column("recipient", sa.String(320), nullable=True),
        sa.Column("recipient_name", sa.String(200), nullable=True),
        sa.Column("language", sa.String(35), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("text_body", sa.Text(), nullable=True),
        sa.Column("html_body", sa.Text(), nullable=True),
        sa.Column("facts", JSONDocument, nullable=False),
        sa.Column("attachments", JSONDocument, nullable=False),
        sa.Column("requested_by", sa.String(254), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.String(500), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("next_attempt_at", UTCDateTime(), nullable=True),
        sa.Column("lease_until", UTCDateTime(), nullable=True),
        sa.Column("sent_at", UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("sequence", name="pk_mail_messages"),
        sa.UniqueConstraint("id", name="uq_mail_messages_id"),
    )
    op.create_index("ix_mail_messages_due", "mail_messages", ["status", "next_attempt_at"])
    op.create_index("ix_mail_messages_booking_id", "mail_messages", ["booking_id"])
    op.create_index("ix_mail_messages_order_id", "mail_messages", ["order_id"])
    op.create_index("ix_mail_messages_subject", "mail_messages", ["subject_key", "sequence"])


def downgrade() -> None:
    op.drop_table("mail_messages")
