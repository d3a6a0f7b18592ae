"""Issue 51: gift vouchers (octo/gifts): the gifts, the ledger of each one's balance, and the
gift a guest's email is about.

Revision ID: 0038
Revises: 0037
"""

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument, UTCDateTime

revision = "0038"
down_revision = "0037"


def upgrade() -> None:
    op.create_table(
        "gifts",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("connection_id", sa.String(36), sa.ForeignKey("connections.id"), nullable=False),
        sa.Column("uuid", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("supplier_reference", sa.String(16), nullable=False, unique=True),
        sa.Column("reseller_reference", sa.String(1000), nullable=True),
        sa.Column("alias", sa.String(1000), nullable=True),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("currency_precision", sa.Integer, nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("net", sa.BigInteger, nullable=False),
        sa.Column("contact", JSONDocument, nullable=False),
        sa.Column("recipient", JSONDocument, nullable=True),
        sa.Column("message", sa.Text, nullable=True),
        sa.Column("notes", sa.Text, nullable=True),
        sa.Column("test_mode", sa.Boolean, nullable=False),
        sa.Column("email_receipt", sa.Boolean, nullable=False),
        sa.Column("settlement_method", sa.String(16), nullable=False),
        sa.Column("request_fingerprint", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("confirmed_at", UTCDateTime(), nullable=True),
        sa.Column("cancelled_at", UTCDateTime(), nullable=True),
        sa.Column("cancellation_reason", sa.Text, nullable=True),
        sa.Column("code_digest", sa.String(64), nullable=True, unique=True),
        sa.Column("code_sealed", sa.String(200), nullable=True),
        sa.Column("code_hint", sa.String(4), nullable=True),
        sa.UniqueConstraint("connection_id", "uuid", name="uq_gifts_connection_uuid"),
    )
    op.create_index("ix_gifts_status_expires", "gifts", ["status", "expires_at"])
    op.create_index("ix_gifts_connection_created", "gifts", ["connection_id", "created_at"])
    op.create_table(
        "gift_movements",
        sa.Column("sequence", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("gift_id", sa.String(36), sa.ForeignKey("gifts.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("booking_id", sa.String(36), sa.ForeignKey("bookings.id"), nullable=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(254), nullable=False),
    )
    op.create_index("ix_gift_movements_gift_id", "gift_movements", ["gift_id", "sequence"])
    op.create_index("ix_gift_movements_booking_id", "gift_movements", ["booking_id"])
    op.add_column("mail_messages", sa.Column("gift_id", sa.String(36), nullable=True))
    op.create_index("ix_mail_messages_gift_id", "mail_messages", ["gift_id"])


def downgrade() -> None:
    op.drop_index("ix_mail_messages_gift_id", "mail_messages")
    with op.batch_alter_table("mail_messages") as batch:
        batch.drop_column("gift_id")
    op.drop_table("gift_movements")
    op.drop_table("gifts")
