"""The operator's first day, with the real `berth` command: a command run where there is no Berth
database makes none, every writing command names the database it wrote to, a secret key that
cannot open the stored signing secrets stops a start, every process logs its start in the
configured format, and a busy port is one error line."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import time
from pathlib import Path
from typing import IO

import pytest
from pydantic import SecretStr

from berth import __version__
from berth.cli import startup_warnings
from berth.settings import Settings
from tests.berth_process import BERTH, berth, berth_environment, berth_serve, free_port

KEY_ONE = "first-secret-key-of-the-supplier-0123456789"
KEY_TWO = "second-secret-key-of-the-supplier-0123456789"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def one_line_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    assert lines[0].startswith("error: "), output
    return lines[0]


NOT_CREATING = [
    ["serve", "--port", "8399"],
    ["worker"],
    ["demo"],
    ["staff", "create", "ana@example.com", "--role", "admin"],
    ["staff", "list"],
    ["connection", "create", "Ticket Hub"],
    ["connection", "list"],
    ["catalog", "export"],
]


def test_commands_other_than_db_upgrade_make_no_database(tmp_path: Path) -> None:
    path = tmp_path / "berth.db"
    catalog = tmp_path / "catalog.yaml"
    assert berth("catalog", "new", str(catalog), database_url=sqlite_url(path)).returncode == 0
    for command in [*NOT_CREATING, ["catalog", "import", str(catalog)]]:
        run = berth(*command, database_url=sqlite_url(path))
        assert run.returncode == 1, (command, run.stdout, run.stderr)
        line = one_line_error(run.stderr)
        assert f"there is no Berth database at SQLite database {path}" in line, line
        assert "BERTH_DATABASE_URL" in line and "berth db upgrade" in line, line
        assert not path.exists(), command
    created = berth("db", "upgrade", database_url=sqlite_url(path))
    assert created.returncode == 0 and path.exists(), created.stderr


def test_without_the_environment_the_default_place_is_named(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("BERTH_")}
    run = subprocess.run(
        [str(BERTH), "staff", "create", "ana@example.com", "--role", "admin"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 1, run.stdout
    line = one_line_error(run.stderr)
    assert f"no Berth database at SQLite database {tmp_path / 'berth.db'}" in line, line
    assert "BERTH_DATABASE_URL is not set" in line, line
    assert list(tmp_path.iterdir()) == []


def test_serve_demo_creates_its_database(tmp_path: Path) -> None:
    path = tmp_path / "berth.db"
    with berth_serve(sqlite_url(path), "--demo"):
        assert path.exists()


def test_every_writing_command_names_the_database_it_wrote_to(database_url: str, tmp_path: Path) -> None:
    where = berth("db", "upgrade", database_url=database_url).stdout
    place = where[where.index("(") + 1 : where.rindex(")")]
    catalog = tmp_path / "catalog.yaml"
    assert berth("catalog", "new", str(catalog), database_url=database_url).returncode == 0
    writing = [
        ["demo"],
        ["catalog", "import", str(catalog), "--force"],
        ["connection", "create", "Ticket Hub"],
        ["connection", "rotate-secret", "Ticket Hub"],
        ["connection", "revoke", "Ticket Hub"],
        ["staff", "create", "ana@example.com", "--role", "operator"],
        ["staff", "token", "ana@example.com"],
        ["staff", "disable", "ana@example.com"],
    ]
    for command in writing:
        run = berth(*command, database_url=database_url)
        assert run.returncode == 0, (command, run.stderr)
        assert f"the {place}" in " ".join(run.stdout.split()), (command, run.stdout)


def test_a_secret_key_that_cannot_open_the_signing_secrets_stops_the_start(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "berth.db")
    assert berth("db", "upgrade", database_url=url).returncode == 0
    created = berth("connection", "create", "Ticket Hub", database_url=url, BERTH_SECRET_KEY=KEY_ONE)
    assert created.returncode == 0, created.stderr
    assert berth("connection", "create", "Gone", database_url=url, BERTH_SECRET_KEY=KEY_ONE).returncode == 0
    assert berth("connection", "revoke", "Gone", database_url=url).returncode == 0

    # The database restored elsewhere, started with another key.
    for command in (["serve", "--port", str(free_port())], ["worker"]):
        run = berth(*command, database_url=url, BERTH_SECRET_KEY=KEY_TWO)
        assert run.returncode == 1, (command, run.stdout, run.stderr)
        line = one_line_error(run.stderr)
        assert (
            "BERTH_SECRET_KEY cannot open the webhook signing secrets of 1 connection(s): Ticket Hub" in line
        )
        assert "Gone" not in line  # a revoked connection signs nothing
        assert "BERTH_SECRET_KEY_PREVIOUS" in line and "rotate-secret" in line, line
        assert run.stdout == ""

    # Ways out: the old key named as the previous one, or a new secret sealed with the new key.
    with berth_serve(url, BERTH_SECRET_KEY=KEY_TWO, BERTH_SECRET_KEY_PREVIOUS=KEY_ONE):
        pass
    rotated = berth(
        "connection", "rotate-secret", "Ticket Hub", "--grace-hours", "0", database_url=url,
        BERTH_SECRET_KEY=KEY_TWO,
    )  # fmt: skip
    assert rotated.returncode == 0, rotated.stderr
    assert rotated.stdout.strip().splitlines()[-1].startswith("whsec_")
    with berth_serve(url, BERTH_SECRET_KEY=KEY_TWO):
        pass


def first_line(stream: IO[str], seconds: float = 60) -> str:
    """The first line written to `stream`, or "" when none comes within `seconds`."""
    ready, _, _ = select.select([stream], [], [], seconds)
    return stream.readline() if ready else ""


def start_line(output: str, log_format: str) -> dict[str, str] | str:
    for line in output.splitlines():
        if "berth started" in line:
            return json.loads(line) if log_format == "json" else line
    raise AssertionError(f"no start line in:\n{output}")


@pytest.mark.parametrize("log_format", ["json", "console"])
def test_the_worker_follows_the_log_settings_and_logs_its_start(database_url: str, log_format: str) -> None:
    process = subprocess.Popen(
        [str(BERTH), "worker"],
        env=berth_environment(database_url, BERTH_LOG_LEVEL="INFO", BERTH_LOG_FORMAT=log_format),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = first_line(process.stderr)
    finally:
        process.terminate()
        process.wait(timeout=30)
    started = start_line(first, log_format)
    if isinstance(started, dict):
        assert started["process"] == "worker" and started["version"] == __version__
        assert started["level"] == "info" and started["log_format"] == "json"
        assert started["database"].startswith(("SQLite database", "PostgreSQL at"))
        assert "secret_key_set" in started and "public_url" in started
    else:
        assert "process=worker" in started and f"version={__version__}" in started, started


def test_a_quiet_worker_logs_nothing(database_url: str) -> None:
    process = subprocess.Popen(
        [str(BERTH), "worker"],
        env=berth_environment(database_url, BERTH_LOG_LEVEL="WARNING"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert "Berth worker running" in first_line(process.stdout)
    process.terminate()
    _, err = process.communicate(timeout=30)
    assert err == ""


def test_serve_logs_its_start_in_json(database_url: str, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with berth_serve(database_url, log=log, BERTH_LOG_LEVEL="INFO", BERTH_LOG_FORMAT="json"):
        deadline = time.monotonic() + 30
        while "berth started" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
    started = start_line(log.read_text(), "json")
    assert isinstance(started, dict)
    assert started["process"] == "serve" and started["version"] == __version__


def test_serve_on_a_busy_port_is_one_error_line(database_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = berth("serve", "--port", str(port), database_url=database_url)
    assert run.returncode == 1
    assert run.stdout == ""  # no "serving at" banner first
    line = one_line_error(run.stderr)
    assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in line, line


def test_serve_warns_of_mail_without_a_public_url() -> None:
    """Guests' ticket links would name the listen address, which they cannot reach."""
    smtp = SecretStr("smtp://relay.example:25")
    listening = Settings(
        listen_url="http://127.0.0.1:8860", public_url=None, secret_key=KEY_ONE, smtp_url=smtp
    )
    [warning] = startup_warnings(listening, demo=False)
    assert warning == (
        "BERTH_SMTP_URL is set but BERTH_PUBLIC_URL is not: the ticket links in guests' emails name "
        "http://127.0.0.1:8860, the address Berth listens on. Set BERTH_PUBLIC_URL to the address "
        "guests reach."
    )
    public = listening.model_copy(update={"public_url": "https://octo.example.com"})
    assert startup_warnings(public, demo=False) == []
    assert startup_warnings(listening.model_copy(update={"smtp_url": None}), demo=False) == []
