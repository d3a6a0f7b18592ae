"""Webhooks and the connections' signing secrets."""

from __future__ import annotations

import hmac
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, or_, select, update

from berth.domain.sealing import SealError, SecretBox
from berth.domain.webhooks import Webhook, WebhookEvent
from berth.store import driver
from berth.store.connection import DbConnection, transaction_memo
from berth.store.driver import Prepared
from berth.store.tables import signing_secrets, webhooks


def _webhook(row: Any) -> Webhook:
    return Webhook(
        id=row.id,
        connection_id=row.connection_id,
        event=WebhookEvent(row.event),
        url=row.url,
        capabilities=tuple(row.capabilities),
        use_contact_language=row.use_contact_language,
        headers=dict(row.headers),
        retry_on_error=row.retry_on_error,
        created_at=row.created_at,
        updated_at=row.updated_at,
        disabled_at=row.disabled_at,
        disabled_reason=row.disabled_reason,
    )


def _values(webhook: Webhook) -> dict[str, Any]:
    return {
        "connection_id": webhook.connection_id,
        "event": webhook.event.value,
        "url": webhook.url,
        "capabilities": list(webhook.capabilities),
        "use_contact_language": webhook.use_contact_language,
        "headers": webhook.headers,
        "retry_on_error": webhook.retry_on_error,
        "created_at": webhook.created_at,
        "updated_at": webhook.updated_at,
        "disabled_at": webhook.disabled_at,
        "disabled_reason": webhook.disabled_reason,
    }


async def insert_webhook(conn: DbConnection, webhook: Webhook) -> None:
    _changed(conn)
    await conn.execute(insert(webhooks).values(id=webhook.id, **_values(webhook)))


async def save_webhook(conn: DbConnection, webhook: Webhook) -> None:
    _changed(conn)
    await conn.execute(update(webhooks).where(webhooks.c.id == webhook.id).values(**_values(webhook)))


async def get_webhook(
    conn: DbConnection, webhook_id: str, connection_id: str | None = None
) -> Webhook | None:
    query = select(webhooks).where(webhooks.c.id == webhook_id)
    if connection_id is not None:
        query = query.where(webhooks.c.connection_id == connection_id)
    row = (await conn.execute(query)).first()
    return None if row is None else _webhook(row)


async def list_webhooks(
    conn: DbConnection, connection_id: str | None = None, *, limit: int | None = None, offset: int = 0
) -> list[Webhook]:
    query = select(webhooks).order_by(webhooks.c.created_at, webhooks.c.id)
    if connection_id is not None:
        query = query.where(webhooks.c.connection_id == connection_id)
    if limit is not None:
        query = query.limit(limit).offset(offset)
    return [_webhook(row) for row in await conn.execute(query)]


async def count_webhooks(conn: DbConnection, connection_id: str | None = None) -> int:
    query = select(func.count()).select_from(webhooks)
    if connection_id is not None:
        query = query.where(webhooks.c.connection_id == connection_id)
    return int(await conn.scalar(query) or 0)


# Run on every booking change (the outbox): built once, with bind parameters.
_NO_LIMIT = 2**31 - 1
_ACTIVE_QUERY = (
    select(webhooks)
    .where(webhooks.c.event == bindparam("event"), webhooks.c.disabled_at.is_(None))
    .order_by(webhooks.c.created_at, webhooks.c.id)
    .limit(bindparam("limit"))
)
_ACTIVE = Prepared(_ACTIVE_QUERY)
_ACTIVE_OF_CONNECTION = Prepared(_ACTIVE_QUERY.where(webhooks.c.connection_id == bindparam("connection_id")))


_READ = "webhooks read"  # the transaction memo's entry: (event, connection, limit) -> webhooks


