"""Rewrite docs/catalog.md from the catalogue model: `.venv/bin/python scripts/catalog_reference.py`."""

from __future__ import annotations

from pathlib import Path

from berth.catalog_reference import catalog_reference

if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "docs" / "catalog.md"
    target.write_text(catalog_reference(), encoding="utf-8")
    print(f"wrote {target}")
