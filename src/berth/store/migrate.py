"""Apply Alembic migrations programmatically (used by `berth db upgrade` and `berth serve`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, text

from berth.store.database import Database

MIGRATIONS = Path(__file__).parent / "migrations"
_PG_MIGRATION_LOCK = 0x6265727468  # "berth": several processes starting at once migrate one by one


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection) -> None:
    command.upgrade(alembic_config(connection), "head")


async def upgrade(database: Database) -> None:
    async with database.transaction(write=True) as conn:
        if not database.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        await conn.run_sync(_upgrade)
