"""A browser test on a machine without chromium fails and says what is missing; it is skipped only
when the run was told to go without browsers (tests/chromium.py, dev.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A browser test whose module starts nothing before its first test.
BROWSER_TEST = "tests/test_booking_lines.py::test_the_scanner_page_shows_a_registered_capabilitys_lines"


def _run(**environment: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("BERTH_TEST_")}
    env.update(BERTH_TEST_CHROMIUM="/nonexistent/chromium", **environment)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rfEs",
            BROWSER_TEST,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_browser_test_without_chromium_fails_saying_what_is_missing() -> None:
    run = _run()
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 error" in run.stdout, run.stdout  # at setup: nothing of the test ran
    assert "Debian's chromium is not installed at /nonexistent/chromium" in run.stdout
    assert "apt-get install chromium" in run.stdout


def test_it_is_skipped_only_when_the_run_says_so() -> None:
    run = _run(BERTH_TEST_SKIP_BROWSER="1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout and "Debian's chromium is not installed" in run.stdout, run.stdout


def test_dev_py_stops_before_the_tests_when_chromium_cannot_be_had() -> None:
    """dev.py installs chromium with apt-get where it may; where it cannot (not root here, by an
    empty PATH for apt-get), it stops and says what is missing instead of starting the suite."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("BERTH_TEST_")}
    env.update(BERTH_TEST_CHROMIUM="/nonexistent/chromium", PATH="/nonexistent")
    run = subprocess.run(
        [sys.executable, "dev.py", "test", "--collect-only", "-q"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Debian's chromium is missing at /nonexistent/chromium" in run.stderr, run.stderr


def test_in_ci_a_skipped_test_fails_the_run() -> None:
    """`.ci/run` sets BERTH_TEST_NO_SKIP=1: even a skip the run asked for is a failure there."""
    run = _run(BERTH_TEST_SKIP_BROWSER="1", BERTH_TEST_NO_SKIP="1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 error" in run.stdout, run.stdout  # skipped at setup
    assert "a skipped test fails CI (BERTH_TEST_NO_SKIP=1)" in run.stdout, run.stdout


def test_every_test_module_that_drives_a_browser_marks_its_tests() -> None:
    """A browser test without the `browser` mark would meet a missing chromium unannounced:
    every test module that imports Playwright carries the mark."""
    unmarked = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("test_*.py")
        if "playwright" in (text := path.read_text(encoding="utf-8")) and "pytest.mark.browser" not in text
    ]
    assert unmarked == []
