"""The outbox, deliveries and their attempts: what the delivery worker claims and records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, text, update
from sqlalchemy.orm import aliased

from berth.store.connection import DbConnection
from berth.store.one_call import one_call
from berth.store.tables import deliveries, delivery_attempts, outbox

PENDING = "pending"
SENDING = "sending"
DELIVERED = "delivered"
FAILED = "failed"
# A mapping notification replaced by a newer one for the same row (or whose row was removed):
# final, never sent again. Only notifications that retry forever need it.
SUPERSEDED = "superseded"
STATUSES = (PENDING, SENDING, DELIVERED, FAILED, SUPERSEDED)
UNFINISHED = (PENDING, SENDING)
_FANOUT_LOCK = 0x6F7574626F78  # "outbox": one fan-out at a time keeps per-subject order


@dataclass(frozen=True)
class Delivery:
    id: str
    sequence: int
    kind: str
    webhook_id: str | None
    connection_id: str
    target_key: str
    subject_key: str
    event: str
    url: str
    headers: dict[str, str]
    payload: dict[str, Any]
    status: str
    retry_on_error: bool
    retry_forever: bool
    attempts: int
    created_at: datetime
    next_attempt_at: datetime | None
    delivered_at: datetime | None


def delivery_from_row(row: Any) -> Delivery:
    return Delivery(
        id=row.id,
        sequence=row.sequence,
        kind=row.kind,
        webhook_id=row.webhook_id,
        connection_id=row.connection_id,
        target_key=row.target_key,
        subject_key=row.subject_key,
        event=row.event,
        url=row.url,
        headers=dict(row.headers),
        payload=row.payload,
        status=row.status,
        retry_on_error=row.retry_on_error,
        retry_forever=row.retry_forever,
        attempts=row.attempts,
        created_at=row.created_at,
        next_attempt_at=row.next_attempt_at,
        delivered_at=row.delivered_at,
    )


@dataclass(frozen=True)
class NewDelivery:
    id: str
    kind: str
    webhook_id: str | None
    connection_id: str
    target_key: str
    subject_key: str
    event: str
    url: str
    headers: dict[str, str]
    payload: dict[str, Any]
    retry_on_error: bool
    retry_forever: bool = False


async def add_delivery(conn: DbConnection, new: NewDelivery, now: datetime) -> None:
    await conn.execute(
        insert(deliveries).values(
            id=new.id,
            kind=new.kind,
            webhook_id=new.webhook_id,
            connection_id=new.connection_id,
            target_key=new.target_key,
            subject_key=new.subject_key,
            event=new.event,
            url=new.url,
            headers=new.headers,
            payload=new.payload,
            status=PENDING,
            retry_on_error=new.retry_on_error,
            retry_forever=new.retry_forever,
            attempts=0,
            created_at=now,
            next_attempt_at=now,
        )
    )


_ADD_OUTBOX = insert(outbox)


async def add_outbox(
    conn: DbConnection, event: str, subjects: Sequence[dict[str, Any]], now: datetime
) -> None:
    """One outbox row per subject, in one statement (SQLAlchemy sends the rows as one INSERT)."""
    if subjects:
        await conn.execute(
            _ADD_OUTBOX, [{"event": event, "subject": subject, "created_at": now} for subject in subjects]
        )


KEPT_OUTBOX = "outbox"


def keep_outbox(conn: DbConnection, event: str, subjects: Sequence[dict[str, Any]], now: datetime) -> bool:
    """Under `Database.one_call`: keep the outbox rows for the block's one statement, which
    writes them only while an enabled webhook listens to `event`. False (nothing kept) in any
    other block, or when rows were kept already."""
    call = one_call(conn)
    if call is None or KEPT_OUTBOX in call.kept:
        return False
    call.kept[KEPT_OUTBOX] = (event, list(subjects), now)
    return True


async def outbox_waiting(conn: DbConnection) -> bool:
    """Whether any outbox row waits for its fan-out."""
    return await conn.scalar(select(outbox.c.id).limit(1)) is not None


async def take_outbox(conn: DbConnection, limit: int) -> list[tuple[int, str, dict[str, Any]]]:
    """The oldest outbox rows, for one fan-out at a time (the caller deletes them when done).
    Returns nothing when another process holds the fan-out."""
    if conn.dialect.name == "postgresql":
        got = await conn.scalar(text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": _FANOUT_LOCK})
        if not got:
            return []
    rows = await conn.execute(
        select(outbox.c.id, outbox.c.event, outbox.c.subject).order_by(outbox.c.id).limit(limit)
    )
    return [(row.id, row.event, row.subject) for row in rows]


async def drop_outbox(conn: DbConnection, ids: list[int]) -> None:
    if ids:
        await conn.execute(delete(outbox).where(outbox.c.id.in_(ids)))


async def claim_due(conn: DbConnection, now: datetime, lease_until: datetime, limit: int) -> list[Delivery]:
    """Due deliveries whose subject has no earlier unfinished delivery to the same target,
    leased to this worker until `lease_until` (a crashed worker's lease simply runs out)."""
    earlier = aliased(deliveries)
    blocked = (
        select(earlier.c.sequence)
        .where(
            earlier.c.target_key == deliveries.c.target_key,
            earlier.c.subject_key == deliveries.c.subject_key,
            earlier.c.sequence < deliveries.c.sequence,
            earlier.c.status.in_(UNFINISHED),
        )
        .exists()
    )
    due = or_(
        and_(deliveries.c.status == PENDING, deliveries.c.next_attempt_at <= now),
        and_(deliveries.c.status == SENDING, deliveries.c.lease_until <= now),
    )
    query = select(deliveries).where(due, ~blocked).order_by(deliveries.c.sequence).limit(limit)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=deliveries)
    claimed = [delivery_from_row(row) for row in await conn.execute(query)]
    if claimed:
        await conn.execute(
            update(deliveries)
            .where(deliveries.c.id.in_([d.id for d in claimed]))
            .values(status=SENDING, lease_until=lease_until)
        )
    return claimed


