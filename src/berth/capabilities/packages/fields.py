"""octo/packages (OCTO.md §6.4): package products, their includes, package availability and
the included bookings of a package booking.

Package availability objects and included bookings are built by the SAME serializers as
top-level ones (`availability_view`, `booking_view`, handed to the hooks as `nested`), so every
capability's fields (`mappings[]` with vendor/mappings, `hasResources` with octo/resources,
prices with octo/pricing...) appear in them exactly as on top-level objects.
The service computes what they show (capability hooks are synchronous and cannot query):
`SlotAvailability.includes` and `BookingDetails.package_bookings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import PACKAGES
from berth.domain.catalog import Option, PackageInclude, PackageIncludeGroup, Product

if TYPE_CHECKING:
    from berth.read_models.availability import SlotAvailability
    from berth.read_models.bookings import BookingDetails


def include_json(include: PackageInclude) -> JSON:
    # `product` and `option` are not embedded (null): the include names them by id, and the
    # reseller has the full objects from GET /products.
    return {
        "id": include.id,
        "required": include.required,
        "limit": include.limit,
        "validityDays": include.validity_days,
        "availabilityRequired": include.availability_required,
        "productId": include.product_id,
        "product": None,
        "optionId": include.option_id,
        "option": None,
    }


def group_json(group: PackageIncludeGroup) -> JSON:
    return {
        "id": group.id,
        "title": group.title,
        "count": group.count,
        "includes": [include_json(include) for include in group.includes],
    }


class PackagesCapability(Capability):
    id = PACKAGES
    docs = "https://docs.ventrata.com/capabilities/packages"

    def product_fields(self, product: Product, out: JSON, view: View) -> None:
        out["isPackage"] = product.is_package
        out["packageBookingAvailabilityRequired"] = (
            product.is_package and product.package_booking_availability_required
        )
        out["packageProduct"] = product.is_package

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        out["packageIncludes"] = [group_json(group) for group in option.package_includes]

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        out["packageAvailabilities"] = [nested(include, view) for include in item.includes]

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        out["packageBookings"] = [nested(member, view) for member in details.package_bookings]
