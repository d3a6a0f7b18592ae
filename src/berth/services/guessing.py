"""Guessing, slowed down: failed sign-ins, wrong admin tokens at sign-in and wrong bearer
tokens on the admin API count against the client's address and, for a sign-in, the account
named. A key with too many failures waits longer after each, then is locked out for a while
(TOO_MANY_REQUESTS with the seconds to wait); each lockout is an audit entry and a log line.

The failures live in the database, so every process of one Berth counts them together. An
address's limit is below an account's, and its failures stop counting once it is locked out:
one noisy address cannot lock a member of staff out of every other address."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from berth.domain.audit import Target
from berth.domain.errors import TooManyRequests
from berth.domain.guessing import Policy, current
from berth.domain.staff import Actor, Role
from berth.services.clock import Clock
from berth.settings import Settings
from berth.store import audit_repo, guessing_repo
from berth.store.database import Database

log = structlog.get_logger("berth.security")

# Who locks a key out in the audit trail: Berth itself.
GUARD = Actor("Berth (guessing guard)", Role.ADMIN)
FREE_ADDRESS_FAILURES = 3  # before an address waits at all: a typo or two costs nothing
# The bootstrap admin token is one account for its guessers.
ADMIN_TOKEN_ACCOUNT = "BERTH_ADMIN_TOKEN"


@dataclass(frozen=True)
class GuessKey:
    kind: str  # "address" or "account"
    name: str
    policy: Policy

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"[:300]


class GuessingGuard:
    def __init__(self, database: Database, settings: Settings, clock: Clock) -> None:
        self._db = database
        self._clock = clock
        delay, lockout = settings.guess_delay_seconds, settings.guess_lockout_seconds
        self._address = Policy(FREE_ADDRESS_FAILURES, settings.guess_address_limit, delay, lockout)
        self._account = Policy(settings.guess_address_limit, settings.guess_account_limit, delay, lockout)
        # The keys waiting, as this process last read them (or made them wait): the admin API's
        # requests look here, not in the database, as API keys are trusted for a while.
        self._fresh_for = settings.auth_cache_seconds
        self._waiting: dict[str, float] = {}
        self._read_at = -math.inf

    def address(self, address: str) -> GuessKey:
        return GuessKey("address", address, self._address)

    def account(self, name: str) -> GuessKey:
        return GuessKey("account", name.strip().lower(), self._account)

    def device(self, nonce: str) -> GuessKey:
        """A browser that signed in to an account before (its device cookie): limited like an
        account, on its own."""
        return GuessKey("device", nonce, self._account)

    def _now(self) -> float:
        return self._clock().timestamp()

    @staticmethod
    def _refuse(wait: float) -> None:
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise TooManyRequests(
                f"Too many wrong passwords or tokens: try again in {seconds} s", retry_after=seconds
            )

    async def check(self, keys: Sequence[GuessKey]) -> frozenset[str]:
        """TOO_MANY_REQUESTS while any of `keys` must wait, read from the database now (a
        sign-in); else the keys with failures kept."""
        async with self._db.single_read() as conn:
            kept = await guessing_repo.known(conn, [k.key for k in keys])
        now = self._now()
        self._refuse(
            max((current(kept[k.key], now, k.policy).wait(now) for k in keys if k.key in kept), default=0)
        )
        return frozenset(kept)

    async def check_recent(self, key: GuessKey) -> None:
        """TOO_MANY_REQUESTS while `key` must wait, as the database said at most
        BERTH_AUTH_CACHE_SECONDS ago (every admin API request: one read per process and period,
        not one per request). A wait set by another process may thus be honoured that late;
        failures count in the database all the same."""
        now = self._now()
        if now - self._read_at >= self._fresh_for:
            async with self._db.single_read() as conn:
                self._waiting = await guessing_repo.waiting(conn, now)
            self._read_at = now
        self._refuse(self._waiting.get(key.key, 0.0) - now)

    async def failed(self, keys: Sequence[GuessKey], address: str) -> None:
        """One more failure of each of `keys`; a key that this locks out is audited and logged."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            for key in keys:
                failures, locked = await guessing_repo.fail(conn, key.key, now.timestamp(), key.policy)
                if failures.wait(now.timestamp()) > 0:
                    self._waiting[key.key] = failures.blocked_until
                if not locked:
                    continue
                seconds = round(failures.blocked_until - failures.last)
                details = {"failures": failures.count, "lockedSeconds": seconds, "address": address}
                await audit_repo.record(
                    conn, GUARD, "guessing.lockout", Target(key.kind, key.name), details, at=now
                )
                log.warning("locked out after wrong guesses", kind=key.kind, name=key.name, **details)

    async def succeeded(self, key: GuessKey) -> None:
        """The failures of the account (or device) that signed in are forgotten (not the
        address's: signing in to one's own account must not clear guesses at others')."""
        async with self._db.transaction(write=True) as conn:
            await guessing_repo.forget(conn, key.key)
