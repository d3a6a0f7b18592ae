"""Demo data: the packaged catalogue and two reseller connections with fixed keys."""

from __future__ import annotations

from importlib import resources

from berth.domain.catalog_document import parse_catalog
from berth.services.container import Services

DEMO_CONNECTIONS = (("Demo reseller A", "demo-reseller-a"), ("Demo reseller B", "demo-reseller-b"))
DEMO_ADMIN_TOKEN = "demo-admin"


def demo_catalog_text() -> str:
    return resources.files("berth.demo").joinpath("catalog.yaml").read_text(encoding="utf-8")


async def load_demo(services: Services) -> None:
    """Idempotent: the catalogue is written only when it differs, connections only when missing."""
    catalog = parse_catalog(demo_catalog_text())
    if (await services.catalog.snapshot()).catalog != catalog:
        await services.catalog.replace(catalog)
    for name, key in DEMO_CONNECTIONS:
        await services.connections.ensure(name, key)
