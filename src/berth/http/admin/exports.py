"""CSV exports for staff, streamed: the header, then one chunk per batch of bookings read, so
an export of any size never holds its whole result (the admin API's and the back office's)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from starlette.responses import StreamingResponse

from berth.container import Services
from berth.domain.catalog import Catalog
from berth.read_models.departures import Departure
from berth.services.departures import departure_filter
from berth.store.bookings_reads import BookingFilter
from berth.views.exports import HEADER, Row, booking_row, csv_file


async def _rows(svc: Services, catalog: Catalog, where: BookingFilter) -> AsyncIterator[Iterable[Row]]:
    resellers = {c.id: c.name for c in await svc.connections.list()}
    async for batch in svc.staff_bookings.export(catalog, where):
        yield [booking_row(booking, product, resellers) for booking, product in batch]


def csv_download(chunks: AsyncIterator[bytes], filename: str) -> StreamingResponse:
    """A CSV file (from `views.exports.csv_file`) as a download that no cache keeps."""
    return StreamingResponse(
        chunks,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )


def bookings_csv(svc: Services, catalog: Catalog, where: BookingFilter, filename: str) -> StreamingResponse:
    return csv_download(csv_file(HEADER, _rows(svc, catalog, where)), filename)


def manifest_filter(departure: Departure) -> BookingFilter:
    """Every booking on the departure."""
    return departure_filter(departure.product, departure.option, departure.slot)


def file_name(*parts: str) -> str:
    """A download's name from ids (only letters, digits, '-', '_' and '.' kept)."""
    text = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)
