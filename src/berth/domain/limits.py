"""Rate limiting arithmetic: a token bucket per connection. Pure; the caller owns time."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Bucket:
    """`tokens` left at time `at` (seconds; shared buckets use the wall clock, so that every
    process reads the same scale)."""

    tokens: float
    at: float


def take_up_to(
    bucket: Bucket | None, now: float, capacity: float, per_second: float, wanted: int = 1
) -> tuple[Bucket, int, float]:
    """Spend up to `wanted` whole tokens at `now` (as many as are there, at least one).

    Returns the new bucket, the tokens granted, and 0.0; or, when not one token is there, the
    refilled bucket, 0 and the seconds until one will be. A new bucket starts full; tokens
    accrue at `per_second` up to `capacity`. A refused request costs nothing, so a client that
    waits the answer's seconds is let through.
    """
    if bucket is None:
        tokens = capacity
    else:
        elapsed = max(now - bucket.at, 0.0)  # a clock that steps back refills nothing
        tokens = min(capacity, bucket.tokens + elapsed * per_second)
    granted = min(wanted, math.floor(tokens))
    if granted >= 1:
        return Bucket(tokens - granted, now), granted, 0.0
    return Bucket(tokens, now), 0, (1.0 - tokens) / per_second