async def renew_leases(conn: DbConnection, delivery_ids: list[str], lease_until: datetime) -> None:
    """Extend the lease of deliveries this worker is still sending."""
    await conn.execute(
        update(deliveries)
        .where(deliveries.c.id.in_(delivery_ids), deliveries.c.status == SENDING)
        .values(lease_until=lease_until)
    )


@dataclass(frozen=True)
class Finished:
    """One attempt's record and the state it leaves its delivery in."""

    delivery_id: str
    at: datetime
    status_code: int | None
    error: str | None
    latency_ms: int
    excerpt: str | None
    status: str
    attempts: int
    next_attempt_at: datetime | None
    delivered_at: datetime | None


_SET_ATTEMPTS = (
    update(deliveries)
    .where(deliveries.c.id == bindparam("b_id"))
    .values(attempts=bindparam("b_attempts"), lease_until=None)
)
_SET_OUTCOME = update(deliveries).values(
    status=bindparam("b_status"),
    next_attempt_at=bindparam("b_next_attempt_at"),
    delivered_at=bindparam("b_delivered_at"),
)
_SET_DELIVERED = _SET_OUTCOME.where(deliveries.c.id == bindparam("b_id")).values(
    attempts=bindparam("b_attempts"), lease_until=None
)
# A superseded delivery stays superseded unless an attempt delivered it.
_SET_UNDELIVERED = _SET_OUTCOME.where(deliveries.c.id == bindparam("b_id"), deliveries.c.status != SUPERSEDED)


async def record_outcomes(conn: DbConnection, finished: Sequence[Finished]) -> None:
    """Store a batch of attempts and their deliveries' new states: a few statements for the
    whole batch, each run for every row at once."""
    if not finished:
        return
    await conn.execute(
        insert(delivery_attempts),
        [
            {
                "delivery_id": f.delivery_id,
                "attempted_at": f.at,
                "status_code": f.status_code,
                "error": f.error[:500] if f.error else None,
                "latency_ms": f.latency_ms,
                "response_excerpt": f.excerpt,
            }
            for f in finished
        ],
    )

    def row(f: Finished) -> dict[str, Any]:
        return {
            "b_id": f.delivery_id, "b_attempts": f.attempts, "b_status": f.status,
            "b_next_attempt_at": f.next_attempt_at, "b_delivered_at": f.delivered_at,
        }  # fmt: skip

    delivered = [row(f) for f in finished if f.status == DELIVERED]
    undelivered = [row(f) for f in finished if f.status != DELIVERED]
    if delivered:
        await conn.execute(_SET_DELIVERED, delivered)
    if undelivered:
        await conn.execute(_SET_ATTEMPTS, undelivered)
        await conn.execute(_SET_UNDELIVERED, undelivered)


async def supersede(conn: DbConnection, target_keys: Sequence[str], statuses: tuple[str, ...]) -> None:
    """Stop sending the targets' deliveries that are in `statuses`."""
    if target_keys:
        await conn.execute(
            update(deliveries)
            .where(deliveries.c.target_key.in_(list(target_keys)), deliveries.c.status.in_(statuses))
            .values(status=SUPERSEDED, next_attempt_at=None, lease_until=None)
        )


async def has_unfinished(conn: DbConnection, target_key: str) -> bool:
    found = await conn.scalar(
        select(deliveries.c.sequence)
        .where(deliveries.c.target_key == target_key, deliveries.c.status.in_(UNFINISHED))
        .limit(1)
    )
    return found is not None


