"""What a capability module is, and the view context every serializer receives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from berth.domain.bookings import UnitItem
from berth.domain.catalog import Option, Product, Supplier, Unit
from berth.domain.mappings import MappedRows
from berth.domain.tickets import TicketLine

if TYPE_CHECKING:
    from berth.read_models.availability import CalendarDay, SlotAvailability
    from berth.read_models.bookings import BookingDetails
    from berth.read_models.orders import OrderDetails

JSON = dict[str, Any]
T = TypeVar("T")
# The serializer of a nested object of the same kind (a package's included availabilities and
# bookings), handed to the hooks by the views so that capabilities need not import them.
Nested = Callable[[T, "View"], JSON]


@dataclass(frozen=True)
class View:
    """How to serialize: the capabilities active on this request, the content language and,
    with vendor/mappings, the requesting connection's mapped rows (None: not loaded)."""

    capabilities: frozenset[str] = frozenset()
    language: str | None = None
    mappings: MappedRows | None = None

    def has(self, capability_id: str) -> bool:
        return capability_id in self.capabilities

    @property
    def shared_key(self) -> tuple[frozenset[str], str | None]:
        """What serializations shared by every connection (products, the supplier) depend on:
        the key to cache them under. A connection's own data (its mapping rows) is left out."""
        return self.capabilities, self.language


def pick_language(available: dict[str, Any], view: View, fallback: str) -> str | None:
    """The language of `available` to serialize: the view's, else `fallback`, else the first."""
    if view.language and view.language in available:
        return view.language
    if fallback in available:
        return fallback
    return next(iter(available), None)


@dataclass(frozen=True)
class EditorPart:
    """A capability's part of the catalogue editor: the file keys it adds to a product or an
    option (`level`), edited in the back office as a YAML fragment with `help` beside it and
    checked by the capability's catalogue rules like an import."""

    id: str
    title: str
    level: str  # "product" or "option"
    keys: tuple[str, ...]
    help: str
    example: str = ""


class Capability:
    """A capability adds fields to objects built by `berth.views`. Hooks default to nothing."""

    id: str = ""
    revision: int = 1
    dependencies: tuple[str, ...] = ()
    docs: str | None = None
    # The fields of a booking request (reserve, update, confirm) and of its unit items that the
    # capability's booking extension reads, by their OCTO names; read only when it is requested.
    booking_request_fields: frozenset[str] = frozenset()
    unit_item_request_fields: frozenset[str] = frozenset()

    def supplier_fields(self, supplier: Supplier, out: JSON, view: View) -> None:
        return None

    def product_fields(self, product: Product, out: JSON, view: View) -> None:
        return None

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        return None

    def unit_fields(self, product: Product, option: Option, unit: Unit, out: JSON, view: View) -> None:
        return None

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        return None

    def calendar_fields(self, day: CalendarDay, out: JSON, view: View) -> None:
        return None

    def booking_fields(
        self, details: BookingDetails, out: JSON, view: View, nested: Nested[BookingDetails]
    ) -> None:
        return None

    def unit_item_fields(self, details: BookingDetails, item: UnitItem, out: JSON, view: View) -> None:
        return None

    def order_fields(self, details: OrderDetails, out: JSON, view: View) -> None:
        return None

    def booking_lines(self, details: BookingDetails, item: UnitItem | None) -> list[TicketLine]:
        """What a booking shows of the capability's part of it, wherever it is shown: of the
        whole booking (`item` None) on its voucher, at the gate and on the departure's
        manifest; of the unit item `item` on its ticket and on its line at the gate. The gate,
        the manifest and the tickets show every capability's lines (`registry.booking_lines`),
        so a capability added to the registry appears in all three."""
        return []

    def departure_part(self, option: Option, travelling: Sequence[BookingDetails]) -> object | None:
        """The capability's section of a departure's manifest, over the bookings `travelling`
        (None: it has none here); the manifest's template shows it under the capability's id."""
        return None

    def describe(self) -> JSON:
        return {
            "id": self.id,
            "revision": self.revision,
            "required": False,
            "dependencies": list(self.dependencies),
            "docs": self.docs,
        }
