"""Webhooks of a connection (create, update, list, delete) and their deliveries for staff
(list, inspect, redeliver); signing secret rotation."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from berth.domain import lengths
from berth.domain.audit import Target
from berth.domain.errors import BadRequest, NotFound
from berth.domain.sealing import SecretBox
from berth.domain.staff import Actor
from berth.domain.times import format_utc
from berth.domain.webhooks import Webhook, new_signing_secret, parse_event, webhook_capabilities
from berth.services.clock import Clock
from berth.services.targets import check_delivery_url
from berth.settings import Settings
from berth.store import audit_repo, connections_repo, deliveries_repo, webhooks_repo
from berth.store.database import Database
from berth.store.deliveries_repo import Delivery

MAX_HEADERS = 20


@dataclass(frozen=True)
class WebhookInput:
    event: str | None = None
    url: str | None = None
    use_contact_language: bool | None = None
    headers: dict[str, str] | None = None
    retry_on_error: bool | None = None


# RFC 9110: a field name is a token; a value is visible characters, spaces and tabs inside (no
# control character, which a receiver may take for the end of a line or refuse).
_FIELD_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}")
_FIELD_VALUE = re.compile(r"([^\x00-\x1f\x7f]([^\x00-\x08\x0a-\x1f\x7f]*[^\x00-\x1f\x7f])?)?")


def _check_headers(headers: dict[str, str]) -> dict[str, str]:
    if len(headers) > MAX_HEADERS:
        raise BadRequest(f"headers may hold at most {MAX_HEADERS} entries")
    for name, value in headers.items():
        if _FIELD_NAME.fullmatch(name) is None or len(name) > lengths.HEADER_NAME:
            raise BadRequest(
                f"headers: {name!r} is not a valid header name (letters, digits and !#$%&'*+-.^_`|~, "
                f"at most {lengths.HEADER_NAME} characters)"
            )
        if _FIELD_VALUE.fullmatch(value) is None or len(value) > lengths.HEADER_VALUE:
            raise BadRequest(
                f"headers: the value of {name!r} is not a valid header value (no control characters, "
                f"at most {lengths.HEADER_VALUE} characters)"
            )
    return dict(headers)


class WebhookService:
    def __init__(
        self, database: Database, settings: Settings, clock: Clock, box: SecretBox, known: Sequence[str]
    ) -> None:
        """`known`: the ids of the capabilities this server implements, in registry order."""
        self._known = list(known)
        self._db = database
        self._settings = settings
        self._clock = clock
        self._box = box

    async def create(self, connection_id: str, data: WebhookInput, capabilities: frozenset[str]) -> Webhook:
        if data.event is None:
            raise BadRequest("event is required")
        if data.url is None:
            raise BadRequest("url is required")
        event = parse_event(data.event)
        await check_delivery_url(data.url, self._settings.webhook_allow_private_targets)
        now = self._clock()
        webhook = Webhook(
            id=str(uuid.uuid4()),
            connection_id=connection_id,
            event=event,
            url=data.url,
            capabilities=webhook_capabilities(event, capabilities, self._known),
            use_contact_language=True if data.use_contact_language is None else data.use_contact_language,
            headers=_check_headers(data.headers or {}),
            retry_on_error=True if data.retry_on_error is None else data.retry_on_error,
            created_at=now,
            updated_at=now,
        )
        async with self._db.transaction(write=True) as conn:
            most = self._settings.max_webhooks_per_connection
            if await webhooks_repo.count_webhooks(conn, connection_id) >= most:
                raise BadRequest(f"A connection may have at most {most} webhooks; delete one first")
            await webhooks_repo.insert_webhook(conn, webhook)
        return webhook

    async def update(
        self, connection_id: str, webhook_id: str, data: WebhookInput, capabilities: frozenset[str]
    ) -> Webhook:
        event = parse_event(data.event) if data.event is not None else None
        if data.url is not None:
            await check_delivery_url(data.url, self._settings.webhook_allow_private_targets)
        async with self._db.transaction(write=True) as conn:
            webhook = await self._owned(conn, connection_id, webhook_id)
            event = event or webhook.event
            updated = replace(
                webhook,
                event=event,
                url=data.url if data.url is not None else webhook.url,
                capabilities=webhook_capabilities(event, capabilities, self._known),
                use_contact_language=webhook.use_contact_language
                if data.use_contact_language is None
                else data.use_contact_language,
                headers=_check_headers(data.headers) if data.headers is not None else webhook.headers,
                retry_on_error=webhook.retry_on_error if data.retry_on_error is None else data.retry_on_error,
                updated_at=self._clock(),
                disabled_at=None,
                disabled_reason=None,
            )
            await webhooks_repo.save_webhook(conn, updated)
        return updated

    async def _owned(self, conn: Any, connection_id: str, webhook_id: str) -> Webhook:
        webhook = await webhooks_repo.get_webhook(conn, webhook_id, connection_id)
        if webhook is None:
            raise BadRequest(f"invalid webhookId {webhook_id!r}", webhookId=webhook_id)
        return webhook

    async def find(self, connection_id: str | None = None) -> list[Webhook]:
        """A connection's webhooks (at most `BERTH_MAX_WEBHOOKS_PER_CONNECTION`), or every one's."""
        async with self._db.transaction(write=False) as conn:
            return await webhooks_repo.list_webhooks(conn, connection_id)

    async def page(self, limit: int, offset: int) -> tuple[list[Webhook], int]:
        """Every connection's webhooks, a page at a time, and how many there are."""
        async with self._db.transaction(write=False) as conn:
            found = await webhooks_repo.list_webhooks(conn, limit=limit, offset=offset)
            return found, await webhooks_repo.count_webhooks(conn)

    async def delete(self, connection_id: str, webhook_id: str) -> Webhook:
        async with self._db.transaction(write=True) as conn:
            webhook = await self._owned(conn, connection_id, webhook_id)
            await webhooks_repo.delete_webhooks(conn, [webhook.id])
        return webhook

    async def delete_by_url(self, connection_id: str, url: str) -> list[Webhook]:
        async with self._db.transaction(write=True) as conn:
            found = [w for w in await webhooks_repo.list_webhooks(conn, connection_id) if w.url == url]
            await webhooks_repo.delete_webhooks(conn, [w.id for w in found])
        return found

    # --- staff ------------------------------------------------------------------------------

    async def webhook(self, webhook_id: str) -> Webhook:
        async with self._db.transaction(write=False) as conn:
            webhook = await webhooks_repo.get_webhook(conn, webhook_id)
        if webhook is None:
            raise NotFound(f"No webhook with id {webhook_id!r}")
        return webhook

    async def deliveries(
        self, *, webhook_id: str | None = None, target_key: str | None = None, status: str | None = None,
        limit: int = 50, offset: int = 0,
    ) -> tuple[list[Delivery], int]:  # fmt: skip
        async with self._db.transaction(write=False) as conn:
            return await deliveries_repo.list_deliveries(
                conn, webhook_id=webhook_id, target_key=target_key, status=status, limit=limit, offset=offset
            )

    async def delivery(self, delivery_id: str) -> tuple[Delivery, list[dict[str, Any]]]:
        async with self._db.transaction(write=False) as conn:
            delivery = await deliveries_repo.get_delivery(conn, delivery_id)
            if delivery is None:
                raise NotFound(f"No delivery with id {delivery_id!r}")
            return delivery, await deliveries_repo.attempts_of(conn, delivery_id)

    async def redeliver(self, delivery_id: str, *, actor: Actor) -> Delivery:
        async with self._db.transaction(write=True) as conn:
            delivery = await deliveries_repo.get_delivery(conn, delivery_id)
            if delivery is None:
                raise NotFound(f"No delivery with id {delivery_id!r}")
            now = self._clock()
            await deliveries_repo.requeue(conn, [delivery_id], now)
            details = {"event": delivery.event, "webhookId": delivery.webhook_id, "was": delivery.status}
            target = Target("delivery", delivery.id, f"{delivery.event} to {delivery.url}")
            await audit_repo.record(conn, actor, "delivery.redeliver", target, details, at=now)
            requeued = await deliveries_repo.get_delivery(conn, delivery_id)
        assert requeued is not None
        return requeued

    async def redeliver_since(self, webhook_id: str, since: datetime, *, actor: Actor) -> int:
        """Send again every message of a webhook created since `since` (all statuses)."""
        hook = await self.webhook(webhook_id)
        async with self._db.transaction(write=True) as conn:
            found, _ = await deliveries_repo.list_deliveries(
                conn, webhook_id=webhook_id, since=since, limit=100000
            )
            now = self._clock()
            await deliveries_repo.requeue(conn, [d.id for d in found], now)
            details = {"since": format_utc(since), "requeued": len(found), "event": hook.event.value}
            target = Target("webhook", hook.id, hook.url)
            await audit_repo.record(conn, actor, "webhook.redeliver", target, details, at=now)
        return len(found)

    async def rotate_secret(self, connection_id: str, grace: timedelta, *, actor: Actor) -> str:
        """A new signing secret; the old ones keep signing (alongside) for `grace`."""
        now = self._clock()
        secret = new_signing_secret()
        async with self._db.transaction(write=True) as conn:
            await webhooks_repo.add_signing_secret(conn, self._box, connection_id, secret, now, now + grace)
            connection = await connections_repo.find_connection(conn, connection_id)
            target = Target("connection", connection_id, connection.name if connection else None)
            details = {"graceHours": grace.total_seconds() / 3600}
            await audit_repo.record(conn, actor, "connection.rotate_secret", target, details, at=now)
        return secret

    async def delivery_counts(self) -> dict[tuple[str, str], int]:
        async with self._db.transaction(write=False) as conn:
            return await deliveries_repo.counts_by_status(conn)
