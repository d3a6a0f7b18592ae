"""The database URLs Berth runs on: the ones people paste, made into the drivers Berth uses
(`normalize_url`), and where one points, fit to print (`describe_database`)."""

from __future__ import annotations

import os

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


class UnsupportedDatabaseUrl(ValueError):
    """A database URL Berth cannot run on (another database, or not a URL at all)."""


SUPPORTED_URLS = "postgresql://user:password@host:5432/name or sqlite:///path/to/berth.db"
_POSTGRES_DRIVERS = (
    "postgresql",
    "postgres",
    "postgresql+asyncpg",
    "postgresql+psycopg2",
    "postgresql+psycopg",
)
_SQLITE_DRIVERS = ("sqlite", "sqlite+aiosqlite", "sqlite+pysqlite")


def normalize_url(url: str) -> str:
    """Accept the URLs people paste (`postgresql://…`, `sqlite:///…`, `sqlite+aiosqlite:///…`)
    and pick the drivers Berth runs on; any other URL raises UnsupportedDatabaseUrl."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UnsupportedDatabaseUrl(
            f"BERTH_DATABASE_URL is not a database URL; Berth runs on {SUPPORTED_URLS}"
        ) from None
    driver = parsed.drivername
    if driver in _POSTGRES_DRIVERS:
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif driver in _SQLITE_DRIVERS:
        parsed = parsed.set(drivername="sqlite+pysqlite")
    else:
        shown = parsed.render_as_string(hide_password=True)
        raise UnsupportedDatabaseUrl(f"unsupported database URL {shown}: Berth runs on {SUPPORTED_URLS}")
    return parsed.render_as_string(hide_password=False)


def describe_database(url: str) -> str:
    """Where a (supported) database URL points, fit to print: no password."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database
        if not path or path == ":memory:":
            return "in-memory SQLite database"
        return f"SQLite database {os.path.abspath(path)}"
    where = f"PostgreSQL at {parsed.host or 'localhost'}:{parsed.port or 5432}"
    return f"{where}, database {parsed.database}, user {parsed.username}"
