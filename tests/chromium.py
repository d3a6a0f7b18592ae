"""Debian's chromium, which the browser tests (marked `browser`) drive through Playwright.

A browser test on a machine without it fails, saying what is missing, unless the run was told
to go without browsers (`BERTH_TEST_SKIP_BROWSER=1`): a browser test must never be skipped
without a word (CI never sets it). `BERTH_TEST_CHROMIUM` names another chromium binary."""

from __future__ import annotations

import os
from pathlib import Path

CHROMIUM = Path(os.environ.get("BERTH_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SKIP_VARIABLE = "BERTH_TEST_SKIP_BROWSER"
MISSING = (
    f"Debian's chromium is not installed at {CHROMIUM}: `apt-get install chromium` as root "
    "(`python3 dev.py test` does it when it runs as root); to run the suite without the "
    f"browser tests knowingly, set {SKIP_VARIABLE}=1"
)


def browsers_may_be_skipped() -> bool:
    return os.environ.get(SKIP_VARIABLE) == "1"
