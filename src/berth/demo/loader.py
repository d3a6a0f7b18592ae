"""Demo data: the packaged catalogue, two reseller connections with fixed keys, the web shop
(/shop, its own connection at retail), the box office's own bookings that sell out some upcoming kayak departures, and mapping rows of
demo-reseller-a (some mapped, some waiting for the supplier)."""

from __future__ import annotations

from datetime import timedelta
from importlib import resources
from zoneinfo import ZoneInfo

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.domain.bookings import Contact
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import parse_catalog, read_yaml
from berth.domain.catalog_history import Door
from berth.domain.connections import Connection
from berth.domain.errors import OctoError
from berth.domain.mappings import MappingFilter, MappingUpload, Resolution
from berth.domain.staff import COMMAND_LINE, Actor, Role
from berth.domain.webhooks import fixed_signing_secret
from berth.services.availability import AvailabilityQuery
from berth.services.bookings.inputs import ConfirmInput, ReserveInput, UnitItemInput
from berth.store.bookings_reads import BookingFilter

# Who the audit trail says did what loading the demo did as staff would.
DEMO_LOADER = Actor("demo loader", Role.ADMIN)

# (name, API key, webhook signing secret): documented in the README, for trying things out.
DEMO_CONNECTIONS = (
    ("Demo reseller A", "demo-reseller-a", fixed_signing_secret("demo-reseller-a-signing-secret")),
    ("Demo reseller B", "demo-reseller-b", fixed_signing_secret("demo-reseller-b-signing-secret")),
)
DEMO_ADMIN_TOKEN = "demo-admin"
BOX_OFFICE = ("Harbourside box office", "demo-box-office-not-for-resellers")
SOLD_OUT_PRODUCT = "sunset-kayak"
SOLD_OUT_DEPARTURES = (0, 1, 5)  # which of the next upcoming departures are sold out
SEATED_PRODUCT = "harbour-cruise"
# Guests the box office seats on tomorrow's first cruise, so its manifest has a seat map to show.
SEATED_PARTIES = (
    ("Grace", "Hopper", ("adult", "adult", "child", "infant")),
    ("Alan", "Turing", ("adult", "adult")),
    ("Mary", "Somerville", ("adult",) * 7),
)

# demo-reseller-a's listings: (upload, what the supplier mapped it to or None while waiting).
DEMO_MAPPING_URL = "https://reseller-a.example/octo/mapping-updates"
DEMO_MAPPINGS: tuple[tuple[MappingUpload, Resolution | None], ...] = (
    (
        MappingUpload(
            "RA-THAMES-DAY",
            "CONFIRMED",
            "Thames sightseeing cruise",
            validity_days=30,
            webhook_url=DEMO_MAPPING_URL,
        ),
        Resolution("thames-sightseeing", "DEFAULT"),
    ),
    (
        MappingUpload(
            "RA-THAMES-EVENING-ADULT",
            "CONFIRMED",
            "Evening cruise, adult ticket",
            unit_required=True,
            webhook_url=DEMO_MAPPING_URL,
        ),
        Resolution("thames-sightseeing", "evening", "adult"),
    ),
    (
        MappingUpload(
            "RA-MUSEUM",
            "CONFIRMED",
            "Tower of Stories entry",
            option_required=False,
            webhook_url=DEMO_MAPPING_URL,
        ),
        None,
    ),
    (
        MappingUpload("RA-KAYAK-SUNSET", "DRAFT", "Sunset kayak trip", webhook_url=DEMO_MAPPING_URL),
        None,
    ),
)


def demo_catalog_text() -> str:
    return resources.files("berth.demo").joinpath("catalog.yaml").read_text(encoding="utf-8")


def starter_catalog_text() -> str:
    """The small commented catalogue `berth catalog new` writes."""
    return resources.files("berth.demo").joinpath("starter.yaml").read_text(encoding="utf-8")


async def load_demo(services: Services, catalog: Catalog | None = None) -> None:
    """Idempotent: the catalogue is written only when it differs and is still the demo's own,
    connections only when missing, and sold-out departures are filled only where places are
    left. `catalog`: a variant of the packaged demo catalogue to load instead (tests pin the
    figures they use)."""
    catalog = catalog or parse_catalog(demo_catalog_text(), CATALOG_RULES)
    if (await services.catalog.snapshot()).catalog != catalog and await _catalog_is_the_demos(services):
        await services.catalog.replace(catalog, actor=DEMO_LOADER)
    connections = [
        await services.connections.ensure(name, key, secret) for name, key, secret in DEMO_CONNECTIONS
    ]
    for connection, (_, key, _) in zip(connections, DEMO_CONNECTIONS, strict=True):
        await _agree_contract(services, connection, key)
    await _agree_contract(services, await services.connections.ensure(*BOX_OFFICE), BOX_OFFICE[1])
    await services.shop.open(DEMO_LOADER)
    await _offer_promotions(
        services, {key: c.id for c, (_, key, _) in zip(connections, DEMO_CONNECTIONS, strict=True)}
    )
    await _sell_out_upcoming_departures(services)
    await _upload_mappings(services, connections[0].id)
    await _seat_cruise_guests(services)


