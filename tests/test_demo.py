"""The shipped demo as a product: what `berth serve --demo` must offer a reseller trying Berth,
or certifying it with the OCTO validator. Other tests state the data they depend on
(tests/builders.py and the *_helpers modules); tests/test_octo_core_conformance.py validates
the demo's answers against the OCTO core document.)"""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.demo.loader import SOLD_OUT_PRODUCT, demo_catalog_text, load_demo
from berth.domain.catalog import AvailabilityType
from berth.domain.catalog.document import catalog_to_yaml, parse_catalog
from berth.domain.catalog_history import Door
from berth.domain.staff import COMMAND_LINE
from tests.conftest import ADMIN, KEY_A, KEY_B, auth
from tests.octo_core import document
from tests.test_mappings import listed, put, refs, row

# A conformance run holds about 130 places of one departure of the first START_TIME product
# (some 15 holds of up to 10 adults) and never releases them.
CONFORMANCE_HOLDS = 15
CONFORMANCE_PARTY = 10


def test_the_first_start_time_product_carries_a_conformance_run() -> None:
    catalog = parse_catalog(demo_catalog_text(), CATALOG_RULES)
    first = next(p for p in catalog.products if p.availability_type is AvailabilityType.START_TIME)
    option = first.default_option
    assert option.schedules
    for schedule in option.schedules:
        assert schedule.capacity is not None and schedule.capacity >= 150
    assert option.restrictions.max_units is None or option.restrictions.max_units >= CONFORMANCE_PARTY


