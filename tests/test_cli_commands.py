"""The real `berth` command, run as a subprocess: help, --version, connections, database errors
and `db upgrade` messages."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import tomllib
from pathlib import Path

from berth.store.database import Database
from berth.store.migrate import head_revision, previous_revision, upgrade
from tests.berth_process import berth, free_port

ROOT = Path(__file__).resolve().parent.parent
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def one_line_error(run_output: str) -> str:
    lines = [line for line in run_output.splitlines() if line.strip()]
    assert len(lines) == 1, run_output
    assert "Traceback" not in run_output
    return lines[0]


def test_help_shows_flags_as_flags_and_arguments_by_name(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "berth.db")
    top = berth("--help", database_url=url)
    serve = berth("serve", "--help", database_url=url)
    import_help = berth("catalog", "import", "--help", database_url=url)
    for run in (top, serve, import_help):
        assert run.returncode == 0, run.stderr
        assert "<bool>" not in run.stdout and "{" not in run.stdout, run.stdout
    assert "--version" in top.stdout
    demo_line = next(line for line in serve.stdout.splitlines() if "--demo" in line)
    assert re.search(r"--demo\s+Load the demo", demo_line), demo_line
    help_line = next(line for line in serve.stdout.splitlines() if "--help" in line)
    assert re.search(r"--help\s+Show this message", help_line), help_line
    port_line = next(line for line in serve.stdout.splitlines() if "--port" in line)
    assert re.search(r"--port\s+INTEGER\s+Port to listen on", port_line), port_line
    assert "Usage: berth catalog import [OPTIONS] FILE" in import_help.stdout
    assert not (tmp_path / "berth.db").exists()  # help touches no database


def test_version(tmp_path: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    run = berth("--version", database_url=sqlite_url(tmp_path / "berth.db"))
    assert run.returncode == 0, run.stderr
    assert run.stdout == f"berth {project['version']}\n"


def test_connection_list_shows_full_ids_and_json(database_url: str) -> None:
    assert berth("demo", database_url=database_url).returncode == 0
    listed = berth("connection", "list", "--json", database_url=database_url)
    assert listed.returncode == 0, listed.stderr
    connections = json.loads(listed.stdout)
    assert [c["name"] for c in connections] == [
        "Demo reseller A",
        "Demo reseller B",
        "Harbourside box office",
        "Web shop",
    ]
    for c in connections:
        assert set(c) == {"id", "name", "keyHint", "createdAt", "revokedAt", "active"}
        assert UUID.fullmatch(c["id"]) and c["active"] is True and c["revokedAt"] is None

    table = berth("connection", "list", database_url=database_url, COLUMNS="80")
    assert table.returncode == 0, table.stderr
    for c in connections:
        assert c["id"] in table.stdout, table.stdout  # whole, never cut to fit the width
        assert c["name"] in table.stdout

    # An id copied from the list revokes its connection.
    first = connections[0]["id"]
    revoked = berth("connection", "revoke", first, database_url=database_url)
    assert revoked.returncode == 0, revoked.stderr
    after = json.loads(berth("connection", "list", "--json", database_url=database_url).stdout)
    assert after[0]["active"] is False and after[0]["revokedAt"] is not None
    assert all(c["active"] for c in after[1:])


def test_revoking_twice_or_an_unknown_connection_fails_clearly(database_url: str) -> None:
    created = berth("connection", "create", "Ticket Hub", database_url=database_url)
    assert created.returncode == 0, created.stderr
    connection_id = UUID.search(created.stdout)
    assert connection_id is not None
    first = berth("connection", "revoke", "Ticket Hub", database_url=database_url)
    assert first.returncode == 0, first.stderr
    assert f"Connection Ticket Hub ({connection_id[0]}) revoked" in first.stdout

    again = berth("connection", "revoke", connection_id[0], database_url=database_url)
    assert again.returncode == 1
    assert again.stdout == ""
    line = one_line_error(again.stderr)
    assert f"Connection Ticket Hub ({connection_id[0]}) was already revoked on" in line
    assert "nothing changed" in line

    unknown = berth("connection", "revoke", "0785278b-b595-4c9", database_url=database_url)
    assert unknown.returncode == 1 and unknown.stdout == ""
    line = one_line_error(unknown.stderr)
    assert "No connection with id or name '0785278b-b595-4c9'" in line
    assert "berth connection list" in line


COMMANDS = [
    ["db", "upgrade"],
    ["serve", "--port", "8399"],
    ["worker"],
    ["demo"],
    ["connection", "list"],
    ["connection", "create", "Ticket Hub"],
    ["catalog", "export"],
]


def test_an_unreachable_database_is_one_line_naming_host_and_port() -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://berth:s3cret@127.0.0.1:{port}/berth"
    for command in COMMANDS:
        run = berth(*command, database_url=url)
        assert run.returncode == 1, (command, run.stdout, run.stderr)
        line = one_line_error(run.stderr)
        expected = f"cannot connect to PostgreSQL at 127.0.0.1:{port}, database berth, user berth: "
        assert expected in line, (command, line)
        assert "s3cret" not in run.stdout + run.stderr


def test_a_database_file_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-directory" / "berth.db"
    created = berth("db", "upgrade", database_url=sqlite_url(missing))
    assert created.returncode == 1, created.stderr
    assert f"cannot open the SQLite database {missing}" in one_line_error(created.stderr)
    for command in (["serve", "--port", "8399"], ["connection", "list"]):  # make no database at all
        run = berth(*command, database_url=sqlite_url(missing))
        assert run.returncode == 1, (command, run.stderr)
        line = one_line_error(run.stderr)
        assert f"there is no Berth database at SQLite database {missing}" in line, line


def test_an_unsupported_database_url_is_named(tmp_path: Path) -> None:
    for command in [*COMMANDS, ["db", "backup", str(tmp_path / "backup.db")]]:
        run = berth(*command, database_url="mysql://berth:s3cret@db.example/berth")
        assert run.returncode == 1, (command, run.stderr)
        line = one_line_error(run.stderr)
        assert "unsupported database URL mysql://berth:***@db.example/berth" in line, line
        assert "postgresql://" in line and "sqlite:///" in line
        assert "s3cret" not in run.stdout + run.stderr
    garbled = berth("db", "upgrade", database_url="berth.db")
    assert garbled.returncode == 1
    assert "BERTH_DATABASE_URL is not a database URL" in one_line_error(garbled.stderr)
    assert not (tmp_path / "backup.db").exists()


def test_invalid_settings_are_one_line(tmp_path: Path) -> None:
    run = berth(
        "connection", "list", database_url=sqlite_url(tmp_path / "berth.db"), BERTH_SECRET_KEY="short"
    )
    assert run.returncode == 1
    line = one_line_error(run.stderr)
    assert "invalid settings: BERTH_SECRET_KEY must be at least 32 characters" in line
    assert not (tmp_path / "berth.db").exists()


def test_db_upgrade_says_what_it_did(tmp_path: Path) -> None:
    head = head_revision()
    path = tmp_path / "berth.db"
    created = berth("db", "upgrade", database_url=sqlite_url(path))
    assert created.returncode == 0, created.stderr
    assert f"Database created at revision {head} (SQLite database {path})." in created.stdout

    again = berth("db", "upgrade", database_url=sqlite_url(path))
    assert again.returncode == 0, again.stderr
    assert f"Database already at revision {head}, the latest (SQLite database {path})." in again.stdout

    older_path = tmp_path / "older.db"
    older = previous_revision(head)
    assert older is not None

    async def make_older() -> None:
        database = Database(sqlite_url(older_path))
        try:
            await upgrade(database, revision=older)
        finally:
            await database.dispose()

    asyncio.run(make_older())
    upgraded = berth("db", "upgrade", database_url=sqlite_url(older_path))
    assert upgraded.returncode == 0, upgraded.stderr
    assert (
        f"Database upgraded from revision {older} to {head} (SQLite database {older_path})."
        in upgraded.stdout
    )


def test_a_database_from_a_newer_berth_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "berth.db"
    assert berth("db", "upgrade", database_url=sqlite_url(path)).returncode == 0
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    run = berth("db", "upgrade", database_url=sqlite_url(path))
    assert run.returncode == 1
    line = one_line_error(run.stderr)
    assert (
        f"the database is at revision 9999, which this Berth does not know (its latest is {head_revision()})"
        in line
    )


def test_db_upgrade_of_a_current_database_says_so(database_url: str) -> None:
    run = berth("db", "upgrade", database_url=database_url)
    assert run.returncode == 0, run.stderr
    assert f"Database already at revision {head_revision()}, the latest" in run.stdout