async def active_webhooks(
    conn: DbConnection, event: WebhookEvent, connection_id: str | None = None, limit: int | None = None
) -> list[Webhook]:
    """Enabled webhooks for an event: one connection's, or every connection's. Read once per
    transaction (a reservation, an order's bookings, a departure's changes each ask again)."""
    read = transaction_memo(conn).setdefault(_READ, {})
    key = (event, connection_id, limit)
    found: list[Webhook] | None = read.get(key)
    if found is not None:
        return found
    parameters: dict[str, Any] = {"event": event.value, "limit": limit or _NO_LIMIT}
    if connection_id is None:
        rows = await driver.fetch(conn, _ACTIVE, parameters)
    else:
        rows = await driver.fetch(conn, _ACTIVE_OF_CONNECTION, {**parameters, "connection_id": connection_id})
    found = read[key] = [_webhook(row) for row in rows]
    return found


def _changed(conn: DbConnection) -> None:
    """The transaction changed webhooks: what it read of them is read again."""
    transaction_memo(conn).pop(_READ, None)


async def delete_webhooks(conn: DbConnection, ids: list[str]) -> None:
    if ids:
        _changed(conn)
        await conn.execute(delete(webhooks).where(webhooks.c.id.in_(ids)))


async def add_signing_secret(
    conn: DbConnection,
    box: SecretBox,
    connection_id: str,
    secret: str,
    now: datetime,
    retire_others_at: datetime | None,
) -> None:
    """Add a secret (stored sealed, bound to its connection); other live secrets of the
    connection stop signing at `retire_others_at`."""
    if retire_others_at is not None:
        await conn.execute(
            update(signing_secrets)
            .where(
                signing_secrets.c.connection_id == connection_id,
                or_(signing_secrets.c.expires_at.is_(None), signing_secrets.c.expires_at > retire_others_at),
            )
            .values(expires_at=retire_others_at)
        )
    await conn.execute(
        insert(signing_secrets).values(
            connection_id=connection_id,
            sealed_secret=box.seal(secret, connection_id),
            created_at=now,
            expires_at=None,
        )
    )


async def live_signing_secrets(
    conn: DbConnection, box: SecretBox, connection_id: str, now: datetime
) -> list[str]:
    """Secrets that sign deliveries now, the newest first, opened."""
    rows = await conn.execute(
        select(signing_secrets.c.sealed_secret)
        .where(
            signing_secrets.c.connection_id == connection_id,
            or_(signing_secrets.c.expires_at.is_(None), signing_secrets.c.expires_at > now),
        )
        .order_by(signing_secrets.c.id.desc())
    )
    return [box.open(row[0], connection_id) for row in rows]


async def unopenable_secret_owners(conn: DbConnection, box: SecretBox, now: datetime) -> set[str]:
    """Ids of the connections with a live signing secret that no key of `box` opens."""
    rows = await conn.execute(
        select(signing_secrets.c.connection_id, signing_secrets.c.sealed_secret).where(
            or_(signing_secrets.c.expires_at.is_(None), signing_secrets.c.expires_at > now)
        )
    )
    owners = set()
    for connection_id, sealed in rows:
        try:
            box.open(sealed, connection_id)
        except SealError:
            owners.add(connection_id)
    return owners


async def has_signing_secret(conn: DbConnection, box: SecretBox, connection_id: str, secret: str) -> bool:
    """Whether the connection has this secret (sealed values differ each time: open and compare)."""
    rows = await conn.execute(
        select(signing_secrets.c.sealed_secret).where(signing_secrets.c.connection_id == connection_id)
    )
    return any(hmac.compare_digest(box.open(row[0], connection_id), secret) for row in rows)


async def disable_webhook(conn: DbConnection, webhook_id: str, now: datetime, reason: str) -> None:
    _changed(conn)
    await conn.execute(
        update(webhooks)
        .where(webhooks.c.id == webhook_id, webhooks.c.disabled_at.is_(None))
        .values(disabled_at=now, disabled_reason=reason, updated_at=now)
    )
