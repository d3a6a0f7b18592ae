"""Throttling of password and token guessing: the failures counted against one key (a client
address, or an account), the delay they impose and the lockout that ends them. Pure: the store
keeps a key's `Failures`, the service asks what comes next.

After `free` failures each further one makes the key wait before its next attempt, twice as
long each time; the `limit`-th locks the key for `lockout_seconds`. A key's failures are
forgotten once `lockout_seconds` pass without one, so a lockout's end starts afresh."""

from __future__ import annotations

from dataclasses import dataclass

# A bearer token at least this long is taken for random (the install guide makes the admin token
# with `openssl rand -base64 32`: 44 characters; a staff token is 256 random bits): guessing it
# is hopeless, so its owner is let in even from an address locked out by others' wrong guesses.
UNGUESSABLE_TOKEN_LENGTH = 32


@dataclass(frozen=True)
class Policy:
    free: int
    limit: int
    delay_seconds: float
    lockout_seconds: float


@dataclass(frozen=True)
class Failures:
    count: int = 0
    last: float = 0.0  # seconds since the epoch of the last failure
    blocked_until: float = 0.0

    def wait(self, now: float) -> float:
        """Seconds until the key may try again (0: now)."""
        return max(0.0, self.blocked_until - now)


def current(failures: Failures, now: float, policy: Policy) -> Failures:
    """The failures that still count at `now`."""
    if failures.wait(now) == 0 and now - failures.last >= policy.lockout_seconds:
        return Failures()
    return failures


def after_failure(failures: Failures, now: float, policy: Policy) -> tuple[Failures, bool]:
    """The key's failures after one more at `now`, and whether this one locked it."""
    count = current(failures, now, policy).count + 1
    if count >= policy.limit:
        return Failures(count, now, now + policy.lockout_seconds), count == policy.limit
    if count > policy.free:
        delay = min(policy.delay_seconds * 2 ** (count - policy.free - 1), policy.lockout_seconds)
        return Failures(count, now, now + delay), False
    return Failures(count, now, 0.0), False


def unguessable(token: str) -> bool:
    return len(token) >= UNGUESSABLE_TOKEN_LENGTH
