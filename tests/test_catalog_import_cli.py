"""`berth catalog import`, run as the installed `berth` command against a real database: every
problem at once, `--dry-run`, and live bookings in the way unless `--force` (issue 18).

The command runs on the real clock, so the database is prepared with `berth demo`, whose box
office seats three parties on tomorrow's first harbour cruise."""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from berth.container import build_services
from berth.domain.bookings import Booking
from berth.domain.catalog.document import ALIASES_REFUSED, MAX_DEPTH
from berth.settings import Settings
from berth.store.bookings_reads import BookingFilter
from tests.berth_process import run_berth
from tests.test_sale_keeps_its_price import _halved
from tests.test_yaml_aliases import TEN_BY_TEN


def berth(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_berth(args, environment, timeout=300)


@pytest.fixture
async def environment(database_url: str) -> AsyncIterator[dict[str, str]]:
    env = {**os.environ, "BERTH_DATABASE_URL": database_url, "BERTH_LOG_LEVEL": "WARNING", "COLUMNS": "80"}
    loaded = berth(env, "demo")
    assert loaded.returncode == 0, loaded.stderr
    yield env


async def seated(database_url: str) -> list[Booking]:
    services = build_services(Settings(database_url=database_url, log_level="WARNING"))
    try:
        catalog = (await services.catalog.snapshot()).catalog
        found = await services.staff_bookings.find(catalog, BookingFilter(product_id="harbour-cruise"))
        return [details.booking for details in found]
    finally:
        await services.close()


def exported(environment: dict[str, str]) -> str:
    result = berth(environment, "catalog", "export")
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_removing_a_product_with_live_bookings_needs_force(
    environment: dict[str, str], database_url: str, tmp_path: Path
) -> None:
    stored = exported(environment)
    file = tmp_path / "catalog.yaml"
    file.write_text(
        stored[: stored.index("- id: harbour-cruise")] + stored[stored.index("- id: river-rib") :]
    )
    guests = await seated(database_url)
    assert len(guests) == 3
    departure = guests[0].availability_id
    assert departure is not None and all(b.availability_id == departure for b in guests)

    refused = berth(environment, "catalog", "import", str(file))
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[:2] == [
        f"{file}: refused: it removes or shrinks what 3 live booking(s) hold; nothing was imported.",
        f"  harbour-cruise/DEFAULT {departure}: product 'harbour-cruise' is removed",
    ]
    for booking in guests:
        assert (
            f"    {booking.supplier_reference} (CONFIRMED, {booking.pax} places, reseller reference BOX-OFFICE)"
            in (refused.stderr.splitlines())
        )
    assert refused.stderr.splitlines()[-1] == (
        "See everything it changes with --dry-run; import it anyway with --force."
    )
    assert exported(environment) == stored

    dry = berth(environment, "catalog", "import", str(file), "--dry-run")
    assert dry.returncode == 1, dry.stderr  # the import itself would be refused
    lines = dry.stdout.splitlines()
    assert lines[:3] == [
        f"Dry run of {file}: nothing was imported.",
        "Products, options and units:",
        "  - removed product harbour-cruise",
    ]
    assert "Live bookings in the way (3):" in lines
    assert (
        lines[-1]
        == "Without --force this import is refused: it removes or shrinks what 3 live booking(s) hold."
    )
    assert berth(environment, "catalog", "import", str(file), "--dry-run", "--force").returncode == 0
    assert exported(environment) == stored

    forced = berth(environment, "catalog", "import", str(file), "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == "Imported over 3 live booking(s) (--force):"
    assert forced.stdout.splitlines()[-1].startswith("Imported 8 product(s) into the ")
    assert "harbour-cruise" not in exported(environment)


async def test_dry_run_of_lower_capacity_lists_the_departures(
    environment: dict[str, str], tmp_path: Path
) -> None:
    stored = exported(environment)
    file = tmp_path / "catalog.yaml"
    lowered = stored.replace(
        "      - '16:00'\n      capacity: 200", "      - '16:00'\n      capacity: 150", 1
    )
    assert lowered != stored
    file.write_text(lowered)
    dry = berth(environment, "catalog", "import", "--dry-run", str(file))
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[1:3] == [
        "Products, options and units:",
        "  ~ changed option thames-sightseeing/DEFAULT (schedules): schedules 1 capacity 200 -> 150",
    ]
    assert lines[3].startswith("Departures losing places, today to ")
    assert lines[4].startswith("  thames-sightseeing/DEFAULT ") and lines[4].endswith(
        ": 200 -> 150 places (capacity lowered)"
    )
    assert "(the admin API's dry run lists every one)" in lines[-1]
    assert exported(environment) == stored
    imported = berth(environment, "catalog", "import", str(file))
    assert imported.returncode == 0, imported.stderr
    assert "capacity: 150" in exported(environment)


def test_every_problem_of_a_file_at_once(environment: dict[str, str], tmp_path: Path) -> None:
    stored = exported(environment)
    broken = stored.replace(
        "  internalName: Tower of Stories museum", "  internalName: Tower\n  colour: red", 1
    )
    broken = broken.replace("- id: river-rib", "- id: harbour-cruise", 1)
    file = tmp_path / "broken.yaml"
    file.write_text(broken)
    result = berth(environment, "catalog", "import", str(file), "--dry-run")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    colour = broken[: broken.index("colour: red")].count("\n") + 1
    duplicate = (
        broken[: broken.index("- id: harbour-cruise", broken.index("- id: harbour-cruise") + 1)].count("\n")
        + 1
    )
    assert lines == [
        f"{file}: 2 problem(s); nothing was imported",
        f"  {file}:line {colour}: products[1].colour: is not a known field",
        f"  {file}:line {duplicate}: products[6].id: duplicate product id 'harbour-cruise'",
    ]
    assert exported(environment) == stored


def test_a_file_nested_too_deep_is_a_problem(environment: dict[str, str], tmp_path: Path) -> None:
    """It was PyYAML's RecursionError: a traceback and exit code 1 without a word of what was wrong."""
    file = tmp_path / "deep.yaml"
    file.write_text("supplier: " + "[" * 5000 + "]" * 5000 + "\n")
    result = berth(environment, "catalog", "import", str(file))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{file}: 1 problem(s); nothing was imported",
        f"  {file}:line 1: (root): not valid YAML: nested deeper than {MAX_DEPTH} levels",
    ]


def test_anchors_and_aliases_are_a_problem(environment: dict[str, str], tmp_path: Path) -> None:
    """Issue 47: ten levels of ten aliases built out 10**10 values (MemoryError); the first
    anchor now stops `catalog import` and `connection contract set` alike, with nothing saved."""
    file = tmp_path / "aliases.yaml"
    file.write_text(TEN_BY_TEN)
    stored = exported(environment)
    result = berth(environment, "catalog", "import", str(file))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"{file}: 1 problem(s); nothing was imported",
        f"  {file}:line 1: (root): {ALIASES_REFUSED}",
    ]
    assert exported(environment) == stored
    contract = berth(environment, "connection", "contract", "set", "demo-reseller-a", str(file))
    assert contract.returncode == 1 and ALIASES_REFUSED in contract.stderr, contract.stderr


