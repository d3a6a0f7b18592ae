"""The SMTP connections a mail worker keeps open between emails: at most BERTH_MAIL_CONCURRENCY,
and no more than the relay accepts. A relay that refuses one more connection while others of
ours are open (a 421 greeting, a refused or timed-out connect) is at its limit, not down: the
email waits for one of our open connections instead of failing an attempt, and the worker stays
at that many connections for RELAY_LIMIT_SECONDS before it tries one more again."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    import aiosmtplib

log = structlog.get_logger("berth.mail")

RELAY_LIMIT_SECONDS = 60.0


@dataclass
class Link:
    """A connection held for one email. `reused`: kept from an earlier email (the relay may have
    dropped it since); `usable`: it can be kept for the next one."""

    client: aiosmtplib.SMTP
    reused: bool
    usable: bool = True


class SmtpConnections:
    def __init__(
        self,
        connect: Callable[[], Awaitable[aiosmtplib.SMTP]],
        limit: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._connect = connect
        self._limit = limit
        self._clock = clock
        self._allowed = limit  # lowered to what the relay accepted
        self._allowed_until = 0.0
        self._free: list[aiosmtplib.SMTP] = []
        self._busy = 0  # connections held (or being opened) for an email
        self._changed = asyncio.Condition()

    @property
    def allowed(self) -> int:
        """How many connections may be open now: the limit, or what the relay accepted lately."""
        if self._allowed < self._limit and self._clock() >= self._allowed_until:
            self._allowed = self._limit
        return self._allowed

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[Link]:
        """A connection for one email: a kept one, else a new one while the relay accepts more,
        else the next of ours to be free. Raises when the relay accepts none."""
        link = await self._acquire()
        try:
            yield link
        except BaseException:
            link.usable = False
            raise
        finally:
            await self._release(link)

    async def send(self, link: Link, sender: str, recipient: str, data: bytes) -> None:
        """Send over `link`; a kept connection the relay has dropped meanwhile is replaced once,
        at once (it is not the email's failure)."""
        import aiosmtplib

        try:
            await link.client.sendmail(sender, [recipient], data)
        except (aiosmtplib.SMTPServerDisconnected, ConnectionError) as exc:
            if not link.reused:
                raise
            log.info("kept SMTP connection dropped; sending over a new one", error=str(exc))
            link.client.close()
            link.client, link.reused = await self._connect(), False
            await link.client.sendmail(sender, [recipient], data)

    def close(self) -> None:
        """Close the connections kept open."""
        while self._free:
            self._free.pop().close()

    async def _acquire(self) -> Link:
        while True:
            async with self._changed:
                while not self._free and self._busy >= self.allowed:
                    await self._changed.wait()
                self._busy += 1
                if self._free:
                    return Link(self._free.pop(), reused=True)
            try:
                return Link(await self._connect(), reused=False)
            except BaseException as exc:
                self._busy -= 1
                others = self._busy
                at_limit = isinstance(exc, Exception) and others > 0
                if at_limit:  # the relay took no more: stay at what it took, for a while
                    self._allowed = min(self._allowed, others)
                    self._allowed_until = self._clock() + RELAY_LIMIT_SECONDS
                async with self._changed:
                    self._changed.notify_all()
                if not at_limit:
                    raise
                log.info("SMTP relay took no more connections; waiting for one of ours", open=others)

    async def _release(self, link: Link) -> None:
        if link.usable:
            self._free.append(link.client)
        else:
            link.client.close()
        self._busy -= 1
        async with self._changed:
            self._changed.notify_all()
