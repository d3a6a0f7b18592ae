"""The back office's search by reference stays an index lookup however many bookings there
are: the reseller-reference index is led by the reference (it still serves a connection's own
lookup), and the uuid has an index of its own (the unique one is led by the connection).

Revision ID: 0013
Revises: 0012
"""

from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.drop_index("ix_bookings_connection_reseller_reference", table_name="bookings")
    op.create_index("ix_bookings_reseller_reference", "bookings", ["reseller_reference", "connection_id"])
    op.create_index("ix_bookings_uuid", "bookings", ["uuid"])


def downgrade() -> None:
    op.drop_index("ix_bookings_uuid", table_name="bookings")
    op.drop_index("ix_bookings_reseller_reference", table_name="bookings")
    op.create_index(
        "ix_bookings_connection_reseller_reference", "bookings", ["connection_id", "reseller_reference"]
    )
