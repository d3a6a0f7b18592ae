"""PostgreSQL: `berth_lock_and_hold`, a reservation's slot lock and its check-and-hold in one
round trip (issue 31). SQLite needs no lock of its own (its write transaction is the lock).

The function runs two statements. The first takes the departure's `slot_locks` row lock (as
`bookings_repo.lock_slots`); the second is `bookings_repo.hold_if_room`'s statement. A VOLATILE
function takes a new snapshot for each statement it runs, so the second sees every hold
committed before the lock was granted, exactly as when the client sends the two one after the
other. The lock is then held for this one round trip and the COMMIT, not two and the COMMIT.

Revision ID: 0024
Revises: 0023
"""

from alembic import op

revision = "0024"
down_revision = "0023"

# Arguments: product, option, availability, the hold's end, the departure's start, its places,
# the catalogue's capacity (NULL: no limit; staff's capacity wins), what must be left (the
# places, at least one), now. Returns the slot's count for that end after the hold, or NULL
# when the departure is closed or has no room (nothing written).
FUNCTION = """
CREATE FUNCTION berth_lock_and_hold(
    p_product varchar, p_option varchar, p_availability varchar, p_until timestamp,
    p_slot_start timestamp, p_pax integer, p_capacity integer, p_need integer, p_now timestamp
) RETURNS integer LANGUAGE sql VOLATILE AS $$
INSERT INTO slot_locks (product_id, option_id, availability_id)
VALUES (p_product, p_option, p_availability)
ON CONFLICT (product_id, option_id, availability_id) DO UPDATE SET product_id = excluded.product_id;
INSERT INTO slot_holds (product_id, option_id, availability_id, until, slot_start, pax)
SELECT p_product, p_option, p_availability, p_until, p_slot_start, p_pax
WHERE NOT EXISTS (
    SELECT 1 FROM departure_overrides o
    WHERE o.product_id = p_product AND o.option_id = p_option AND o.availability_id = p_availability
      AND o.closed IS true
) AND (
    coalesce((
        SELECT o.capacity FROM departure_overrides o
        WHERE o.product_id = p_product AND o.option_id = p_option AND o.availability_id = p_availability
    ), p_capacity) IS NULL
    OR (
        SELECT coalesce(sum(h.pax), 0) FROM slot_holds h
        WHERE h.product_id = p_product AND h.option_id = p_option AND h.availability_id = p_availability
          AND h.until > p_now
    ) + p_need <= coalesce((
        SELECT o.capacity FROM departure_overrides o
        WHERE o.product_id = p_product AND o.option_id = p_option AND o.availability_id = p_availability
    ), p_capacity)
)
ON CONFLICT (product_id, option_id, availability_id, until) DO UPDATE SET pax = slot_holds.pax + excluded.pax
RETURNING slot_holds.pax;
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "DROP FUNCTION berth_lock_and_hold(varchar, varchar, varchar, timestamp, timestamp, "
            "integer, integer, integer, timestamp)"
        )
