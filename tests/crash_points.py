"""A step of Berth's abandoned part-way, as a crash abandons it, without touching Berth's code.

The step's crash points, counted in the order it reaches them, are its suspensions (each await
that waits: for Stripe's answer, for PostgreSQL, for a lock) and the statements it sends to the
database (seen through SQLAlchemy's events and the database's own driver listeners: on SQLite,
whose calls do not suspend, these are the only points between two transactions). At its k-th:

- a suspension: the task that runs the step is cancelled there, as asyncio cancels a task;
- a statement: `Crash` (a BaseException, which no handler of Berth's catches) is raised before
  the statement is sent.

What it committed before that point stays; the transaction it had open is rolled back (a dead
process's is, too); none of its code after that point runs but the unwinding. A request already
sent to Stripe may or may not have been carried out there, as after a real crash; a step can
also die right after Stripe carried out one of its requests, before the answer reaches it
(`dies`)."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Coroutine, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import event

from berth.store.database import Database

T = TypeVar("T")


class Crash(BaseException):
    """The process died before this statement was sent."""


@dataclass
class _Points:
    cut: int  # the crash point to stop at (0: none)
    seen: int = 0

    def reached(self) -> bool:
        self.seen += 1
        return self.seen == self.cut


@types.coroutine
def _suspensions(coro: Coroutine[Any, Any, T], points: _Points) -> Generator[Any, Any, T]:
    """Run `coro`, handing each of its suspensions to the task that runs this; at the crash
    point, cancel that task (asyncio cancels what the coroutine waits for, and the coroutine
    unwinds from that await as a cancelled task's does)."""
    steps = coro.__await__()
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            waits_for = steps.throw(error) if error is not None else steps.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        if points.reached():
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        try:
            value, error = (yield waits_for), None
        except BaseException as exc:  # what the awaited thing raised, or the cancellation
            value, error = None, exc


@contextmanager
def _statements(database: Database, points: _Points) -> Iterator[None]:
    def statement(*_: Any) -> None:
        if points.reached():
            raise Crash(f"crash point {points.cut}")

    engine = database.sync_engine
    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", statement)
    database.driver_listeners.append(statement)
    try:
        yield
    finally:
        database.driver_listeners.remove(statement)
        event.remove(engine, "commit", statement)
        event.remove(engine, "before_cursor_execute", statement)


@dataclass(frozen=True)
class Ran(Generic[T]):
    """How a step went: `cut` (abandoned at its crash point), else finished with `result` or
    with `error` (an answer of Berth's, e.g. a refusal); `points`: the crash points it
    reached."""

    cut: bool
    points: int
    result: T | None = None
    error: Exception | None = None


async def run_step(
    database: Database, coro: Coroutine[Any, Any, T], cut: int | None, dies: asyncio.Event | None = None
) -> Ran[T]:
    """Run one step of Berth's over `database` to its end, or (`cut`) abandon it at its
    `cut`-th crash point, or when `dies` is set (by what the step waits for: Stripe having
    carried out a request whose answer the step then never gets, `tests/stripe_in_front.py`)."""
    points = _Points(cut or 0)
    task: asyncio.Task[T] = asyncio.ensure_future(_suspensions(coro, points))
    death = asyncio.ensure_future((dies or asyncio.Event()).wait())
    with _statements(database, points):
        try:
            await asyncio.wait({task, death}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                task.cancel()
            result = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # the step's caller was cancelled, not the step
            return Ran(cut=True, points=points.seen)
        except Crash:
            return Ran(cut=True, points=points.seen)
        except Exception as exc:
            return Ran(cut=False, points=points.seen, error=exc)
        finally:
            death.cancel()
    return Ran(cut=False, points=points.seen, result=result)
