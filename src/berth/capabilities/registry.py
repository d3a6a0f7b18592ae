"""The capabilities this server implements, and parsing of the `Octo-Capabilities` header."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from berth.capabilities import request_fields
from berth.capabilities.base import Capability, EditorPart
from berth.capabilities.cart.fields import CartCapability
from berth.capabilities.content.editor import EDITOR_PARTS as CONTENT_EDITOR
from berth.capabilities.content.fields import ContentCapability
from berth.capabilities.extras.catalog_rules import ExtraRules
from berth.capabilities.extras.editor import EDITOR_PARTS as EXTRAS_EDITOR
from berth.capabilities.extras.fields import ExtrasCapability
from berth.capabilities.gifts.fields import GiftsCapability
from berth.capabilities.ids import MAPPINGS, MAPPINGS_ALIAS
from berth.capabilities.mappings.fields import MappingsCapability
from berth.capabilities.offers.fields import OffersCapability
from berth.capabilities.packages.catalog_rules import PackageRules
from berth.capabilities.packages.editor import EDITOR_PARTS as PACKAGES_EDITOR
from berth.capabilities.packages.fields import PackagesCapability
from berth.capabilities.pickups.catalog_rules import PickupRules
from berth.capabilities.pickups.editor import EDITOR_PARTS as PICKUPS_EDITOR
from berth.capabilities.pickups.fields import PickupsCapability
from berth.capabilities.pricing.fields import PricingCapability
from berth.capabilities.questions.catalog_rules import QuestionRules
from berth.capabilities.questions.editor import EDITOR_PARTS as QUESTIONS_EDITOR
from berth.capabilities.questions.fields import QuestionsCapability
from berth.capabilities.rentals.catalog_rules import RentalRules
from berth.capabilities.rentals.editor import EDITOR_PARTS as RENTALS_EDITOR
from berth.capabilities.rentals.fields import RentalsCapability
from berth.capabilities.resources.catalog_rules import ResourceRules
from berth.capabilities.resources.editor import EDITOR_PARTS as RESOURCES_EDITOR
from berth.capabilities.resources.fields import ResourcesCapability
from berth.capabilities.webhooks.fields import WebhooksCapability
from berth.domain.bookings import UnitItem
from berth.domain.catalog import Option
from berth.domain.catalog.rules import CatalogRule
from berth.domain.tickets import TicketLine
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import Asked

# The catalogue rules of the capabilities' declarations, in the order they run.
CATALOG_RULES: tuple[CatalogRule, ...] = (
    RentalRules(),
    ResourceRules(),
    PackageRules(),
    PickupRules(),
    QuestionRules(),
    ExtraRules(),
)
# The capabilities' parts of the back office's catalogue editor, in the order they show.
EDITOR_PARTS: tuple[EditorPart, ...] = (
    *CONTENT_EDITOR,
    *RENTALS_EDITOR,
    *RESOURCES_EDITOR,
    *PACKAGES_EDITOR,
    *PICKUPS_EDITOR,
    *QUESTIONS_EDITOR,
    *EXTRAS_EDITOR,
)
CAPABILITIES: tuple[Capability, ...] = (
    ContentCapability(),
    PricingCapability(),
    CartCapability(),
    MappingsCapability(),
    RentalsCapability(),
    PackagesCapability(),
    ResourcesCapability(),
    WebhooksCapability(),
    PickupsCapability(),
    QuestionsCapability(),
    ExtrasCapability(),
    OffersCapability(),  # after octo/pricing: it adds to the pricing objects
    GiftsCapability(),
)
BY_ID: dict[str, Capability] = {c.id: c for c in CAPABILITIES}
ALIASES: dict[str, str] = {MAPPINGS_ALIAS: MAPPINGS}


def parse_capabilities(header: str | None) -> frozenset[str]:
    """Split on commas, trim, resolve aliases, keep what we implement; ignore the rest."""
    if not header:
        return frozenset()
    found = set()
    for raw in header.split(","):
        name = raw.strip()
        name = ALIASES.get(name, name)
        if name in BY_ID:
            found.add(name)
    return frozenset(found)


def active(capabilities: frozenset[str]) -> list[Capability]:
    """Active capability modules in registry order (their fields are added in this order)."""
    return [c for c in CAPABILITIES if c.id in capabilities]


@lru_cache(maxsize=256)
def header_value(capabilities: frozenset[str]) -> str:
    return ", ".join(c.id for c in active(capabilities))


def booking_lines(details: BookingDetails, item: UnitItem | None) -> list[TicketLine]:
    """What a booking (`item` None) or one of its unit items shows of every capability's part
    of it: the one extension point of its tickets, the gate and the manifest."""
    return [line for capability in CAPABILITIES for line in capability.booking_lines(details, item)]


def departure_parts(option: Option, travelling: Sequence[BookingDetails]) -> dict[str, object]:
    """Each capability's section of a departure's manifest, by capability id."""
    return {
        capability.id: part
        for capability in CAPABILITIES
        if (part := capability.departure_part(option, travelling)) is not None
    }


def asked_fields(
    rental_duration_id: str | None = None,
    resource_ids: tuple[str, ...] | None = None,
    package_bookings: tuple[tuple[str | None, str | None], ...] | None = None,
) -> Asked:
    """The request fields octo/rentals, octo/resources and octo/packages read themselves (the
    booking core hands them on): those sent, under their names."""
    fields = {
        request_fields.RENTAL_DURATION_ID: rental_duration_id,
        request_fields.RESOURCE_IDS: resource_ids,
        request_fields.PACKAGE_BOOKINGS: package_bookings,
    }
    return {name: value for name, value in fields.items() if value is not None}