async def _catalog_is_the_demos(services: Services) -> bool:
    """Whether the live catalogue may be replaced by the demo's: there is none yet, or the demo
    loader wrote it (before it signed its versions, it wrote them as the command line through the
    setup door, a door only it used). A catalogue anyone edited, imported or restored stays:
    restarting the demo server never undoes staff's work."""
    live = await services.catalog.versions(limit=1)
    if not live:
        return True
    newest = live[0]
    return newest.door is Door.SETUP and newest.actor in (DEMO_LOADER.name, COMMAND_LINE.name)


async def _agree_contract(services: Services, connection: Connection, key: str) -> None:
    """The demo's contract of a connection (demo/contracts/<key>.yaml), unless one was saved:
    a contract someone changed while trying the demo stays."""
    if connection.contract_version:
        return
    text = resources.files("berth.demo").joinpath("contracts", f"{key}.yaml").read_text(encoding="utf-8")
    await services.contracts.save(connection.id, read_yaml(text), base_version=0, actor=DEMO_LOADER)


async def _offer_promotions(services: Services, connection_ids: dict[str, str]) -> None:
    """The demo's offers (demo/offers.yaml), unless offers were saved: offers someone changed
    while trying the demo stay."""
    if await services.offers.versions(limit=1):
        return
    document = read_yaml(resources.files("berth.demo").joinpath("offers.yaml").read_text(encoding="utf-8"))
    for offer in document["offers"]:
        if "channels" in offer:
            offer["channels"] = [connection_ids.get(channel, channel) for channel in offer["channels"]]
    await services.offers.save(document, base_version=0, actor=DEMO_LOADER)


async def _upload_mappings(services: Services, connection_id: str) -> None:
    """Only into a connection without rows: rows someone uploaded while trying the demo stay.
    The mapped rows are loaded as already notified (nothing is sent to the example URL)."""
    if await services.mappings.find(connection_id, MappingFilter()):
        return
    stored = await services.mappings.replace_all(connection_id, [upload for upload, _ in DEMO_MAPPINGS])
    catalog = (await services.catalog.snapshot()).catalog
    for row, (_, resolution) in zip(stored, DEMO_MAPPINGS, strict=True):
        if resolution is not None:
            await services.mappings.complete(catalog, row.id, resolution, actor=DEMO_LOADER, notify=False)


async def _sell_out_upcoming_departures(services: Services) -> None:
    box_office = await services.connections.ensure(*BOX_OFFICE)
    catalog = (await services.catalog.snapshot()).catalog
    product = catalog.product(SOLD_OUT_PRODUCT)
    if product is None:
        return
    today = services.clock().astimezone(ZoneInfo(product.time_zone)).date()
    query = AvailabilityQuery(
        product_id=product.id,
        option_id=product.default_option.id,
        local_date_start=today + timedelta(days=1),
        local_date_end=today + timedelta(days=28),
    )
    upcoming = [
        item for item in await services.availability.check(catalog, query) if item.state.status != "CLOSED"
    ]
    guest = Contact(
        values={
            "firstName": "Box",
            "lastName": "Office",
            "emailAddress": "boxoffice@harbourside.example",
            "phoneNumber": "+442079460000",
        }
    )
    for index in SOLD_OUT_DEPARTURES:
        if index >= len(upcoming) or not upcoming[index].state.vacancies:
            continue
        item = upcoming[index]
        reservation = ReserveInput(
            product_id=product.id,
            option_id=item.option.id,
            availability_id=item.slot.id,
            unit_items=tuple(
                UnitItemInput(item.option.units[0].id) for _ in range(item.state.vacancies or 0)
            ),
            reseller_reference="BOX-OFFICE",
        )
        held = await services.bookings.reserve(catalog, box_office.id, reservation)
        confirmed = await services.bookings.confirm(
            catalog, box_office.id, held.booking.uuid, ConfirmInput(guest)
        )
        if confirmed.booking.status == "PENDING":
            await services.staff_bookings.accept(catalog, confirmed.booking.id, actor=DEMO_LOADER)


async def _seat_cruise_guests(services: Services) -> None:
    """Box office parties on tomorrow's first harbour cruise (once: not when it has some)."""
    box_office = await services.connections.ensure(*BOX_OFFICE)
    catalog = (await services.catalog.snapshot()).catalog
    product = catalog.product(SEATED_PRODUCT)
    if product is None:
        return
    tomorrow = services.clock().astimezone(ZoneInfo(product.time_zone)).date() + timedelta(days=1)
    option = product.default_option
    found = await services.staff_bookings.find(
        catalog,
        BookingFilter(
            connection_id=box_office.id, product_id=product.id, date_from=tomorrow, date_to=tomorrow
        ),
    )
    if found:
        return
    query = AvailabilityQuery(product_id=product.id, option_id=option.id, local_date=tomorrow)
    departures = await services.availability.check(catalog, query)
    if not departures:
        return
    for first_name, last_name, units in SEATED_PARTIES:
        reservation = ReserveInput(
            product_id=product.id,
            option_id=option.id,
            availability_id=departures[0].slot.id,
            unit_items=tuple(UnitItemInput(unit) for unit in units),
            reseller_reference="BOX-OFFICE",
        )
        try:
            held = await services.bookings.reserve(catalog, box_office.id, reservation)
        except OctoError:  # an edited demo catalogue whose boats cannot take the party
            return
        guest = Contact(values={"firstName": first_name, "lastName": last_name})
        await services.bookings.confirm(catalog, box_office.id, held.booking.uuid, ConfirmInput(guest))
