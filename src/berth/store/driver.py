"""Hot statements on SQLite straight through pysqlite, compiled once.

Through SQLAlchemy a statement of a reservation cost about 100 µs of Python before and after
the 10 to 30 µs SQLite spends on it: its cache key built and looked up, an execution context,
its parameters processed by name, its result wrapped. A `Prepared` statement is compiled once
per dialect; on SQLite (`SqliteConnection.send`) each run converts its values with the very
processors the columns' types give SQLAlchemy (datetimes, JSON documents, booleans), so the
rows written and read are the same either way, and goes to the driver's cursor. On PostgreSQL
it is an ordinary SQLAlchemy execution of the same statement.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, cast
from weakref import WeakKeyDictionary

from sqlalchemy import Dialect
from sqlalchemy.sql.base import Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ClauseElement
from sqlalchemy.types import TypeEngine

from berth.store.connection import DbConnection, SqliteConnection
from berth.store.types import UTCDateTime

Processor = Callable[[Any], Any] | None


class _Compiled:
    """A statement's SQL for one dialect, what makes its positional values from named ones,
    and what makes its rows."""

    def __init__(self, statement: Executable, keys: Sequence[str] | None, dialect: Dialect) -> None:
        compiled = cast(ClauseElement, statement).compile(
            dialect=dialect, column_keys=list(keys) if keys is not None else None
        )
        assert isinstance(compiled, SQLCompiler) and compiled.positiontup is not None, statement
        self.sql = compiled.string
        binds: list[tuple[str, Any, Processor]] = []
        for name in compiled.positiontup:
            bind = compiled.binds[name]
            assert not bind.expanding, f"{name}: lists are not bound here"
            default = _REQUIRED if bind.required else bind.effective_value
            binds.append((name, default, _bind_processor(bind.type, dialect)))
        self.binds = tuple(binds)
        columns = list(getattr(statement, "exported_columns", ()))
        # Rows by position and by column name, as SQLAlchemy's.
        self.row: Any = namedtuple("Row", [c.key for c in columns]) if columns else None
        self.results = tuple(c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns)

    def values(self, parameters: Mapping[str, Any]) -> tuple[Any, ...]:
        values = []
        for name, default, process in self.binds:
            value = parameters.get(name, default)
            if value is _REQUIRED:
                raise KeyError(f"no value for the parameter {name!r}")
            values.append(value if process is None else process(value))
        return tuple(values)

    def rows(self, fetched: list[tuple[Any, ...]]) -> list[Any]:
        if self.row is None:
            return fetched
        make, results = self.row._make, self.results
        if not any(results):
            return [make(row) for row in fetched]
        return [
            make(
                value if process is None else process(value)
                for value, process in zip(row, results, strict=True)
            )
            for row in fetched
        ]


_REQUIRED = object()


def _bind_processor(kind: TypeEngine[Any], dialect: Dialect) -> Processor:
    """SQLAlchemy's processor of `kind`'s values, but for UTCDateTime on SQLite: the same text in
    one step (through SQLAlchemy, UTCDateTime's conversion and then SQLite's formatting of
    every part by name were a twentieth of a reservation)."""
    if isinstance(kind, UTCDateTime) and dialect.name == "sqlite":
        return utc_text
    return kind.dialect_impl(dialect).bind_processor(dialect)


def utc_text(value: datetime | None) -> str | None:
    """An aware datetime as SQLite stores a UTCDateTime: naive UTC, microseconds always shown."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime given to a UTC column")
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


class Prepared:
    """An SQLAlchemy statement compiled once per dialect. `keys`: an INSERT's or UPDATE's
    columns given values (each run gives all of them)."""

    def __init__(self, statement: Executable, keys: Sequence[str] | None = None) -> None:
        self.statement = statement
        self._keys = tuple(keys) if keys is not None else None
        self._compiled: WeakKeyDictionary[Dialect, _Compiled] = WeakKeyDictionary()

    def compiled(self, dialect: Dialect) -> _Compiled:
        found = self._compiled.get(dialect)
        if found is None:
            found = self._compiled[dialect] = _Compiled(self.statement, self._keys, dialect)
        return found


async def fetch(conn: DbConnection, prepared: Prepared, parameters: Mapping[str, Any]) -> Sequence[Any]:
    """The statement's rows (a query's, or an INSERT's RETURNING), each by position and by
    column name."""
    if isinstance(conn, SqliteConnection):
        compiled = prepared.compiled(conn.dialect)
        return compiled.rows(conn.send(compiled.sql, compiled.values(parameters)))
    return (await conn.execute(prepared.statement, parameters)).all()


async def run(conn: DbConnection, prepared: Prepared, parameters: Mapping[str, Any]) -> None:
    """Run a statement that answers no rows."""
    if isinstance(conn, SqliteConnection):
        compiled = prepared.compiled(conn.dialect)
        conn.send(compiled.sql, compiled.values(parameters))
    else:
        await conn.execute(prepared.statement, parameters)
