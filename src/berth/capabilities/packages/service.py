"""Package bookings (octo/packages): a package booking and its included bookings change
together, in one transaction, through the booking service's in-transaction steps.

An included booking is an ordinary booking row (so availability stays derived from bookings)
linked to its package booking by `package_booking_id`; it holds places on its own slot. The
package booking is the handle: confirm, extend and cancel act on it and on every included
booking, or on none of them; an included booking cannot be confirmed, extended, updated or
cancelled on its own. A package booking's contact changes with its included bookings'
(`set_contact`, the web shop's details); any other change of it is refused (cancel and book
again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

from sqlalchemy.exc import IntegrityError

from berth.capabilities.request_fields import PACKAGE_BOOKINGS
from berth.domain.bookings import Booking, BookingStatus, Contact, as_of
from berth.domain.catalog import Catalog, Option, PackageInclude, Product, include_unit
from berth.domain.errors import (
    BadRequest,
    InvalidAvailabilityId,
    InvalidBookingUuid,
    OctoError,
    UnprocessableEntity,
)
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import ReserveInput, UnitItemInput, UpdateInput
from berth.services.bookings.preparing import PreparedBooking
from berth.services.bookings.reseller import ResellerBookings
from berth.services.bookings.steps import BookingSteps
from berth.services.clock import Clock
from berth.store import bookings_reads, bookings_repo, packages_repo
from berth.store.connection import DbConnection
from berth.store.database import Database


@dataclass(frozen=True)
class PackageBookingInput:
    """The include a package booking books, at which availability."""

    include_id: str | None
    availability_id: str | None = None


def package_bookings(data: ReserveInput) -> tuple[PackageBookingInput, ...] | None:
    """The includes a reservation chose (packageBookings; None: not sent)."""
    chosen = data.asked.get(PACKAGE_BOOKINGS)
    return None if chosen is None else tuple(PackageBookingInput(*pair) for pair in chosen)


def is_package_request(catalog: Catalog, data: ReserveInput) -> bool:
    product = catalog.product(data.product_id) if data.product_id else None
    return PACKAGE_BOOKINGS in data.asked or (product is not None and product.is_package)


def _unchosen(product: Product, option: Option, required: list[str]) -> str:
    """Why a package reservation that sent no packageBookings is refused: a client without
    octo/packages sees neither the includes nor the field that chooses them."""
    return (
        f"Option {option.id!r} of product {product.id!r} is a package, whose bookings choose their "
        "included bookings with packageBookings, which only octo/packages shows: request the "
        "octo/packages capability (Octo-Capabilities) to read its packageIncludes, and send "
        f"packageBookings with its required includes ({', '.join(map(repr, required))}) and the "
        "optional ones wanted"
    )


class PackageBookings:
    """The grouping of octo/packages: a package booking and its included bookings."""

    def __init__(
        self, database: Database, clock: Clock, steps: BookingSteps, bookings: ResellerBookings
    ) -> None:
        self._db = database
        self._clock = clock
        self._steps = steps
        self._bookings = bookings

    def claims(self, catalog: Catalog, data: ReserveInput, capabilities: frozenset[str]) -> bool:
        return is_package_request(catalog, data)

    # --- reserve ------------------------------------------------------------------------------

    def prepare(
        self, catalog: Catalog, connection_id: str, data: ReserveInput, *, test_mode: bool = False
    ) -> list[PreparedBooking]:
        """The package booking first, then one booking per chosen include (catalogue order)."""
        package = self._steps.prepare(catalog, connection_id, data, test_mode=test_mode)
        option = package.option
        if not option.package_includes:
            raise BadRequest(
                f"packageBookings is for package products; {package.product.id!r}/{option.id!r} is not one"
            )
        chosen: dict[str, PackageBookingInput] = {}
        known = {include.id for include in option.includes}
        sent = package_bookings(data)
        for index, given in enumerate(sent or ()):
            if given.include_id not in known:
                raise UnprocessableEntity(
                    f"packageBookings[{index}]: option {option.id!r} has no include {given.include_id!r}"
                )
            if given.include_id in chosen:
                raise BadRequest(f"packageBookings[{index}]: include {given.include_id!r} is chosen twice")
            chosen[given.include_id] = given
        required = [include.id for include in option.includes if include.required]
        if sent is None and required:
            raise UnprocessableEntity(_unchosen(package.product, option, required))
        for group in option.package_includes:
            for include in group.includes:
                if include.required and include.id not in chosen:
                    raise UnprocessableEntity(
                        f"packageBookings: the required include {include.id!r} is missing"
                    )
            picked = sum(1 for include in group.includes if include.id in chosen)
            if group.count is not None and picked > group.count:
                raise UnprocessableEntity(
                    f"packageBookings: at most {group.count} include(s) of group {group.id!r} may be "
                    f"booked; {picked} were chosen"
                )
        prepared = [package]
        for include in option.includes:
            selection = chosen.get(include.id)
            if selection is None:
                continue
            try:
                prepared.append(self._member(catalog, connection_id, package, include, selection))
            except OctoError as exc:
                exc.message = f"packageBookings include {include.id!r}: {exc.message}"
                raise
        return prepared

    def _member(
        self,
        catalog: Catalog,
        connection_id: str,
        package: PreparedBooking,
        include: PackageInclude,
        given: PackageBookingInput,
    ) -> PreparedBooking:
        product, option = self._included(catalog, include)
        if include.availability_required and given.availability_id is None:
            raise InvalidAvailabilityId(None, "an availabilityId is required for this include")
        units = []
        for item in package.booking.unit_items:
            unit = package.option.unit(item.unit_id)
            mapped = include_unit(option, unit) if unit is not None else None
            if mapped is None:
                raise UnprocessableEntity(
                    f"unit {item.unit_id!r} cannot be booked on {product.id!r}/{option.id!r}"
                )
            units.append(UnitItemInput(unit_id=mapped.id, contact=item.contact))
        request = ReserveInput(
            product_id=product.id,
            option_id=option.id,
            unit_items=tuple(units),
            availability_id=given.availability_id,
            notes=package.booking.notes,
            reseller_reference=package.booking.reseller_reference,
            contact=package.booking.contact,
        )
        member = self._steps.prepare(
            catalog, connection_id, request,
            test_mode=package.booking.test_mode, expires_at=package.booking.expires_at,
        )  # fmt: skip
        if member.slot is not None and package.slot is not None:
            first = package.slot.local_date
            last = first + timedelta(days=include.validity_days or 0)
            if not first <= member.slot.local_date <= last:
                window = f"on {first}" if first == last else f"from {first} to {last}"
                raise InvalidAvailabilityId(
                    member.slot.id,
                    f"Availability {member.slot.id} is not {window}, when the package can use it",
                )
        booking = replace(
            member.booking, package_booking_id=package.booking.id, package_include_id=include.id
        )
        return replace(member, booking=booking)

    @staticmethod
    def _included(catalog: Catalog, include: PackageInclude) -> tuple[Product, Option]:
        product = catalog.product(include.product_id)
        option = product.option(include.option_id) if product else None
        if product is None or option is None:
            raise UnprocessableEntity("the included product is no longer sold")
        return product, option

    async def reserve(
        self, catalog: Catalog, connection_id: str, data: ReserveInput, *, test_mode: bool = False
    ) -> BookingDetails:
        """Hold the package booking and every chosen include, or nothing."""
        if data.order_id is not None:
            raise UnprocessableEntity("Package bookings cannot join an order (octo/cart) yet")
        await self._steps.refresh()
        prepared = self.prepare(catalog, connection_id, data, test_mode=test_mode)
        for item in prepared:
            await self._steps.read_ahead(item)
        try:
            async with self._db.transaction(write=True) as conn:
                # Every slot first, in one sorted pass, so two packages sharing slots wait for
                # each other instead of deadlocking.
                await self._steps.locks.lock(conn, [p.lock_key for p in prepared if p.lock_key is not None])
                package, new = await self._steps.place_in(conn, catalog, prepared[0])
                if new:
                    for item in prepared[1:]:
                        try:
                            await self._steps.place_in(conn, catalog, item)
                        except OctoError as exc:
                            exc.message = (
                                f"packageBookings include {item.booking.package_include_id!r}: "
                                f"{exc.message}. Nothing was held"
                            )
                            raise
        except IntegrityError:
            return await self._bookings.repeated(catalog, prepared[0])
        async with self._db.transaction(write=False) as conn:
            return await self._steps.loader.one(conn, catalog, package)

    async def set_contact(
        self, catalog: Catalog, connection_id: str, uuid: str, contact: Contact
    ) -> BookingDetails:
        """The lead guest's details on a package booking and on each of its live included
        bookings, in one transaction (what the contact of a booking may be, and until when it
        may change, as for any booking's update)."""
        now = self._clock()
        data = UpdateInput(contact=contact, sent=frozenset({"contact"}))
        async with self._db.transaction(write=True) as conn:
            found = await bookings_repo.get_by_uuid(conn, connection_id, uuid)
            if found is None or found.package_booking_id is not None:
                raise InvalidBookingUuid(uuid)
            booking = as_of(await self._steps.lock_in(conn, found), now)
            members = await packages_repo.package_members(conn, [booking.id], lock=True)
            updated = await self._steps.change_in(conn, catalog, booking, data, now)
            for member in members:
                member = as_of(member, now)
                if member.status not in (BookingStatus.CANCELLED, BookingStatus.EXPIRED):
                    await self._steps.change_in(conn, catalog, member, data, now)
            return await self._steps.loader.one(conn, catalog, updated)

    # --- confirm, extend, cancel, update ----------------------------------------------------

    def named(self, companion: Booking) -> str:
        return f"The included booking {companion.package_include_id!r}"

    async def companions(
        self, conn: DbConnection, booking: Booking, verb: str, *, staff: bool
    ) -> list[Booking]:
        """A package booking's included bookings (locked), which change with it; a reseller
        changes an included booking only through its package booking, and cannot update
        (PATCH) a package booking yet."""
        if booking.package_booking_id is not None:
            if staff:
                return []
            if verb == "update":
                raise UnprocessableEntity(
                    f"Booking {booking.uuid!r} is included in a package booking; it cannot be updated"
                )
            parent = await bookings_reads.get_by_id(conn, booking.package_booking_id)
            raise UnprocessableEntity(
                f"Booking {booking.uuid!r} is included in package booking "
                f"{parent.uuid if parent else booking.package_booking_id!r}; {verb} the package booking"
            )
        members = await packages_repo.package_members(conn, [booking.id], lock=True)
        if members and verb == "update":
            raise UnprocessableEntity(
                f"Booking {booking.uuid!r} is a package booking; cancel it and reserve again to change it"
            )
        return members
