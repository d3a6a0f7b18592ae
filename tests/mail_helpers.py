"""A real SMTP server on loopback (aiosmtpd) for the mail tests: it records every message it
accepts, parsed, and can refuse or require TLS and a password."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import warnings
from collections import Counter, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from berth.container import Services
from berth.domain.staff import COMMAND_LINE


@dataclass
class Sink:
    """An aiosmtpd handler: keeps what it accepts; answers `replies` first (e.g. a 451)."""

    replies: deque[str] = field(default_factory=deque)
    received: list[EmailMessage] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)  # each message as it came, unparsed
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    port: int = 0
    delay: float = 0.0  # seconds between taking a message and answering 250
    in_flight: int = 0  # messages taken and not yet answered
    connections: int = 0  # clients connected now
    most_connections: int = 0  # clients connected at once, at most
    turned_away: int = 0  # clients greeted with 421: over `max_connections`
    overlapping: list[str] = field(default_factory=list)  # Message-IDs taken while one was open
    _open: Counter[str] = field(default_factory=Counter)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.replies:
            return self.replies.popleft()
        assert isinstance(envelope.content, bytes)
        parsed = message_from_bytes(envelope.content, policy=default)
        assert isinstance(parsed, EmailMessage)
        self.received.append(parsed)
        self.raw.append(envelope.content)
        self.envelopes.append((envelope.mail_from or "", list(envelope.rcpt_tos)))
        message_id = str(parsed["Message-ID"])
        self._open[message_id] += 1
        if self._open[message_id] > 1:
            self.overlapping.append(message_id)
        self.in_flight += 1
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
            self._open[message_id] -= 1
        return "250 OK"


def password_check(user: str, password: str) -> Any:
    def check(server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any) -> AuthResult:
        ok = (
            isinstance(data, LoginPassword)
            and data.login == user.encode()
            and data.password == password.encode()
        )
        return AuthResult(success=ok)

    return check


@contextlib.asynccontextmanager
async def smtp_sink(
    tls: ssl.SSLContext | None = None,
    *,
    implicit: bool = False,
    auth: tuple[str, str] | None = None,
    idle_timeout: float = 300,
    max_connections: int | None = None,
) -> AsyncIterator[Sink]:
    """An SMTP server on 127.0.0.1 at a free port: plain, with STARTTLS (`tls`), or TLS from
    the first byte (`implicit`); with `auth`, it requires that login over TLS. With
    `max_connections`, a client beyond that many at once is greeted with 421 and dropped, as
    relays limit their clients."""
    sink = Sink()

    class CountedSMTP(SMTP):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            if max_connections is not None and sink.connections >= max_connections:
                sink.turned_away += 1
                assert isinstance(transport, asyncio.WriteTransport)
                transport.write(b"421 sink.test too many connections\r\n")
                transport.close()
                return
            sink.connections += 1
            sink.most_connections = max(sink.most_connections, sink.connections)
            self._counted = True
            super().connection_made(transport)

        def connection_lost(self, error: Exception | None) -> None:
            if getattr(self, "_counted", False):
                sink.connections -= 1
                self._counted = False
                super().connection_lost(error)

    def protocol() -> SMTP:
        with warnings.catch_warnings():
            # "AUTH without TLS": aiosmtpd cannot tell that implicit TLS is TLS.
            warnings.simplefilter("ignore", UserWarning)
            return _protocol()

    def _protocol() -> SMTP:
        return CountedSMTP(
            sink,
            hostname="sink.test",
            timeout=idle_timeout,  # a client idle this long is disconnected
            tls_context=None if implicit else tls,
            require_starttls=tls is not None and not implicit,
            auth_required=auth is not None,
            # aiosmtpd knows only STARTTLS as TLS; with implicit TLS every byte is encrypted.
            auth_require_tls=not implicit,
            authenticator=password_check(*auth) if auth else None,
        )

    loop = asyncio.get_running_loop()
    server = await loop.create_server(protocol, "127.0.0.1", 0, ssl=tls if implicit else None)
    sink.port = server.sockets[0].getsockname()[1]
    try:
        yield sink
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2)


def parts(message: EmailMessage) -> tuple[str, str]:
    """The text and HTML bodies of a received message."""
    text = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    assert text is not None and html is not None
    return str(text.get_content()), str(html.get_content())


async def box_office(services: Services, connection: str = "Reseller A") -> None:
    """Make `connection` the supplier's own box office (its contract's `boxOffice`): its guests'
    receipts show the price and the cancellation terms."""
    await services.contracts.save(connection, {"boxOffice": True}, base_version=None, actor=COMMAND_LINE)
