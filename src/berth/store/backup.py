"""Backups (`berth db backup`): an embedded SQLite database is copied with SQLite's online backup
API, safe while servers write to it; a PostgreSQL database is dumped by pg_dump (the client tools
of Debian's postgresql-client package), run here."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import URL, make_url

from berth.store.database import SQLITE_BUSY_TIMEOUT_MS
from berth.store.urls import normalize_url


class BackupError(Exception):
    """The backup was not made; the message says why. Nothing was written."""


@dataclass(frozen=True)
class SqliteBackup:
    source: Path
    target: Path
    size: int
    revision: str | None


def is_postgres(url: str) -> bool:
    return make_url(normalize_url(url)).get_backend_name() == "postgresql"


def _refuse_existing(target: Path, replace: bool) -> None:
    if target.exists() and not replace:
        raise BackupError(f"{target} already exists; nothing was written (--force replaces it)")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a directory; nothing was written")


def _owner_only_partial(target: Path) -> Path:
    """A new empty file beside `target` that only its owner can read: a copy holds the whole
    database (contacts, sealed secrets)."""
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return partial


def _put_in_place(partial: Path, target: Path, replace: bool) -> None:
    if replace:
        os.replace(partial, target)
    else:
        _move_unless_exists(partial, target)


def backup_sqlite(url: str, target: Path, *, replace: bool) -> SqliteBackup:
    """Copy the SQLite database `url` names to `target`: one consistent snapshot (writers go on
    meanwhile), written to a temporary file beside `target` and moved into place when complete.
    An existing `target` is kept unless `replace`."""
    path = make_url(normalize_url(url)).database
    if not path or path == ":memory:":
        raise BackupError("an in-memory SQLite database cannot be backed up")
    source = Path(path)
    if not source.is_file():
        raise BackupError(f"no database at {source}: nothing to back up")
    if target.exists() and target.resolve() == source.resolve():
        raise BackupError(f"{target} is the database itself; back it up to another file")
    _refuse_existing(target, replace)
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
    try:
        partial = _owner_only_partial(target)
        revision = _copy(source, partial)
        _put_in_place(partial, target, replace)
    except FileExistsError:
        raise BackupError(f"{target} already exists; nothing was written (--force replaces it)") from None
    except (OSError, sqlite3.Error) as exc:
        raise BackupError(f"the backup to {target} failed, nothing was written: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return SqliteBackup(source, target, target.stat().st_size, revision)


def _move_unless_exists(partial: Path, target: Path) -> None:
    """A hard link fails, rather than overwrite, if `target` appeared during the copy; where
    the file system has no hard links, check and rename."""
    try:
        os.link(partial, target)
    except FileExistsError:
        raise
    except OSError:
        if target.exists():
            raise FileExistsError(target) from None
        os.replace(partial, target)


def _copy(source: Path, target: Path) -> str | None:
    """Copy in one step (a single read transaction on the source, so the copy is one moment's
    state) and check it; the schema revision the copy is at."""
    with (
        contextlib.closing(sqlite3.connect(source, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst)
        dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, not a WAL pair
        check = dst.execute("PRAGMA quick_check").fetchone()
        if check != ("ok",):
            raise BackupError(f"the copy failed its integrity check ({check[0]}); nothing was written")
        try:
            row = dst.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.OperationalError:  # a database Berth has not migrated yet
            return None
        return str(row[0]) if row else None


@dataclass(frozen=True)
class PostgresCommands:
    dump: list[str]
    restore: list[str]


def pg_dump_commands(url: str, target: Path) -> PostgresCommands:
    """pg_dump to back up the PostgreSQL database `url` names to `target` (custom format), and
    pg_restore to put it back; the password left out (pg_dump asks, or reads PGPASSWORD or
    ~/.pgpass)."""
    parsed = make_url(normalize_url(url))
    without_password = URL.create(
        "postgresql",
        username=parsed.username,
        host=parsed.host,
        port=parsed.port,
        database=parsed.database,
        query=parsed.query,
    )
    dsn = without_password.render_as_string(hide_password=False)
    return PostgresCommands(
        dump=["pg_dump", "--format=custom", f"--file={target}", f"--dbname={dsn}"],
        restore=["pg_restore", "--clean", "--if-exists", "--no-owner", f"--dbname={dsn}", str(target)],
    )


@dataclass(frozen=True)
class PostgresBackup:
    target: Path
    size: int
    restore: list[str]


def backup_postgres(url: str, target: Path, *, replace: bool) -> PostgresBackup:
    """Dump the PostgreSQL database `url` names to `target` with pg_dump (custom format, one
    consistent snapshot while writers go on), into a file only its owner can read, moved into
    place when complete. The password reaches pg_dump in its environment, never its arguments."""
    program = shutil.which("pg_dump")
    if program is None:
        raise BackupError(
            "pg_dump is not installed, nothing was written: install PostgreSQL's client tools "
            "(Debian and Ubuntu: `apt-get install postgresql-client`)"
        )
    _refuse_existing(target, replace)
    commands = pg_dump_commands(url, target)
    password = make_url(normalize_url(url)).password
    environment = {**os.environ, **({"PGPASSWORD": str(password)} if password else {})}
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
    try:
        partial = _owner_only_partial(target)
        arguments = (f"--file={partial}" if arg.startswith("--file=") else arg for arg in commands.dump[1:])
        done = subprocess.run(
            [program, "--no-password", *arguments],
            env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            said = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
            raise BackupError(f"pg_dump failed, nothing was written: {said}")
        _put_in_place(partial, target, replace)
    except FileExistsError:
        raise BackupError(f"{target} already exists; nothing was written (--force replaces it)") from None
    except OSError as exc:
        raise BackupError(f"the backup to {target} failed, nothing was written: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    return PostgresBackup(target, target.stat().st_size, commands.restore)
