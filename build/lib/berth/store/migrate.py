"""Apply Alembic migrations programmatically (used by `berth db upgrade` and `berth serve`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, text

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


async def upgrade(database: Database, box: SecretBox | None = None, revision: str = "head") -> None:
    def run(connection: Connection) -> None:
        command.upgrade(alembic_config(connection, box), revision)

    async with database.transaction(write=True) as conn:
        if not database.is_sqlite:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
        await conn.run_sync(run)


async def downgrade(database: Database, revision: str, box: SecretBox | None = None) -> None:
    def run(connection: Connection) -> None:
        command.downgrade(alembic_config(connection, box), revision)

    async with database.transaction(write=True) as conn:
        await conn.run_sync(run)
