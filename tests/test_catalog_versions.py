"""Catalogue versions (issue 30): every save through any door is a version with who, when, the
door, a summary and the whole document; the admin API's list, documents and restore; a save
based on an older version refused with 409 CONFLICT naming the other change; `berth catalog
history` and `berth catalog restore`; and export then import changing nothing, for the demo and
for a catalogue with every capability."""

from __future__ import annotations

import re

import httpx
import yaml

from berth.container import Services
from berth.domain.catalog.document import catalog_to_yaml
from berth.domain.catalog_history import Door
from berth.domain.staff import COMMAND_LINE
from tests.berth_process import berth
from tests.bookings_helpers import booking_products
from tests.builders import catalog, load
from tests.conftest import ADMIN
from tests.extras_helpers import lunch_cruise
from tests.packages_helpers import city_pass
from tests.pickups_helpers import coach_tour
from tests.questions_helpers import sea_kayak
from tests.rentals_helpers import bike_hire
from tests.resources_helpers import resource_products


def cheaper(text: str) -> str:
    """The first price of the file one minor unit lower."""
    lowered = re.sub(r"retail: (\d+)", lambda m: f"retail: {int(m.group(1)) - 1}", text, count=1)
    assert lowered != text
    return lowered


def every_capability() -> object:
    return catalog(
        *booking_products(),
        bike_hire(),
        city_pass(),
        *resource_products(),
        coach_tour(),
        sea_kayak(),
        lunch_cruise(),
    )


async def round_trip(services: Services) -> None:
    """Export, then import what was exported: nothing changes, and the next export is the same."""
    before = await services.catalog.snapshot()
    exported = await services.catalog.export_text()
    dry = await services.catalog.import_text(exported, actor=COMMAND_LINE, dry_run=True)
    assert not dry.changes.changed
    saved = await services.catalog.import_text(exported, actor=COMMAND_LINE)
    assert not saved.changes.changed and saved.version == before.version + 1
    assert (await services.catalog.snapshot()).catalog == before.catalog
    assert await services.catalog.export_text() == exported


async def test_export_then_import_changes_nothing_for_the_demo(demo: Services) -> None:
    await round_trip(demo)


async def test_export_then_import_changes_nothing_with_every_capability(services: Services) -> None:
    built = every_capability()
    text = catalog_to_yaml(built)  # type: ignore[arg-type]
    for key in (
        "pickupPoints",
        "questions",
        "extras",
        "resourceGroups",
        "seatMap",
        "rentalDurations",
        "packageIncludes",
        "includedTaxes",
        "content",
    ):
        assert f"{key}:" in text, key
    await load(services, built)  # type: ignore[arg-type]
    await round_trip(services)


