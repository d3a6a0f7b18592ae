"""The capabilities this server implements, and parsing of the `Octo-Capabilities` header."""

from __future__ import annotations

from berth.capabilities.base import Capability
from berth.capabilities.cart import CartCapability
from berth.capabilities.content import ContentCapability
from berth.capabilities.mappings import ALIAS as MAPPINGS_ALIAS
from berth.capabilities.mappings import MAPPINGS, MappingsCapability
from berth.capabilities.packages import PackagesCapability
from berth.capabilities.pricing import PricingCapability
from berth.capabilities.rentals import RentalsCapability
from berth.capabilities.resources import ResourcesCapability
from berth.capabilities.webhooks import WebhooksCapability

CAPABILITIES: tuple[Capability, ...] = (
    ContentCapability(),
    PricingCapability(),
    CartCapability(),
    MappingsCapability(),
    RentalsCapability(),
    PackagesCapability(),
    ResourcesCapability(),
    WebhooksCapability(),
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


def header_value(capabilities: frozenset[str]) -> str:
    return ", ".join(c.id for c in active(capabilities))