async def test_a_conformance_run_fits_one_departure_and_sold_out_is_still_shown(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load_demo(services)
    products = (await client.get("/octo/products", headers=auth())).json()
    first = next(p for p in products if p["availabilityType"] == "START_TIME")
    option = next(o for o in first["options"] if o["default"])
    adult = next(u for u in option["units"] if u["type"] == "ADULT")
    selector = {"productId": first["id"], "optionId": option["id"]}
    today = services.clock().date()
    start, end = today.isoformat(), (today + timedelta(days=27)).isoformat()
    window = {**selector, "localDateStart": start, "localDateEnd": end}
    slots = (await client.post("/octo/availability", json=window, headers=auth())).json()
    departure = next(s for s in slots if s["available"])
    for _ in range(CONFORMANCE_HOLDS):
        body = {
            "uuid": str(uuid.uuid4()),
            **selector,
            "availabilityId": departure["id"],
            "unitItems": [{"unitId": adult["id"]}] * CONFORMANCE_PARTY,
        }
        response = await client.post("/octo/bookings", json=body, headers=auth())
        assert response.status_code == 200, response.text
    after = (await client.post("/octo/availability", json={**selector, "availabilityIds": [departure["id"]]},
                               headers=auth())).json()[0]  # fmt: skip
    assert (
        after["available"]
        and after["vacancies"] == departure["vacancies"] - CONFORMANCE_HOLDS * CONFORMANCE_PARTY
    )
    # A small product keeps showing sold-out departures.
    kayak = {"productId": SOLD_OUT_PRODUCT, "optionId": "DEFAULT", "localDateStart": start,
             "localDateEnd": end}  # fmt: skip
    kayak_slots = (await client.post("/octo/availability", json=kayak, headers=auth())).json()
    assert any(s["status"] == "SOLD_OUT" for s in kayak_slots)


async def test_demo_mapping_rows_are_loaded_once(client: httpx.AsyncClient, demo: Services) -> None:
    """Reseller A's demo rows, two of them mapped without notifying the example URL."""
    rows = await listed(client, KEY_A)
    assert [(r["resellerReference"], r["productId"], r["optionId"], r["unitId"]) for r in rows] == [
        ("RA-THAMES-DAY", "thames-sightseeing", "DEFAULT", None),
        ("RA-THAMES-EVENING-ADULT", "thames-sightseeing", "evening", "adult"),
        ("RA-MUSEUM", None, None, None),
        ("RA-KAYAK-SUNSET", None, None, None),
    ]
    await load_demo(demo)
    assert await listed(client, KEY_A) == rows
    assert (await client.get("/admin/api/deliveries", headers=ADMIN)).json()["total"] == 0
    await put(client, [row("MINE")], key=KEY_A)
    await load_demo(demo)  # what someone uploaded while trying the demo stays
    assert refs(await listed(client, KEY_A)) == ["MINE"]


async def test_demo_category_labels_are_core_labels(client: httpx.AsyncClient, demo: Services) -> None:
    listed = (await client.get("/octo/products", headers=auth(capabilities="octo/content"))).json()
    labels = {p["id"]: p["categoryLabels"] for p in listed}
    assert labels["thames-sightseeing"] == ["boat-tours", "guided-tours", "family-friendly"]
    assert labels["harbour-city-pass"] == ["city-cards", "boat-tours", "museums"]
    core = set(document()["components"]["schemas"]["CategoryLabel"]["enum"])
    assert all(set(found) <= core for found in labels.values())


def test_demo_catalogue_round_trips_through_export() -> None:
    catalog = parse_catalog(demo_catalog_text(), CATALOG_RULES)
    assert parse_catalog(catalog_to_yaml(catalog), CATALOG_RULES) == catalog


async def test_demo_load_is_idempotent(demo: Services) -> None:
    from berth.store.bookings_reads import BookingFilter

    version = (await demo.catalog.snapshot()).version
    catalog = (await demo.catalog.snapshot()).catalog
    bookings_before = await demo.staff_bookings.search(catalog, BookingFilter(), 100, 0)
    await load_demo(demo)
    assert (await demo.catalog.snapshot()).version == version
    assert len(await demo.connections.list()) == 4  # two resellers, the box office and the web shop
    assert await demo.staff_bookings.search(catalog, BookingFilter(), 100, 0) == bookings_before


async def test_demo_kayak_is_sold_out_on_some_upcoming_departures(
    client: httpx.AsyncClient, demo: Services
) -> None:
    body = {
        "productId": "sunset-kayak",
        "optionId": "DEFAULT",
        "localDateStart": "2026-06-02",
        "localDateEnd": "2026-06-29",
    }
    slots = (await client.post("/octo/availability", json=body, headers=auth())).json()
    open_slots = [s for s in slots if s["status"] != "CLOSED"]
    assert [s["status"] for s in open_slots[:6]] == [
        "SOLD_OUT",
        "SOLD_OUT",
        "AVAILABLE",
        "AVAILABLE",
        "AVAILABLE",
        "SOLD_OUT",
    ]
    assert all(s["vacancies"] == 0 and s["capacity"] == 6 for s in open_slots if s["status"] == "SOLD_OUT")


def test_demo_uses_pickups_questions_and_extras() -> None:
    """The coach tour collects its guests and asks and sells; the kayak safari asks for a waiver
    and swimmers; the daytime cruise sells a lunch box from a stock per departure."""
    catalog = parse_catalog(demo_catalog_text(), CATALOG_RULES)
    coach = catalog.product("white-cliffs-coach")
    kayak = catalog.product("coastal-kayak")
    cruise = catalog.product("thames-sightseeing")
    assert coach is not None and kayak is not None and cruise is not None
    tour = coach.default_option
    assert tour.pickup_required and len(tour.pickup_points) == 3
    assert [q.required for q in tour.questions] == [True] and [e.stock for e in tour.extras] == [20]
    assert {q.internal_name for q in kayak.questions} == {"waiver"}
    assert [q.title for q in kayak.default_option.questions] == ["Can everyone in the party swim 50 metres?"]
    assert [(e.id, e.per_unit, e.stock) for e in cruise.default_option.extras] == [("lunch-box", True, 40)]


async def test_demo_reseller_b_holds_a_block_on_the_ten_oclock_cruises(
    client: httpx.AsyncClient, demo: Services
) -> None:
    """Ten places of every 10:00 Thames cruise are B's until 48 hours before it: tomorrow's
    block is already released, the one in three days is not."""
    today = demo.clock().date()

    async def vacancies(key: str, days: int, hour: str = "10:00") -> int:
        day = (today + timedelta(days=days)).isoformat()
        body = {"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": day}
        slots = (await client.post("/octo/availability", json=body, headers=auth(key))).json()
        found: int = next(s for s in slots if s["localDateTimeStart"][11:16] == hour)["vacancies"]
        return found

    assert await vacancies(KEY_B, 3) == await vacancies(KEY_A, 3) + 10
    assert await vacancies(KEY_B, 1) == await vacancies(KEY_A, 1)
    assert await vacancies(KEY_B, 3, "12:00") == await vacancies(KEY_A, 3, "12:00")


async def test_loading_the_demo_again_keeps_a_catalogue_staff_changed(demo: Services) -> None:
    """Restarting `berth serve --demo` loads the demo again: a catalogue edited since (here
    through the admin API: a new title) stays as staff left it, and gets no new version."""
    edited = demo_catalog_text().replace("title: Thames Sightseeing Cruise", "title: Our own cruise", 1)
    assert edited != demo_catalog_text()
    outcome = await demo.catalog.import_text(edited, actor=COMMAND_LINE, door=Door.API)
    await load_demo(demo)
    snapshot = await demo.catalog.snapshot()
    assert snapshot.version == outcome.version
    cruise = snapshot.catalog.product("thames-sightseeing")
    assert cruise is not None and cruise.content["en-GB"].title == "Our own cruise"


async def test_the_demos_own_catalogue_is_brought_up_to_date(demo: Services) -> None:
    """A catalogue the demo loader wrote (or, before it signed its versions, the setup door as the
    command line) is the demo's own: a newer demo catalogue replaces it."""
    catalog = (await demo.catalog.snapshot()).catalog
    older = catalog.model_copy(update={"products": catalog.products[1:]})
    await demo.catalog.replace(older)  # as the demo loader wrote it before
    await load_demo(demo)
    assert (await demo.catalog.snapshot()).catalog == catalog
    assert (await demo.catalog.versions(limit=1))[0].actor == "demo loader"
