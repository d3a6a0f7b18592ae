"""Apply Alembic migrations programmatically (used by `berth db upgrade` and `berth serve`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url

from berth.domain.sealing import SecretBox
from berth.store.database import Database

MIGRATIONS = Path(__file__).parent / "migrations"
_PG_MIGRATION_LOCK = 0x6265727468  # "berth": several processes starting at once migrate one by one


def alembic_config(connection: Connection | None = None, box: SecretBox | None = None) -> Config:
    """`box` seals and opens stored secrets in migrations that change how they are stored
    (without it they use the one BERTH_SECRET_KEY gives)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    config.attributes["secret_box"] = box
    return config


class UnknownRevision(Exception):
    """The database was migrated by a newer Berth: this one cannot tell what its schema holds."""


@dataclass(frozen=True)
class Upgrade:
    """What an upgrade did: the revision the database was at (None: no schema yet) and is at."""

    before: str | None
    after: str
    # What migrations that changed data said they did (how many rows, and how).
    notes: tuple[str, ...] = ()


def head_revision() -> str:
    """The newest schema revision this Berth knows."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def previous_revision(revision: str) -> str | None:
    """The revision `revision` upgrades from (None for the first)."""
    down = ScriptDirectory.from_config(alembic_config()).get_revision(revision).down_revision
    assert down is None or isinstance(down, str)
    return down


def _current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def current_revision(database: Database) -> str | None:
    """The schema revision the database is at; None when it holds no Berth schema. A SQLite file
    that does not exist is not created by asking."""
    path = make_url(database.url).database
    if database.is_sqlite and path and path != ":memory:" and not os.path.isfile(path):  # noqa: ASYNC240 (one stat, at start)
        return None
    async with database.transaction(write=False) as conn:
        return await conn.run_sync(_current_revision)


async def upgrade(database: Database, box: SecretBox | None = None, revision: str = "head") -> Upgrade:
    def run(connection: Connection) -> Upgrade:
        config = alembic_config(connection, box)
        before = _current_revision(connection)
        known = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
        if before is not None and before not in known:
            raise UnknownRevision(
                f"the database is at revision {before}, which this Berth does not know (its latest is "
                f"{head_revision()}): a newer Berth upgraded it; run that one, or restore a backup"
            )
        command.upgrade(config, revision)
        after = _current_revision(connection)
        assert after is not None
        return Upgrade(before, after, tuple(config.attributes.get("notes", ())))

    async with database.transaction(write=True) as conn:
        if not database.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        return await conn.run_sync(run)


async def downgrade(database: Database, revision: str, box: SecretBox | None = None) -> None:
    def run(connection: Connection) -> None:
        command.downgrade(alembic_config(connection, box), revision)

    async with database.transaction(write=True) as conn:
        await conn.run_sync(run)
