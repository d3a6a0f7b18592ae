"""Counting the statements a use case sends to the database (a cursor listener on the engine),
with BEGIN and COMMIT: the round trips a write pays, and so how long it holds its locks."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import event

from berth.store.database import Database


class Statements:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def __len__(self) -> int:
        return len(self.sent)

    def kinds(self) -> list[str]:
        """Each statement's verb and table, e.g. 'INSERT slot_holds' (BEGIN and COMMIT as such)."""
        return [_kind(text) for text in self.sent]


def _kind(text: str) -> str:
    words = text.replace("(", " ").replace('"', " ").split()
    verb = words[0].upper() if words else "?"
    target = {"INSERT": "INTO", "DELETE": "FROM", "SELECT": "FROM", "WITH": "INTO"}.get(verb)
    upper = [w.upper() for w in words]
    if verb == "UPDATE" and len(words) > 1:
        return f"UPDATE {words[1]}"
    if target and target in upper:
        return f"{verb} {words[upper.index(target) + 1]}"
    return verb


@contextlib.contextmanager
def counting(database: Database) -> Iterator[Statements]:
    """Record every statement `database` sends while the block runs."""
    engine = database.sync_engine
    statements = Statements()

    def sent(conn: Any, cursor: Any, text: str, *args: Any) -> None:
        statements.sent.append(text.strip())

    def began(conn: Any) -> None:
        # SQLite's BEGIN IMMEDIATE is itself a statement; a PostgreSQL connection in autocommit
        # (`single_read`, `one_call`) sends no BEGIN.
        if not database.is_sqlite and conn.get_execution_options().get("isolation_level") != "AUTOCOMMIT":
            statements.sent.append("BEGIN")

    def committed(conn: Any) -> None:
        statements.sent.append("COMMIT")

    listeners = (("before_cursor_execute", sent), ("begin", began), ("commit", committed))
    for name, listener in listeners:
        event.listen(engine, name, listener)

    def driven(text: str) -> None:  # past SQLAlchemy, straight to SQLite's driver
        statements.sent.append(text.strip())

    database.driver_listeners.append(driven)
    try:
        yield statements
    finally:
        database.driver_listeners.remove(driven)
        for name, listener in listeners:
            event.remove(engine, name, listener)