def test_lowering_a_retail_below_a_contract_net_needs_cap_nets(
    environment: dict[str, str], tmp_path: Path
) -> None:
    """Issue 47, finding 4: the demo's reseller B buys the cruise at 25 % below retail; halving
    the cruise's prices puts those nets above the retail. The dry run and the import list them;
    `--cap-nets` imports, and those nets are sold at the retail."""
    stored = exported(environment)
    document = yaml.safe_load(stored)
    document["products"] = [
        _halved(p) if p["id"] == "thames-sightseeing" else p for p in document["products"]
    ]
    file = tmp_path / "catalog.yaml"
    file.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    adult = (
        "  Demo reseller B: rate.netPrices[0].net: EUR 18.75 is above the retail EUR 12.50 of "
        "thames-sightseeing / DEFAULT / adult"
    )

    dry = berth(environment, "catalog", "import", str(file), "--dry-run")
    assert dry.returncode == 1, dry.stderr
    assert adult in dry.stdout.splitlines()
    assert dry.stdout.splitlines()[-1] == (
        "Without --cap-nets this import is refused: it puts 6 contract net(s) above the retail they apply to."
    )
    refused = berth(environment, "catalog", "import", str(file))
    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert lines[0] == (
        f"{file}: refused: it puts 6 contract net(s) above the retail they apply to; nothing was imported."
    )
    assert adult in lines
    assert lines[-1].startswith("Change those contracts first (lower the net, or allowAboveRetail: true)")
    assert exported(environment) == stored

    capped = berth(environment, "catalog", "import", str(file), "--cap-nets")
    assert capped.returncode == 0, capped.stderr
    assert "Contract nets now above the retail, sold at the retail (--cap-nets):" in capped.stdout
    assert adult in capped.stdout.splitlines()
