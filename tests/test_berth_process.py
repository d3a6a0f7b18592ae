"""The `berth` commands the tests fork from the fork server behave as fresh `berth` processes:
same output, same exit status, the command's own environment, and a timeout that kills it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.berth_process import berth, forking

pytestmark = pytest.mark.skipif(not forking(), reason="no fork server here (BERTH_TEST_FORK=0, or not Linux)")


@pytest.mark.parametrize(
    "command",
    [["--help"], ["staff", "list"], ["connection", "frobnicate"]],
    ids=["help", "no-database", "usage-error"],
)
def test_a_forked_command_says_what_a_fresh_one_says(command: list[str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'berth.db'}"
    forked = berth(*command, database_url=url, COLUMNS="100")
    fresh = berth(*command, database_url=url, COLUMNS="100", fresh=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.stdout or forked.stderr


def test_a_forked_command_has_its_own_environment_and_process(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'berth.db'}"
    assert berth("db", "upgrade", database_url=url).returncode == 0
    broken = berth("staff", "list", database_url=url, BERTH_AUTH_CACHE_SECONDS="soon")
    assert broken.returncode == 1 and "BERTH_AUTH_CACHE_SECONDS" in broken.stderr, broken.stderr
    assert berth("staff", "list", database_url=url).returncode == 0  # the last one's setting is gone
    assert "BERTH_AUTH_CACHE_SECONDS" not in os.environ


def test_a_forked_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'berth.db'}"
    assert berth("db", "upgrade", database_url=url).returncode == 0
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        berth("worker", database_url=url, timeout=3)
    assert time.monotonic() - started < 30
    assert b"Berth worker running" in (expired.value.output or b"")
