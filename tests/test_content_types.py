"""Content fields with the types OCTO core gives them (issue 17): each pinned on its own, on
the booking tests' products with the content of the `described` fixture.
tests/test_octo_core_conformance.py checks whole answers against the core document."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from berth.container import Services
from berth.domain.catalog import CategoryLabel, Product
from berth.store.database import Database
from berth.store.migrate import downgrade, upgrade
from berth.store.tables import products
from tests.bookings_helpers import GUEST, SLOT, booking_products, reservation, reserve
from tests.builders import catalog, load
from tests.conftest import ADMIN, auth
from tests.octo_core import document
from tests.test_catalog_import import MINIMAL

CONTENT = "octo/content"
WITH_LABELS = MINIMAL.replace(
    "    options:",
    "    content:\n      en-GB:\n        title: City walk\n        categoryLabels: [{labels}]\n    options:",
)


@pytest.fixture
async def described(services: Services) -> Services:
    """The cruise's daytime adult described, its evening adult not; the kayak trip labelled."""
    cruise, kayak, museum = booking_products()
    cruise["options"][0]["units"][0]["content"] = {
        "en-GB": {"title": "Adult", "shortDescription": "Ages 16 and over"}
    }
    kayak["content"] = {"en-GB": {"title": "Sunset kayak", "categoryLabels": ["outdoors"]}}
    return await load(services, catalog(cruise, kayak, museum))


async def test_unit_short_description_is_a_string(client: httpx.AsyncClient, described: Services) -> None:
    """Core types a unit's shortDescription as a string (never null): "" when none is written."""
    tour = (await client.get("/octo/products/thames-sightseeing", headers=auth(capabilities=CONTENT))).json()
    adult = tour["options"][0]["units"][0]
    evening_adult = tour["options"][1]["units"][0]  # the catalogue gives it no description
    assert adult["shortDescription"] == "Ages 16 and over"
    assert evening_adult["shortDescription"] == ""
    booking = await reserve(
        client,
        reservation(("adult",), "2026-06-04T19:30:00+01:00", optionId="evening"),
        capabilities=CONTENT,
    )
    assert booking["unitItems"][0]["unit"]["shortDescription"] == ""
    assert booking["option"]["units"][0]["shortDescription"] == ""


def test_category_labels_are_the_core_list() -> None:
    core = document()["components"]["schemas"]["CategoryLabel"]["enum"]
    assert [label.value for label in CategoryLabel] == core


async def test_import_refuses_a_label_outside_the_core_list(
    client: httpx.AsyncClient, described: Services
) -> None:
    before = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    response = await client.put(
        "/admin/api/catalog",
        content=WITH_LABELS.format(labels="museums, sightseeing").encode(),
        headers=ADMIN,
    )
    assert response.status_code == 400
    [problem] = response.json()["problems"]
    assert problem["path"] == "products[0].content.en-GB.categoryLabels[1]"
    assert problem["message"].startswith(
        "'sightseeing' is not an OCTO category label; use one of: multi-day, city-cards, adults-only,"
    )
    assert problem["message"].endswith("trip-difficulty-medium, trip-difficulty-hard")
    assert (await client.get("/admin/api/catalog", headers=ADMIN)).text == before


async def test_every_core_label_can_be_expressed(client: httpx.AsyncClient, described: Services) -> None:
    core = document()["components"]["schemas"]["CategoryLabel"]["enum"]
    response = await client.put(
        "/admin/api/catalog",
        content=WITH_LABELS.format(labels=", ".join(core)).encode(),
        headers=ADMIN,
    )
    assert response.status_code == 200, response.text
    walk = (await client.get("/octo/products/walk", headers=auth(capabilities=CONTENT))).json()
    assert walk["categoryLabels"] == core


async def test_stored_catalogues_keep_loading_after_upgrade(described: Services) -> None:
    """A database written before the core list (Berth's own labels) is migrated: each label
    becomes its nearest core label, or is dropped when none is near."""
    database = Database(described.settings.database_url)
    try:
        async with database.transaction(write=True) as conn:
            document_ = await conn.scalar(select(products.c.document).where(products.c.id == "sunset-kayak"))
            document_["content"]["en-GB"]["categoryLabels"] = [
                "water-activities", "adventure", "culture-and-history", "skip-the-line", "luxury"
            ]  # fmt: skip
            await conn.execute(
                update(products).where(products.c.id == "sunset-kayak").values(document=document_)
            )
        await downgrade(database, "0010")
        await upgrade(database)
        async with database.transaction(write=False) as conn:
            stored = await conn.scalar(select(products.c.document).where(products.c.id == "sunset-kayak"))
    finally:
        await database.dispose()
    assert stored["content"]["en-GB"]["categoryLabels"] == ["outdoors", "history", "fast-track"]
    assert Product.model_validate(stored).content["en-GB"].category_labels == (
        CategoryLabel.OUTDOORS, CategoryLabel.HISTORY, CategoryLabel.FAST_TRACK
    )  # fmt: skip


async def test_availability_has_content_fields_under_octo_content(
    client: httpx.AsyncClient, described: Services
) -> None:
    """Core: availability `title` (string or null) and `shortDescription` (string) with
    octo/content; Berth has no per-departure content, so null and ""."""
    body = {"productId": "thames-sightseeing", "optionId": "DEFAULT", "availabilityIds": [SLOT]}
    [with_content] = (
        await client.post("/octo/availability", json=body, headers=auth(capabilities=CONTENT))
    ).json()
    assert with_content["title"] is None and with_content["shortDescription"] == ""
    [plain] = (await client.post("/octo/availability", json=body, headers=auth())).json()
    assert "title" not in plain and "shortDescription" not in plain
    booking = await reserve(client, reservation(), capabilities=CONTENT)
    assert booking["availability"]["title"] is None and booking["availability"]["shortDescription"] == ""


async def contacts(client: httpx.AsyncClient, contact: dict[str, Any]) -> list[Any]:
    held = await reserve(client, reservation())
    response = await client.post(
        f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=auth()
    )
    assert response.status_code == 200, response.text
    body = response.json()
    return [
        body["contact"]["allowMarketing"],
        *(item["contact"]["allowMarketing"] for item in body["unitItems"]),
    ]


async def test_allow_marketing_is_a_boolean(client: httpx.AsyncClient, described: Services) -> None:
    """An optional boolean in the OCTO types, never null: not given means no consent."""
    assert await contacts(client, GUEST) == [False, False, False]
    assert await contacts(client, {**GUEST, "allowMarketing": True}) == [True, False, False]
    held = await reserve(client, reservation())
    assert held["contact"]["allowMarketing"] is False