async def has_newer(conn: DbConnection, delivery: Delivery) -> bool:
    """Whether a later message for the same target and subject was queued."""
    found = await conn.scalar(
        select(deliveries.c.sequence)
        .where(
            deliveries.c.target_key == delivery.target_key,
            deliveries.c.subject_key == delivery.subject_key,
            deliveries.c.sequence > delivery.sequence,
        )
        .limit(1)
    )
    return found is not None


async def get_delivery(conn: DbConnection, delivery_id: str) -> Delivery | None:
    row = (await conn.execute(select(deliveries).where(deliveries.c.id == delivery_id))).first()
    return None if row is None else delivery_from_row(row)


async def list_deliveries(
    conn: DbConnection, *, webhook_id: str | None = None, target_key: str | None = None, status: str | None = None,
    since: datetime | None = None, limit: int = 50, offset: int = 0,
) -> tuple[list[Delivery], int]:  # fmt: skip
    clauses = []
    if webhook_id is not None:
        clauses.append(deliveries.c.webhook_id == webhook_id)
    if target_key is not None:
        clauses.append(deliveries.c.target_key == target_key)
    if status is not None:
        clauses.append(deliveries.c.status == status)
    if since is not None:
        clauses.append(deliveries.c.created_at >= since)
    condition = and_(*clauses) if clauses else and_(True)
    rows = await conn.execute(
        select(deliveries).where(condition).order_by(deliveries.c.sequence.desc()).limit(limit).offset(offset)
    )
    total = int(await conn.scalar(select(func.count()).select_from(deliveries).where(condition)) or 0)
    return [delivery_from_row(row) for row in rows], total


async def attempts_of(conn: DbConnection, delivery_id: str) -> list[dict[str, Any]]:
    rows = await conn.execute(
        select(delivery_attempts)
        .where(delivery_attempts.c.delivery_id == delivery_id)
        .order_by(delivery_attempts.c.id)
    )
    return [
        {
            "attemptedAt": row.attempted_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "statusCode": row.status_code,
            "error": row.error,
            "latencyMs": row.latency_ms,
            "responseExcerpt": row.response_excerpt,
        }
        for row in rows
    ]


async def requeue(conn: DbConnection, delivery_ids: list[str], now: datetime) -> None:
    """Send again (a redelivery keeps the message id, so receivers can de-duplicate)."""
    if delivery_ids:
        await conn.execute(
            update(deliveries)
            .where(deliveries.c.id.in_(delivery_ids))
            .values(status=PENDING, next_attempt_at=now, lease_until=None, attempts=0)
        )


async def counts_by_status(conn: DbConnection) -> dict[tuple[str, str], int]:
    rows = await conn.execute(
        select(deliveries.c.kind, deliveries.c.status, func.count()).group_by(
            deliveries.c.kind, deliveries.c.status
        )
    )
    return {(row[0], row[1]): int(row[2]) for row in rows}


async def counts_by_webhook(
    conn: DbConnection, *, webhook_id: str | None = None, statuses: Sequence[str] | None = None
) -> dict[str, Counter[str]]:
    """Webhook deliveries counted by webhook and status, in one query."""
    query = (
        select(deliveries.c.webhook_id, deliveries.c.status, func.count())
        .where(deliveries.c.kind == "webhook", deliveries.c.webhook_id.is_not(None))
        .group_by(deliveries.c.webhook_id, deliveries.c.status)
    )
    if webhook_id is not None:
        query = query.where(deliveries.c.webhook_id == webhook_id)
    if statuses is not None:
        query = query.where(deliveries.c.status.in_(list(statuses)))
    counts: dict[str, Counter[str]] = {}
    for hook, status, count in await conn.execute(query):
        counts.setdefault(hook, Counter())[status] = int(count)
    return counts


@dataclass(frozen=True)
class LastAttempt:
    attempts: int  # every attempt recorded, redeliveries included
    at: datetime
    status_code: int | None
    error: str | None

    @property
    def succeeded(self) -> bool:
        return self.error is None and self.status_code is not None and 200 <= self.status_code < 300


async def last_attempts(conn: DbConnection, delivery_ids: list[str]) -> dict[str, LastAttempt]:
    """The latest attempt of each delivery and how many it had, in one query."""
    if not delivery_ids:
        return {}
    per_delivery = (
        select(
            delivery_attempts.c.delivery_id,
            func.count().label("attempts"),
            func.max(delivery_attempts.c.id).label("last_id"),
        )
        .where(delivery_attempts.c.delivery_id.in_(delivery_ids))
        .group_by(delivery_attempts.c.delivery_id)
        .subquery()
    )
    query = select(
        per_delivery.c.delivery_id,
        per_delivery.c.attempts,
        delivery_attempts.c.attempted_at,
        delivery_attempts.c.status_code,
        delivery_attempts.c.error,
    ).join(per_delivery, delivery_attempts.c.id == per_delivery.c.last_id)
    return {
        row.delivery_id: LastAttempt(int(row.attempts), row.attempted_at, row.status_code, row.error)
        for row in await conn.execute(query)
    }
