"""Per-connection rate limiting, in process memory (each API process counts on its own)."""

from __future__ import annotations

import time
from collections.abc import Callable

from berth.domain.limits import Bucket, take
from berth.services.clock import Clock, system_clock
from berth.settings import Settings


def seconds_of(clock: Clock) -> Callable[[], float]:
    """A seconds counter for the limiter: monotonic in production; the test clock's time when
    tests moved time into their own hands."""
    if clock is system_clock:
        return time.monotonic
    return lambda: clock().timestamp()


class RateLimiter:
    """A token bucket per connection: `BERTH_RATE_LIMIT_PER_MINUTE` tokens a minute, up to
    `BERTH_RATE_LIMIT_BURST` (default: the per-minute number) saved up. Settings are read on
    every call, so a change applies at once."""

    def __init__(self, settings: Settings, seconds: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._seconds = seconds
        self._buckets: dict[str, Bucket] = {}

    @property
    def enabled(self) -> bool:
        return self._settings.rate_limit_per_minute > 0

    def check(self, key: str) -> float:
        """0.0 when a request of `key` may go ahead (and is counted), else the seconds to wait."""
        per_minute = self._settings.rate_limit_per_minute
        if per_minute <= 0:
            return 0.0
        capacity = float(self._settings.rate_limit_burst or per_minute)
        bucket, wait = take(self._buckets.get(key), self._seconds(), capacity, per_minute / 60.0)
        self._buckets[key] = bucket
        return wait
