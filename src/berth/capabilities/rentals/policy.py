"""octo/rentals' capacity policy: a rental holds its items from its start until they are due
back, so rentals starting at different times compete whenever they overlap.

Writers lock one row per rental option (`RENTAL_LOCK`) instead of a slot: every rental write
of the option takes turns, so the peak re-read inside the lock sees every overlapping rental,
whatever its start and length. A slot's places held are the peak of items out at any instant
of the rental it describes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from berth.capabilities.request_fields import RENTAL_DURATION_ID
from berth.domain.bookings import Booking, Placed
from berth.domain.catalog import Catalog, Option, Product, RentalDuration
from berth.domain.rentals import affected_starts, peak_held, rental_duration_for, rental_slot
from berth.domain.slots import Slot
from berth.domain.times import format_local
from berth.services.bookings.capacity import Placement, SlotPolicy, slot_key, slots_as_run
from berth.services.bookings.inputs import Asked
from berth.services.bookings.locks import SlotKey
from berth.store import rentals_repo
from berth.store.connection import DbConnection

# The availability id of the one lock row of a rental option (never a real availability id).
RENTAL_LOCK = "RENTAL"


async def rental_peaks(
    conn: DbConnection,
    product_id: str,
    option_id: str,
    windows: Sequence[tuple[datetime, datetime]],
    now: datetime,
    *,
    excluding: str | None = None,
) -> list[int]:
    """The most items out at any instant of each window [start, end), from one interval query
    over all of them."""
    if not windows:
        return []
    first = min(start for start, _ in windows).astimezone(UTC)
    last = max(end for _, end in windows).astimezone(UTC)
    held = await rentals_repo.held_intervals(
        conn, product_id, option_id, first, last, now, excluding=excluding
    )
    return peak_held(held, windows)


class RentalPolicy(SlotPolicy):
    def applies_to(self, option: Option) -> bool:
        return bool(option.rental_durations)

    def counts_across_days(self, option: Option) -> bool:
        return True  # a rental runs on past its start, over midnight too

    def takes_places_first(self, option: Option) -> bool:
        # A rental's places are counted from the bookings themselves (this one too, once
        # written): the check comes before the row.
        return True

    def check_request(self, catalog: Catalog, product: Product, option: Option, asked: Asked) -> None:
        rental_duration_for(option, asked.get(RENTAL_DURATION_ID))

    def place(
        self, option: Option, slot: Slot | None, asked: Asked, booking: Booking | None, *, moved: bool = False
    ) -> Placement:
        """A rental holds its places from its start until its item is due back: over the
        duration the request names, else (a booking that stays) its own interval, else (a
        booking that moves) its own duration where the option has it, else the default."""
        wanted = asked.get(RENTAL_DURATION_ID)
        if wanted is None and booking is not None and not moved:
            return super().place(option, slot, asked, booking)
        duration = self.duration(option, wanted, booking.rental_duration_id if booking is not None else None)
        if duration is None:
            return Placement(slot)
        if slot is None:
            return Placement(None, Placed(duration.id))
        stretched = rental_slot(slot, duration)
        return Placement(stretched, Placed(duration.id, stretched.end.astimezone(UTC)))

    def duration(self, option: Option, wanted: str | None, kept: str | None) -> RentalDuration | None:
        if wanted is None and kept is not None and option.rental_duration(kept) is not None:
            wanted = kept
        return rental_duration_for(option, wanted)

    def stretch(self, slot: Slot, duration: RentalDuration | None) -> Slot:
        return slot if duration is None else rental_slot(slot, duration)

    def lock_key(self, product: Product, option: Option, slot: Slot) -> SlotKey:
        return (product.id, option.id, RENTAL_LOCK)

    async def held(
        self,
        conn: DbConnection,
        product: Product,
        option: Option,
        slots: Sequence[Slot],
        now: datetime,
        *,
        excluding: str | None = None,
    ) -> list[int]:
        """For each rental slot (ending when the item is due back), the peak of items out at
        any instant of it."""
        windows = [(s.start, s.end) for s in slots]
        return await rental_peaks(conn, product.id, option.id, windows, now, excluding=excluding)

    async def held_as_run(
        self, conn: DbConnection, product: Product, option: Option, slots: Sequence[Slot], now: datetime
    ) -> tuple[list[Slot], list[int]]:
        run = await slots_as_run(conn, product, option, slots)
        return run, await self.held(conn, product, option, run, now)

    def sold_out(self, slot: Slot, left: int, pax: int) -> str:
        return (
            f"Availability {slot.id} is sold out for a rental until {format_local(slot.end)}: "
            f"{left} item(s) free all that time, {pax} requested"
        )

    def counted_in(self, catalog: Catalog, booking: Booking) -> list[SlotKey]:
        """Every start slot whose rentals would overlap the booking's interval."""
        own = slot_key(booking)
        product = catalog.product(booking.product_id)
        option = product.option(booking.option_id) if product else None
        if product is None or option is None or booking.slot_start is None or booking.slot_end is None:
            return [own]
        starts = affected_starts(product, option, booking.slot_start, booking.slot_end)
        return [(product.id, option.id, slot.id) for slot in starts] or [own]
