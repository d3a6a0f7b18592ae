"""Rate limiting arithmetic: a token bucket per connection. Pure; the caller owns time."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bucket:
    """`tokens` left at time `at` (seconds on any monotonic scale)."""

    tokens: float
    at: float


def take(bucket: Bucket | None, now: float, capacity: float, per_second: float) -> tuple[Bucket, float]:
    """Spend one token for a request at `now`.

    Returns the new bucket and 0.0 when the request may go ahead, or the unchanged-but-refilled
    bucket and the seconds until a token will be there when it may not. A new bucket starts
    full; tokens accrue at `per_second` up to `capacity`. A refused request costs nothing, so
    a client that waits the answer's seconds is let through.
    """
    if bucket is None:
        tokens = capacity
    else:
        elapsed = max(now - bucket.at, 0.0)  # a clock that steps back refills nothing
        tokens = min(capacity, bucket.tokens + elapsed * per_second)
    if tokens >= 1.0:
        return Bucket(tokens - 1.0, now), 0.0
    return Bucket(tokens, now), (1.0 - tokens) / per_second
