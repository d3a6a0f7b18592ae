"""PostgreSQL: `berth_hold_or_refuse`, `berth_lock_and_hold` that refuses by raising (issue 31).

A reservation's check-and-hold can then be sent in the same message as its transaction's
COMMIT (`berth.store.database.close_with`): when the departure has no room, the error aborts
the transaction and PostgreSQL skips the COMMIT, so nothing of it is written. The departure's
lock is held for the server's own time, not for a reply's trip to the client and back.

Revision ID: 0025
Revises: 0024
"""

from alembic import op

revision = "0025"
down_revision = "0024"

# The arguments of `berth_lock_and_hold` (migration 0024). SQLSTATE BR001 is
# `berth.store.one_call.REFUSED`: what a closing statement raises when it refuses.
FUNCTION = """
CREATE FUNCTION berth_hold_or_refuse(
    p_product varchar, p_option varchar, p_availability varchar, p_until timestamp,
    p_slot_start timestamp, p_pax integer, p_capacity integer, p_need integer, p_now timestamp
) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    held integer := berth_lock_and_hold(
        p_product, p_option, p_availability, p_until, p_slot_start, p_pax, p_capacity, p_need, p_now
    );
BEGIN
    IF held IS NULL THEN
        RAISE EXCEPTION 'availability % of % / % has no room for % places', p_availability, p_product,
            p_option, p_need USING ERRCODE = 'BR001';
    END IF;
    RETURN held;
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION berth_hold_or_refuse(varchar, varchar, varchar, timestamp, timestamp, "
            "integer, integer, integer, timestamp)"
        )
