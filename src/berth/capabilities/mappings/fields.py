"""vendor/mappings (alias octo/mappings): the mapping row shape, and `mappings[]` on
availability items (batch rows included), bookings and package availability.

`mappings[]` holds the requesting connection's rows mapped to the object's product and option
(a row mapped without an option stands for every option of its product). Capability hooks are
synchronous, so the rows travel on the View: whoever builds a View for an object that carries
`mappings[]` (the OCTO routes, the webhook fan-out) loads the connection's mapped rows into
`View.mappings` with one query. Staff views leave the capability out.

Package availability: octo/packages serializes each package availability object with
`availability_view`, so `availability_fields` below adds `mappings[]` to it too; a package
serializer that builds its objects another way calls `mappings_for` for each of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.capabilities.base import JSON, Capability, Nested, View
from berth.capabilities.ids import MAPPINGS
from berth.domain.mappings import mapping_json

if TYPE_CHECKING:
    from berth.read_models.availability import SlotAvailability
    from berth.read_models.bookings import BookingDetails


def mappings_for(view: View, product_id: str, option_id: str) -> list[JSON]:
    if view.mappings is None:
        return []
    return [mapping_json(row) for row in view.mappings.matching(product_id, option_id)]


class MappingsCapability(Capability):
    id = MAPPINGS
    docs = None  # a vendor capability: described in docs/reseller-guide.md, "Self-service mappings"

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        out["mappings"] = mappings_for(view, item.product.id, item.option.id)

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        out["mappings"] = mappings_for(view, details.product.id, details.option.id)
