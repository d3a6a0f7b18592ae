"""CSV exports for staff, streamed: the header, then one chunk per batch of bookings read, so
an export of any size never holds its whole result (the admin API's and the back office's)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.responses import StreamingResponse

from berth.container import Services
from berth.domain.catalog import Catalog
from berth.read_models.departures import Departure
from berth.services.departures import departure_filter
from berth.store.bookings_repo import BookingFilter
from berth.views.exports import HEADER, booking_row, csv_text


async def _chunks(svc: Services, catalog: Catalog, where: BookingFilter) -> AsyncIterator[bytes]:
    resellers = {c.id: c.name for c in await svc.connections.list()}
    yield csv_text([HEADER]).encode()
    async for batch in svc.staff_bookings.export(catalog, where):
        yield csv_text(booking_row(booking, product, resellers) for booking, product in batch).encode()


def bookings_csv(svc: Services, catalog: Catalog, where: BookingFilter, filename: str) -> StreamingResponse:
    return StreamingResponse(
        _chunks(svc, catalog, where),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )


def manifest_filter(departure: Departure) -> BookingFilter:
    """Every booking on the departure."""
    return departure_filter(departure.product, departure.option, departure.slot)


def file_name(*parts: str) -> str:
    """A download's name from ids (only letters, digits, '-', '_' and '.' kept)."""
    text = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
