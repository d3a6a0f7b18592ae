"""Per-connection rate limiting, shared by every process on the database.

Each process takes tokens from the connection's bucket in the database in small allotments
(about a second's worth) and spends them locally, so the database is asked once per allotment,
not once per request, and every process together never lets through more than the limit."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from berth.services.clock import Clock, system_clock
from berth.settings import Settings
from berth.store import limits_repo
from berth.store.database import Database

# An allotment a process took and has not spent is dropped after this long, so tokens taken
# from the shared bucket cannot pile up in one process and come out later as a burst.
ALLOTMENT_SECONDS = 1.0


def seconds_of(clock: Clock) -> Callable[[], float]:
    """A seconds counter for the limiter: the wall clock in production (every process reads the
    same shared buckets); the test clock's time when tests moved time into their own hands."""
    if clock is system_clock:
        return time.time
    return lambda: clock().timestamp()


@dataclass
class _Allotment:
    tokens: int
    at: float


class RateLimiter:
    """A token bucket per connection: `BERTH_RATE_LIMIT_PER_MINUTE` tokens a minute, up to
    `BERTH_RATE_LIMIT_BURST` (default: the per-minute number) saved up. Settings are read on
    every call, so a change applies at once."""

    def __init__(
        self, settings: Settings, database: Database, seconds: Callable[[], float] = time.time
    ) -> None:
        self._settings = settings
        self._db = database
        self._seconds = seconds
        self._allotments: dict[str, _Allotment] = {}

    async def check(self, key: str) -> float:
        """0.0 when a request of `key` may go ahead (and is counted), else the seconds to wait."""
        per_minute = self._settings.rate_limit_per_minute
        if per_minute <= 0:
            return 0.0
        now = self._seconds()
        allotment = self._allotments.get(key)
        if allotment is not None and allotment.tokens > 0 and 0 <= now - allotment.at < ALLOTMENT_SECONDS:
            allotment.tokens -= 1
            return 0.0
        capacity = float(self._settings.rate_limit_burst or per_minute)
        per_second = per_minute / 60.0
        wanted = max(1, min(int(capacity), math.ceil(per_second * ALLOTMENT_SECONDS)))
        async with self._db.transaction(write=True) as conn:
            granted, wait = await limits_repo.take_tokens(conn, key, now, capacity, per_second, wanted)
        if granted:
            self._allotments[key] = _Allotment(granted - 1, now)
        return wait
