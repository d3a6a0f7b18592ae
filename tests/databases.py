"""Real test databases: a fresh SQLite file per test, or a PostgreSQL database made for this
test run (BERTH_TEST_POSTGRES_URL) and emptied between tests."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from pathlib import Path

import asyncpg
from sqlalchemy import text
from sqlalchemy.engine import make_url

from berth.store.database import Database
from berth.store.migrate import upgrade
from berth.store.tables import metadata

POSTGRES_URL = os.environ.get("BERTH_TEST_POSTGRES_URL")


def backend_name() -> str:
    return "postgresql" if POSTGRES_URL else "sqlite"


async def _migrate(url: str) -> None:
    database = Database(url)
    try:
        await upgrade(database)
    finally:
        await database.dispose()


class SqliteTemplate:
    """Migrates one file once; every test gets a copy."""

    def __init__(self, directory: Path) -> None:
        self.template = directory / "template.db"
        asyncio.run(_migrate(f"sqlite+aiosqlite:///{self.template}"))

    def fresh(self, directory: Path) -> str:
        target = directory / "berth.db"
        shutil.copyfile(self.template, target)
        return f"sqlite+aiosqlite:///{target}"

    def close(self) -> None:
        return None


class PostgresDatabase:
    """One database for the whole run, created and migrated once, dropped at the end."""

    def __init__(self, admin_url: str) -> None:
        parsed = make_url(admin_url)
        self._admin_dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self.name = f"berth_test_{uuid.uuid4().hex[:12]}"
        self.url = parsed.set(drivername="postgresql+asyncpg", database=self.name).render_as_string(
            hide_password=False
        )
        asyncio.run(self._admin(f'CREATE DATABASE "{self.name}"'))
        asyncio.run(_migrate(self.url))

    async def _admin(self, statement: str) -> None:
        conn = await asyncpg.connect(self._admin_dsn)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    def fresh(self, directory: Path) -> str:
        return self.url

    async def truncate(self) -> None:
        database = Database(self.url)
        try:
            async with database.transaction(write=True) as conn:
                names = ", ".join(f'"{table.name}"' for table in metadata.sorted_tables)
                await conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        finally:
            await database.dispose()

    def close(self) -> None:
        asyncio.run(self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
