"""Real test databases: a fresh SQLite file per test, or a PostgreSQL database made for this
test run (BERTH_TEST_POSTGRES_URL) and emptied between tests."""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from pathlib import Path

import asyncpg
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
    """One database for the whole run, created and migrated once, emptied after each test,
    dropped at the end; its commits are not synced to disk."""

    def __init__(self, admin_url: str) -> None:
        parsed = make_url(admin_url)
        self._admin_dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self.name = f"berth_test_{uuid.uuid4().hex[:12]}"
        self.url = parsed.set(drivername="postgresql+asyncpg", database=self.name).render_as_string(
            hide_password=False
        )
        self._dsn = parsed.set(drivername="postgresql", database=self.name).render_as_string(
            hide_password=False
        )
        asyncio.run(self._admin(f'CREATE DATABASE "{self.name}"'))
        # Its commits do not wait for the disk (a shared server's fsyncs made a test's few
        # commits take seconds under load): what a test can see, visibility, locks, isolation,
        # is the same; only a crash of the server could lose the last commits of a database
        # dropped at the end anyway.
        asyncio.run(self._admin(f'ALTER DATABASE "{self.name}" SET synchronous_commit = off'))
        asyncio.run(_migrate(self.url))
        self._emptying = asyncio.run(self._emptying_script())

    async def _admin(self, statement: str) -> None:
        conn = await asyncpg.connect(self._admin_dsn)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    async def _emptying_script(self) -> str:
        """What `TRUNCATE <every table> RESTART IDENTITY CASCADE` leaves, as one script: every
        table's rows deleted, those that refer to others first, and each sequence of their
        columns set back to its start. TRUNCATE took 0.1-0.5 s a test even of empty tables, and
        ALTER SEQUENCE ... RESTART 8 ms (each gives the relation new files, synced at commit);
        deleting the few rows a test wrote and `setval` take a millisecond."""
        tables = [table.name for table in reversed(metadata.sorted_tables)]
        conn = await asyncpg.connect(self._dsn)
        try:
            sequences = await conn.fetch(
                """
                SELECT seq.oid::regclass::text AS name, pg_sequence.seqstart AS start
                FROM pg_class seq
                JOIN pg_sequence ON pg_sequence.seqrelid = seq.oid
                JOIN pg_depend owner ON owner.classid = 'pg_class'::regclass AND owner.objid = seq.oid
                    AND owner.refclassid = 'pg_class'::regclass AND owner.deptype IN ('a', 'i')
                JOIN pg_class tab ON tab.oid = owner.refobjid
                WHERE tab.relname = ANY($1::text[])
                ORDER BY 1
                """,
                tables,
            )
        finally:
            await conn.close()
        restarts = ", ".join(f"setval('{row['name']}', {row['start']}, false)" for row in sequences)
        return ";\n".join([*(f'DELETE FROM "{name}"' for name in tables), f"SELECT {restarts}"])

    def fresh(self, directory: Path) -> str:
        return self.url

    async def empty(self) -> None:
        """Every table emptied and its sequences set back, in one transaction (a script of
        several statements is one)."""
        conn = await asyncpg.connect(self._dsn)
        try:
            await conn.execute(self._emptying)
        finally:
            await conn.close()

    def close(self) -> None:
        asyncio.run(self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
