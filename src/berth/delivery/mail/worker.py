"""The mail worker: claims due messages, sends them over SMTP (or files them in the
database's mailbox when no SMTP server is configured), records each outcome, retries later.

At least once, like webhooks: a message is marked sent only after the SMTP server accepted it.
A claimed batch is leased and the lease renewed while it is being sent; a worker that dies
mid-send stops renewing, the lease runs out, and another worker sends that batch again with
the same Message-ID. A batch is at most `mail_concurrency` messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import ssl
from datetime import timedelta
from typing import TYPE_CHECKING

import structlog

from berth.delivery.mail.compose import FALLBACK_FROM, mail_address, mail_sender
from berth.delivery.mail.connections import Link, SmtpConnections
from berth.delivery.mail.headers import UnsafeMessage
from berth.delivery.mail.outbox import Batch, GuestMail
from berth.delivery.mail.smtp import build_email, flattened, sender_of
from berth.domain.smtp import SmtpServer, parse_smtp_url
from berth.domain.webhooks import next_retry_delay, parse_schedule
from berth.logs import info_logged
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.tickets import IssuedTicket
from berth.settings import Settings
from berth.store import mail_repo
from berth.store.database import Database
from berth.store.faults import log_failure
from berth.store.mail_repo import FAILED, MAILBOX, PENDING, SENT, UNDELIVERABLE, Message, Outcome, Written
from berth.tickets.documents import TicketDocuments

if TYPE_CHECKING:
    import aiosmtplib

log = structlog.get_logger("berth.mail")

LEASE = timedelta(seconds=6)
RENEW_EVERY_SECONDS = 2.0


class Rejected(Exception):
    """The SMTP server refused the message for good (a 5XX answer): not retried."""


class MailWorker:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        mail: GuestMail,
        catalogs: CatalogService,
        tickets: TicketDocuments,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._mail = mail
        self._catalogs = catalogs
        self._tickets = tickets
        self._schedule = parse_schedule(settings.retry_schedule)
        self._server: SmtpServer | None = (
            parse_smtp_url(settings.smtp_url.get_secret_value()) if settings.smtp_url else None
        )
        self._tls: ssl.SSLContext | None = None
        if self._server is not None and self._server.cafile:
            self._tls = ssl.create_default_context(cafile=self._server.cafile)
        self._held: set[str] = set()
        # At most one per message sent at once, and no more than the relay takes.
        self._connections = SmtpConnections(self._connect, settings.mail_concurrency)

    async def run(self, stop: asyncio.Event) -> None:
        """Send until `stop` is set; sleep when idle until woken or polled. The batch in
        flight when stopped is finished and recorded, not dropped."""
        renewal = asyncio.create_task(self._renew_held())
        try:
            while not stop.is_set():
                self._mail.wakeup.clear()
                try:
                    sent = await self.send_due()
                except Exception as exc:  # the loop must not die; what failed is retried on the next tick
                    log_failure(log, "mail loop failed", exc)
                    sent = 0
                if sent < self._settings.mail_concurrency:
                    await self._idle(stop)
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
            self.close()

    def close(self) -> None:
        """Close the SMTP connections kept open."""
        self._connections.close()

    async def send_due(self) -> int:
        """One batch: claim what is due, send it all at once, record every outcome in one
        transaction. Returns how many messages were claimed."""
        now = self._clock()
        async with self._db.transaction(write=True) as conn:
            claimed = await mail_repo.claim_due(conn, now, now + LEASE, self._settings.mail_concurrency)
        if not claimed:
            return 0
        self._held.update(m.id for m in claimed)
        try:
            sender, reply_to = await self._addresses()
            batch = await self._mail.write_all(claimed)
            outcomes = await asyncio.gather(*(self._attempt(m, batch, sender, reply_to) for m in claimed))
            async with self._db.transaction(write=True) as conn:
                await mail_repo.record(conn, outcomes)
        finally:
            self._held.difference_update(m.id for m in claimed)
        return len(claimed)

    async def _idle(self, stop: asyncio.Event) -> None:
        waiters = [asyncio.create_task(event.wait()) for event in (stop, self._mail.wakeup)]
        await asyncio.wait(
            waiters, timeout=self._settings.delivery_poll_seconds, return_when=asyncio.FIRST_COMPLETED
        )
        for waiter in waiters:
            waiter.cancel()

    async def _renew_held(self) -> None:
        while True:
            await asyncio.sleep(RENEW_EVERY_SECONDS)
            if not self._held:
                continue
            try:
                async with self._db.transaction(write=True) as conn:
                    await mail_repo.renew_leases(conn, list(self._held), self._clock() + LEASE)
            except Exception as exc:
                log_failure(log, "mail lease renewal failed", exc)

    async def _addresses(self) -> tuple[str, str | None]:
        """The sender (BERTH_MAIL_FROM, else the supplier), and where replies go: the supplier
        (the catalogue's contact email), when it has a valid one."""
        catalog = (await self._catalogs.snapshot()).catalog
        sender = mail_sender(self._settings.mail_from, catalog) or FALLBACK_FROM
        return sender, mail_address(catalog.supplier.contact.email)[0]

    async def _attempt(self, message: Message, batch: Batch, sender: str, reply_to: str | None) -> Outcome:
        """Send a message, written out now (in `batch`) or on an earlier attempt."""
        fresh = batch.written.get(message.id)
        attempts = message.attempts + 1
        if isinstance(fresh, str):  # what it is about is gone
            return Outcome(message.id, FAILED, attempts, fresh, None, None)
        written = fresh or message.written
        assert written is not None
        if written.error is not None:
            return Outcome(message.id, UNDELIVERABLE, attempts, written.error, None, None, fresh)
        if self._server is None:
            return Outcome(message.id, MAILBOX, attempts, None, None, self._clock(), fresh)
        try:
            # A connection first: while the relay is unreachable no PDF is rendered for nothing.
            async with self._connections.held() as link:
                attachments = await self._attachments(written, batch.issued)
                email = build_email(message, written, sender, reply_to, attachments)
                # Flattened once, and sent as bytes: the email package's own send path would copy
                # and flatten it again.
                data = flattened(email)
                envelope, recipient = sender_of(sender)[1], written.recipient
                assert recipient is not None  # a message without one is undeliverable
                await self._send(link, envelope, recipient, data)
        except UnsafeMessage as exc:
            log.warning("mail not sent", message=message.id, error=str(exc))
            return Outcome(message.id, FAILED, attempts, str(exc), None, None, fresh)
        except Rejected as exc:
            log.warning("mail refused", message=message.id, error=str(exc))
            return Outcome(message.id, FAILED, attempts, str(exc), None, None, fresh)
        except Exception as exc:  # unreachable, timed out, a 4XX: try again later
            error = f"{type(exc).__name__}: {exc}"
            delay = next_retry_delay(self._schedule, attempts, random.random())
            if info_logged():
                log.info("mail attempt failed", message=message.id, error=error, attempt=attempts)
            if delay is None:
                return Outcome(message.id, FAILED, attempts, error, None, None, fresh)
            retry_at = self._clock() + timedelta(seconds=delay)
            return Outcome(message.id, PENDING, attempts, error, retry_at, None, fresh)
        if info_logged():
            log.info("mail sent", message=message.id, kind=message.kind, attempt=attempts)
        return Outcome(message.id, SENT, attempts, None, None, self._clock(), fresh)

    async def _attachments(
        self, written: Written, issued: dict[str, IssuedTicket]
    ) -> list[tuple[str, bytes]]:
        """The tickets' PDFs (a gift voucher's), rendered now; a booking no longer issued
        (cancelled since) has none, nor a voucher cancelled or expired.
        A booking read to write the email out now is not read again."""
        found = []
        for attachment in written.attachments:
            if "giftId" in attachment:
                voucher = await self._mail.gifts.pdf(attachment["giftId"]) if self._mail.gifts else None
                if voucher is not None:
                    found.append((attachment["filename"], voucher))
                continue
            booking_id = attachment["bookingId"]
            ticket = issued.get(booking_id)
            tickets = (
                await self._tickets.for_issued(ticket)
                if ticket is not None
                else await self._tickets.for_booking(booking_id)
            )
            if tickets is not None:
                found.append((attachment["filename"], tickets.pdf.content))
        return found

    async def _send(self, link: Link, sender: str, recipient: str, data: bytes) -> None:
        """Send over a connection kept from an earlier send (no new TLS handshake and login
        for each email), or a new one; a 5XX answer is final (Rejected)."""
        import aiosmtplib  # loaded by the first email sent over SMTP

        try:
            await self._connections.send(link, sender, recipient, data)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            if all(500 <= refused.code < 600 for refused in exc.recipients):
                raise Rejected(str(exc)) from exc
            raise
        except aiosmtplib.SMTPResponseException as exc:
            if 500 <= exc.code < 600:
                raise Rejected(f"{exc.code} {exc.message}") from exc
            raise

    async def _connect(self) -> aiosmtplib.SMTP:
        import aiosmtplib

        server = self._server
        assert server is not None  # only called to send over SMTP

        client = aiosmtplib.SMTP(
            hostname=server.host,
            port=server.port,
            username=server.username,
            password=server.password,
            use_tls=server.implicit_tls,
            start_tls=True if server.require_starttls else None,
            tls_context=self._tls,
            timeout=self._settings.mail_timeout_seconds,
        )
        await client.connect()
        return client