async def test_every_door_makes_a_version_with_its_document(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load(services, every_capability())  # type: ignore[arg-type]
    exported = await client.get("/admin/api/catalog", headers=ADMIN)
    first = int(exported.headers["Catalog-Version"])
    lowered = cheaper(exported.text)
    assert lowered != exported.text
    put = await client.put(
        "/admin/api/catalog", params={"baseVersion": first}, content=lowered.encode(), headers=ADMIN
    )
    assert put.status_code == 200, put.text
    assert (put.json()["version"], put.json()["baseVersion"]) == (first + 1, first)

    listed = (await client.get("/admin/api/catalog/versions", headers=ADMIN)).json()
    assert [v["version"] for v in listed] == [first + 1, first]
    newest = listed[0]
    assert (newest["actor"], newest["actorRole"], newest["door"]) == ("BERTH_ADMIN_TOKEN", "admin", "api")
    assert "prices" in newest["summary"] and newest["createdAt"].endswith("+00:00")
    assert listed[1]["door"] == "setup"
    document = await client.get(f"/admin/api/catalog/versions/{first + 1}", headers=ADMIN)
    assert document.headers["content-type"].startswith("application/yaml")
    assert yaml.safe_load(document.text) == yaml.safe_load(lowered)
    missing = await client.get("/admin/api/catalog/versions/999", headers=ADMIN)
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"

    # The audit entry names the version it made.
    audit = (await client.get("/admin/api/audit", params={"action": "catalog.import"}, headers=ADMIN)).json()
    entry = audit["entries"][0]
    assert entry["details"]["version"] == first + 1 and entry["details"]["door"] == "api"


async def test_a_save_based_on_an_older_version_is_a_conflict(
    client: httpx.AsyncClient, services: Services
) -> None:
    await load(services, every_capability())  # type: ignore[arg-type]
    exported = await client.get("/admin/api/catalog", headers=ADMIN)
    base = int(exported.headers["Catalog-Version"])
    first = cheaper(exported.text)
    second = exported.text.replace("internalName: Thames Sightseeing", "internalName: Cruise", 1)
    assert second != exported.text
    ok = await client.put(
        "/admin/api/catalog", params={"baseVersion": base}, content=first.encode(), headers=ADMIN
    )
    assert ok.status_code == 200, ok.text
    late = await client.put(
        "/admin/api/catalog", params={"baseVersion": base}, content=second.encode(), headers=ADMIN
    )
    assert late.status_code == 409
    body = late.json()
    assert body["error"] == "CONFLICT"
    assert (body["baseVersion"], body["currentVersion"]) == (base, base + 1)
    assert any(
        line.startswith("Changed unit thames-sightseeing/") and "prices" in line
        for line in body["changedSince"]
    )
    assert "version 2 was saved by BERTH_ADMIN_TOKEN (api)" in body["errorMessage"].replace(
        str(base + 1), "2"
    )
    assert (await services.catalog.snapshot()).version == base + 1  # nothing saved
    future = await client.put(
        "/admin/api/catalog", params={"baseVersion": 99}, content=second.encode(), headers=ADMIN
    )
    assert future.status_code == 400 and "is not a version of the catalogue" in future.json()["errorMessage"]


async def test_restore_through_the_admin_api(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, every_capability())  # type: ignore[arg-type]
    first = (await services.catalog.snapshot()).version
    exported = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    await client.put(
        "/admin/api/catalog",
        content=cheaper(exported).encode(),
        headers=ADMIN,
    )
    dry = await client.post(
        f"/admin/api/catalog/versions/{first}/restore", params={"dryRun": "true"}, headers=ADMIN
    )
    assert dry.status_code == 200 and dry.json()["imported"] is False
    assert [c["fields"] for c in dry.json()["changes"]] == [["prices"]]
    done = await client.post(f"/admin/api/catalog/versions/{first}/restore", headers=ADMIN)
    assert done.status_code == 200 and done.json()["version"] == first + 2
    assert await services.catalog.export_text() == exported
    newest = (await services.catalog.versions(limit=1))[0]
    assert newest.door is Door.API and newest.summary.startswith(f"Restored version {first}: ")


async def test_history_and_restore_on_the_command_line(database_url: str) -> None:
    assert berth("demo", database_url=database_url).returncode == 0
    exported = berth("catalog", "export", database_url=database_url).stdout
    history = berth("catalog", "history", database_url=database_url, COLUMNS="200")
    assert history.returncode == 0, history.stderr
    assert "setup" in history.stdout and "Added product" in history.stdout
    first = int(history.stdout.split("\n")[1].split()[0])
    restored = berth("catalog", "restore", str(first), "--dry-run", database_url=database_url)
    assert restored.returncode == 0, restored.stderr
    assert (
        "Dry run of version" in restored.stdout
        and "No changes: the file is the catalogue as stored." in restored.stdout
    )
    done = berth("catalog", "restore", str(first), database_url=database_url)
    assert done.returncode == 0, done.stderr
    assert "Restored" in done.stdout and f"catalogue version {first + 1}." in done.stdout
    assert berth("catalog", "export", database_url=database_url).stdout == exported
    after = berth("catalog", "history", database_url=database_url, COLUMNS="200").stdout
    assert "cli" in after and f"Restored version {first}: No change" in after
    missing = berth("catalog", "restore", "999", database_url=database_url)
    assert missing.returncode != 0 and "no version 999" in (missing.stderr + missing.stdout)


async def test_version_numbers_beyond_the_database_name_no_version(client: httpx.AsyncClient) -> None:
    """Found by the fuzzer on PostgreSQL: a version number past 32 bits answered 500."""
    huge = 97176737406663424
    for answer in (
        await client.get(f"/admin/api/catalog/versions/{huge}", headers=ADMIN),
        await client.post(f"/admin/api/catalog/versions/{huge}/restore", headers=ADMIN),
        await client.post(f"/admin/api/catalog/versions/{-huge}/restore", headers=ADMIN),
    ):
        assert answer.status_code == 404, answer.text
    listed = await client.get("/admin/api/catalog/versions", params={"before": huge}, headers=ADMIN)
    assert listed.status_code == 200
    assert (
        await client.get("/admin/api/catalog/versions", params={"before": -huge}, headers=ADMIN)
    ).json() == []
