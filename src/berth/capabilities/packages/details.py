"""octo/packages' part of a booking's details: a package booking's included bookings, read in
one query for every package booking of a batch."""

from __future__ import annotations

from dataclasses import replace

from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Catalog
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.loader import BookingLoader
from berth.store import packages_repo
from berth.store.connection import DbConnection


class PackageDetails:
    def __init__(self, loader: BookingLoader) -> None:
        self._loader = loader

    async def add(
        self, conn: DbConnection, catalog: Catalog, details: list[BookingDetails], exact: bool
    ) -> list[BookingDetails]:
        packages = [d.booking.id for d in details if d.option.package_includes]
        if not packages:
            return details
        members = await packages_repo.package_members(conn, packages)
        described = await self._loader.describe(conn, catalog, members, exact=exact)
        by_package: dict[str, list[BookingDetails]] = {}
        for member in described:
            by_package.setdefault(member.booking.package_booking_id or "", []).append(member)
        result = []
        for d in details:
            found = by_package.get(d.booking.id)
            if found:
                order = [i.id for i in d.option.includes]
                found.sort(
                    key=lambda m: (
                        order.index(m.booking.package_include_id or "")
                        if (m.booking.package_include_id or "") in order
                        else len(order)
                    )
                )
                # Cancelling the package cancels its included bookings: it is cancellable
                # while each of them still is (one admitted at the gate makes it not).
                cancellable = d.cancellable and all(
                    m.cancellable
                    for m in found
                    if m.booking.status not in (BookingStatus.CANCELLED, BookingStatus.EXPIRED)
                )
                d = replace(d, package_bookings=tuple(found), cancellable=cancellable)
            result.append(d)
        return result
