"""PostgreSQL: `berth_lock_and_hold_reserving`, `berth_lock_and_hold` (migration 0024) for a
departure where other connections hold allotment blocks (issue 40): after the departure's lock,
the hold's check also counts the blocks' unused places as taken, so a reservation beside blocks
is one round trip too. SQLite runs `bookings_one_call.hold_if_room_reserving`'s statement instead.

The blocks come as two arrays (connection ids, places): those not released by the clock. A
block staff released early (`allotment_releases.early`) counts no more; each holder's places
are summed from its own bookings of the departure's day that hold places (the statuses of
`domain.bookings.HOLDING`, and holds not run out), as `allotments_repo._others_unused` does.

Revision ID: 0032
Revises: 0031
"""

from alembic import op

revision = "0032"
down_revision = "0031"

FUNCTION = """
CREATE FUNCTION berth_lock_and_hold_reserving(
    p_product varchar, p_option varchar, p_availability varchar, p_until timestamp,
    p_slot_start timestamp, p_pax integer, p_capacity integer, p_need integer, p_now timestamp,
    p_block_connections varchar[], p_block_places integer[], p_day varchar
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
    ) + p_need + (
        SELECT coalesce(sum(greatest(b.places - coalesce((
            SELECT sum(k.pax) FROM bookings k
            WHERE k.connection_id = b.connection_id AND k.local_date = p_day
              AND k.product_id = p_product AND k.option_id = p_option AND k.availability_id = p_availability
              AND k.test_mode IS false
              AND (k.status IN ('CONFIRMED', 'PENDING', 'REDEEMED') OR (k.status = 'ON_HOLD' AND k.expires_at > p_now))
        ), 0), 0)), 0)
        FROM unnest(p_block_connections, p_block_places) AS b(connection_id, places)
        WHERE NOT EXISTS (
            SELECT 1 FROM allotment_releases r
            WHERE r.connection_id = b.connection_id AND r.product_id = p_product AND r.option_id = p_option
              AND r.availability_id = p_availability AND r.early IS true
        )
    ) <= coalesce((
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
            "DROP FUNCTION berth_lock_and_hold_reserving(varchar, varchar, varchar, timestamp, timestamp, "
            "integer, integer, integer, timestamp, varchar[], integer[], varchar)"
        )
