"""What services announce when they change something resellers may subscribe to, or must be
told of. The webhook fan-out implements it; services only call it, inside their own transaction."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from berth.domain.bookings import Booking
from berth.domain.catalog import Catalog
from berth.domain.mappings import MappingRow
from berth.domain.orders import Order
from berth.store.connection import DbConnection

if TYPE_CHECKING:
    from berth.read_models.bookings import BookingDetails
    from berth.read_models.orders import OrderDetails

Describe = Callable[[Booking], Awaitable["BookingDetails"]]
DescribeOrder = Callable[[Order], Awaitable["OrderDetails"]]


class ChangeObserver(Protocol):
    async def booking_changed(
        self, conn: DbConnection, describe: Describe, before: Booking, after: Booking
    ) -> None: ...

    async def order_changed(
        self, conn: DbConnection, describe: DescribeOrder, before: Order, after: Order
    ) -> None: ...

    async def slots_changed(self, conn: DbConnection, slots: Sequence[tuple[str, str, str]]) -> None: ...

    async def catalog_changed(self, conn: DbConnection, before: Catalog, after: Catalog) -> None: ...


class GuestNotices(Protocol):
    """Told of each step of a booking (and of an order's own steps) inside its transaction;
    queues the guest's emails (receipts, cancellations, moves) for the mail worker."""

    async def booking_step(
        self, conn: DbConnection, describe: Describe, before: Booking | None, after: Booking,
        kind: str, actor: str, detail: dict[str, Any],
    ) -> None: ...  # fmt: skip

    async def order_step(
        self, conn: DbConnection, describe: DescribeOrder, before: Order, after: Order
    ) -> None: ...


class MappingObserver(Protocol):
    """Told of mapping changes inside the changing transaction; queues the notifications."""

    async def mapping_resolved(self, conn: DbConnection, row: MappingRow) -> None: ...

    async def mapping_url_changed(self, conn: DbConnection, row: MappingRow) -> None: ...

    async def mappings_removed(self, conn: DbConnection, rows: Sequence[MappingRow]) -> None: ...
