"""Reseller A's mapping rows, stated for the tests that need a connection with listings: two
mapped by the supplier (already notified), two waiting for it."""

from __future__ import annotations

from berth.container import Services
from berth.domain.mappings import MappingUpload, Resolution
from berth.domain.staff import COMMAND_LINE
from tests.conftest import KEY_A

A_URL = "https://reseller-a.example/octo/mapping-updates"
# Reseller A's listings: (upload, what the supplier mapped it to or None while waiting).
A_ROWS: tuple[tuple[MappingUpload, Resolution | None], ...] = (
    (
        MappingUpload("RA-THAMES-DAY", "CONFIRMED", "Thames cruise", validity_days=30, webhook_url=A_URL),
        Resolution("thames-sightseeing", "DEFAULT"),
    ),
    (
        MappingUpload("RA-THAMES-EVENING-ADULT", "CONFIRMED", "Evening cruise, adult", unit_required=True,
                      webhook_url=A_URL),
        Resolution("thames-sightseeing", "evening", "adult"),
    ),
    (MappingUpload("RA-MUSEUM", "CONFIRMED", "Museum entry", option_required=False, webhook_url=A_URL), None),
    (MappingUpload("RA-KAYAK-SUNSET", "DRAFT", "Sunset kayak trip", webhook_url=A_URL), None),
)  # fmt: skip


async def add_listings(services: Services) -> Services:
    """Reseller A's rows (A_ROWS), the mapped ones already notified: no delivery is pending."""
    connection = await services.connections.ensure("Reseller A", KEY_A)
    stored = await services.mappings.replace_all(connection.id, [upload for upload, _ in A_ROWS])
    catalog = (await services.catalog.snapshot()).catalog
    for stored_row, (_, resolution) in zip(stored, A_ROWS, strict=True):
        if resolution is not None:
            await services.mappings.complete(
                catalog, stored_row.id, resolution, actor=COMMAND_LINE, notify=False
            )
    return services
