"""docs/settings.md is the Settings class, written out: nothing missing, nothing stale."""

from __future__ import annotations

from pathlib import Path

from berth.settings import Settings
from berth.settings_reference import settings_reference, undocumented

DOC = Path(__file__).resolve().parent.parent / "docs" / "settings.md"


def test_every_setting_says_what_it_does() -> None:
    assert undocumented() == []


def test_the_reference_is_the_settings_class() -> None:
    written = DOC.read_text(encoding="utf-8")
    assert written == settings_reference(), "run: .venv/bin/python scripts/settings_reference.py"
    for name in Settings.model_fields:
        assert f"`BERTH_{name.upper()}`" in written
