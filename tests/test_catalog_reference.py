"""docs/catalog.md is the catalogue model, written out: every key of every part of the file,
nothing stale; and the catalogue `berth catalog new` writes is one that imports."""

from __future__ import annotations

import os
import re
from pathlib import Path

from berth.capabilities.registry import CATALOG_RULES
from berth.catalog_reference import catalog_reference
from berth.demo.loader import demo_catalog_text, starter_catalog_text
from berth.domain.catalog.document import parse_catalog
from tests.berth_process import run_berth

DOC = Path(__file__).resolve().parent.parent / "docs" / "catalog.md"


def test_the_reference_is_the_catalogue_model() -> None:
    written = DOC.read_text(encoding="utf-8")
    assert written == catalog_reference(), "run: .venv/bin/python scripts/catalog_reference.py"


def keys_used(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(map(str, value)) | {key for item in value.values() for key in keys_used(item)}
    if isinstance(value, list):
        return {key for item in value for key in keys_used(item)}
    return set()


def test_every_key_of_the_demo_catalogue_is_in_the_reference() -> None:
    import yaml

    documented = set(re.findall(r"^\| `([A-Za-z]+)` \|", DOC.read_text(encoding="utf-8"), re.M))
    data = yaml.safe_load(demo_catalog_text())
    language_tags = {key for key in keys_used(data) if re.fullmatch(r"[a-z]{2}-[A-Z]{2}", key)}
    assert keys_used(data) - language_tags <= documented, sorted(keys_used(data) - language_tags - documented)


def test_the_starting_catalogue_is_valid(tmp_path: Path) -> None:
    catalog = parse_catalog(starter_catalog_text(), CATALOG_RULES)
    assert [p.id for p in catalog.products] == ["harbour-tour"]
    written = tmp_path / "catalog.yaml"
    run = run_berth(["catalog", "new", str(written)], os.environ)
    assert run.returncode == 0, run.stderr
    assert f"Wrote a starting catalogue to {written}" in " ".join(run.stdout.split())
    assert written.read_text(encoding="utf-8") == starter_catalog_text()
    assert "#" in written.read_text(encoding="utf-8")  # commented, as a starting point
    again = run_berth(["catalog", "new", str(written)], os.environ)
    assert again.returncode == 1 and "already exists; nothing was written" in again.stderr
