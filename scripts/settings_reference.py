"""Rewrite docs/settings.md from the Settings class: `.venv/bin/python scripts/settings_reference.py`."""

from __future__ import annotations

from pathlib import Path

from berth.settings_reference import settings_reference, undocumented

if __name__ == "__main__":
    missing = undocumented()
    if missing:
        raise SystemExit("Settings without a description: " + ", ".join(missing))
    target = Path(__file__).resolve().parent.parent / "docs" / "settings.md"
    target.write_text(settings_reference(), encoding="utf-8")
    print(f"wrote {target}")
