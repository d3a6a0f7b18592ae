"""Answers reused while nothing has changed: resellers poll the same availability questions
over and over, and most polls find nothing new.

An answer is reused only when (1) the database's change mark is the one it was computed under
(nothing committed since, by any process: `berth.store.change_marks`), and (2) it is younger
than `BERTH_ANSWER_CACHE_SECONDS`: states that change with the clock alone (a hold running out,
a cutoff passing) are at most that late. The key names everything else an answer depends on
(the catalogue version, the question, the view). Errors are never kept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from datetime import datetime, timedelta

from berth.services.clock import Clock
from berth.store.database import Database

MAX_ANSWERS = 4096


@dataclass(frozen=True)
class _Kept:
    mark: object
    at: datetime
    encoded: bytes


class AnswerCache:
    def __init__(
        self, database: Database, clock: Clock, seconds: float, max_answers: int = MAX_ANSWERS
    ) -> None:
        self._db = database
        self._clock = clock
        self._ttl = timedelta(seconds=seconds)
        self._max = max_answers
        self._kept: dict[Hashable, _Kept] = {}
        self._mark: object = None  # the mark the kept answers were computed under

    @property
    def kept(self) -> int:
        """How many answers are kept now."""
        return len(self._kept)

    async def answer(self, key: Hashable, compute: Callable[[], Awaitable[bytes]]) -> bytes:
        """The encoded answer under `key`: a kept one if still good, else `compute()`'s."""
        if self._ttl <= timedelta(0):
            return await compute()
        mark = await self._db.change_mark()  # before computing: a commit meanwhile moves it on
        if mark is None:
            return await compute()
        now = self._clock()
        kept = self._kept.get(key)
        if kept is not None and kept.mark == mark and timedelta(0) <= now - kept.at < self._ttl:
            self._kept[key] = self._kept.pop(key)  # the most recently used go last
            return kept.encoded
        encoded = await compute()
        if mark != self._mark:
            # Marks only move on: answers computed under another one can never be reused.
            # Dropped at once rather than when the count pushes them out (a busy server's
            # worker held thousands of them, megabytes it would never serve).
            self._kept.clear()
            self._mark = mark
        self._kept.pop(key, None)
        if len(self._kept) >= self._max:
            self._kept.pop(next(iter(self._kept)))  # the least recently used
        self._kept[key] = _Kept(mark, now, encoded)
        return encoded
