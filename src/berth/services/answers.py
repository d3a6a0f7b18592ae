"""Answers reused while nothing they show has changed: resellers poll the same availability
questions over and over, and most polls find nothing new.

An answer is reused only (1) while no commit since it was computed, by any process, changed
the places of a product it shows on one of its days (`berth.store.change_marks`, fed by
`availability_changes_repo`), and (2) while younger than `BERTH_ANSWER_CACHE_SECONDS`: states that
change with the clock alone (a hold running out, a cutoff passing) are at most that late. The
key names everything else an answer depends on (the catalogue version, the question, the view).
Errors are never kept.

A booking on the 10:00 cruise leaves the museum's answers kept, and the cruise's other days.

A value that only a change of everything changes (the catalogue, which the web shop's pages read)
is reused until a commit records one (`until_everything_changes`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar, cast

from berth.services.clock import Clock
from berth.store.change_marks import Change, Look, Position
from berth.store.database import Database

MAX_ANSWERS = 4096
# And at most this many bytes of answers a process: a 365-day calendar is hundreds of kilobytes.
MAX_BYTES = 8 * 1024 * 1024
# The changes of this many recent looks are remembered, to tell whether an answer computed
# while they came in may be kept; an answer begun before them is not kept.
HISTORY = 64
# At most this many values are kept by `since_commit` (a process asks for a handful).
MAX_VALUES = 64

T = TypeVar("T")


@dataclass(frozen=True)
class Reach:
    """What an answer shows: the products (None: any) and their local dates `first` to `last`
    ("YYYY-MM-DD"; None: every day)."""

    products: frozenset[str] | None = None
    first: str | None = None
    last: str | None = None

    def touched_by(self, change: Change) -> bool:
        product, day = change
        if product is None:
            return True
        if self.products is not None and product not in self.products:
            return False
        if day is None or self.first is None or self.last is None:
            return True
        return self.first <= day <= self.last


EVERY = Reach()


@dataclass(frozen=True)
class _Kept:
    at: datetime
    encoded: bytes
    reach: Reach


class AnswerCache:
    def __init__(
        self,
        database: Database,
        clock: Clock,
        seconds: float,
        max_answers: int = MAX_ANSWERS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self._db = database
        self._clock = clock
        self._ttl = timedelta(seconds=seconds)
        self._max = max_answers
        self._max_bytes = max_bytes
        self._bytes = 0  # of the answers kept
        self._kept: dict[Hashable, _Kept] = {}  # oldest first
        self._by_product: dict[str | None, set[Hashable]] = {}  # None: answers of any product
        self._position: Position | None = None
        self._looks = 0  # looks that found changes
        self._history: deque[tuple[int, frozenset[Change] | None]] = deque(maxlen=HISTORY)
        self._everything = 0  # looks that found everything changed
        self._values: dict[Hashable, tuple[int, object]] = {}  # `until_everything_changes`'

    @property
    def kept(self) -> int:
        """How many answers are kept now."""
        return len(self._kept)

    async def answer(
        self, key: Hashable, compute: Callable[[], Awaitable[bytes]], reach: Reach = EVERY
    ) -> bytes:
        """The encoded answer under `key`: a kept one if still good, else `compute()`'s.
        `reach`: what the answer shows, hence which changes make it old."""
        if self._ttl <= timedelta(0):
            return await compute()
        look = await self._db.changes_since(self._position)  # before computing
        if look is None:
            return await compute()
        self._take(look)
        begun = self._looks
        now = self._clock()
        kept = self._kept.get(key)
        if kept is not None and timedelta(0) <= now - kept.at < self._ttl:
            return kept.encoded
        encoded = await compute()
        if not self._changed_since(begun, reach):
            self._keep(key, _Kept(now, encoded, reach))
        return encoded

    async def until_everything_changes(self, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        """The value `read()` gave under `key`, read again only once a commit, by any process,
        has changed everything since (`EVERYTHING`: a catalogue or a contract saved, a
        connection revoked), or the changes cannot be told."""
        if self._ttl <= timedelta(0):
            return await read()
        look = await self._db.changes_since(self._position)  # before reading
        if look is None:
            return await read()
        self._take(look)
        begun = self._everything
        kept = self._values.get(key)
        if kept is not None and kept[0] == begun:
            return cast(T, kept[1])
        value = await read()
        if len(self._values) >= MAX_VALUES:
            self._values.clear()
        self._values[key] = (begun, value)
        return value

    def _take(self, look: Look) -> None:
        """Move to the look's position, dropping the answers its changes touch."""
        self._position = look.position
        if look.changes is not None and not look.changes:
            return
        self._looks += 1
        self._history.append((self._looks, look.changes))
        if look.changes is None or any(product is None for product, _ in look.changes):
            self._everything += 1
            self._kept.clear()
            self._by_product.clear()
            self._bytes = 0
            return
        for change in look.changes:
            for bucket in (change[0], None):
                for key in list(self._by_product.get(bucket, ())):
                    kept = self._kept.get(key)
                    if kept is not None and kept.reach.touched_by(change):
                        self._drop(key)

    def _changed_since(self, begun: int, reach: Reach) -> bool:
        """Whether a look after the `begun`-th found a change `reach` shows (or may have: the
        looks since are no longer all remembered)."""
        if begun == self._looks:
            return False
        if not self._history or self._history[0][0] > begun + 1:
            return True
        return any(
            changes is None or any(reach.touched_by(change) for change in changes)
            for number, changes in self._history
            if number > begun
        )

    def _keep(self, key: Hashable, kept: _Kept) -> None:
        self._drop(key)
        if len(kept.encoded) > self._max_bytes:
            return
        while self._kept:  # the oldest first: those past their seconds, then any beyond the bounds
            oldest_key, oldest = next(iter(self._kept.items()))
            if (
                len(self._kept) < self._max
                and self._bytes + len(kept.encoded) <= self._max_bytes
                and timedelta(0) <= kept.at - oldest.at < self._ttl
            ):
                break
            self._drop(oldest_key)
        self._kept[key] = kept
        self._bytes += len(kept.encoded)
        for product in kept.reach.products if kept.reach.products is not None else (None,):
            self._by_product.setdefault(product, set()).add(key)

    def _drop(self, key: Hashable) -> None:
        kept = self._kept.pop(key, None)
        if kept is None:
            return
        self._bytes -= len(kept.encoded)
        for product in kept.reach.products if kept.reach.products is not None else (None,):
            bucket = self._by_product.get(product)
            if bucket is not None:
                bucket.discard(key)
                if not bucket:
                    del self._by_product[product]
