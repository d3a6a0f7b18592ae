"""A reservation's write on PostgreSQL as one statement, its own transaction (issue 41,
`berth.store.database.Database.one_call`): the booking's row, its first event, its outbox rows
and the departure's lock, check and hold, with bound parameters only.

What must hold: one round trip writes it all, or nothing (a refusal, a repeated uuid); what the
request sent comes back exactly as given, quotes and backslashes included, and never appears in
the statement's text; outbox rows are written only while someone listens; a block doing what one
statement cannot carry is refused before anything is sent, and the reservation is then made in
a transaction; a refusal is answered with the reason; a lost connection is the database
unavailable."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import DBAPIError

from berth.container import Services
from berth.domain.bookings import Contact
from berth.domain.catalog import Catalog
from berth.domain.errors import UnprocessableEntity
from berth.domain.staff import COMMAND_LINE
from berth.domain.webhooks import Webhook, WebhookEvent
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.store import webhooks_repo
from berth.store.database import Database
from berth.store.faults import fault_of
from berth.store.one_call import NotOneCall, one_call
from berth.store.tables import (
    availability_changes,
    booking_events,
    bookings,
    outbox,
    slot_holds,
    slot_locks,
    webhooks,
)
from tests.statement_counts import counting
from tests.test_catalog_import import MINIMAL

SLOT = "2026-06-02T10:00:00+01:00"
AWKWARD = ("it's", "back\\slash\\", "$$dollar$$", "E'\\x41'", "Zürich ✓", "$1")


# One call is PostgreSQL's (SQLite's write lock is the transaction).
pytestmark = pytest.mark.postgresql


@pytest.fixture
async def db(services: Services) -> AsyncIterator[Database]:
    assert not services.database.is_sqlite
    yield services.database


def _request(uuid: str, adults: int = 1, **fields: Any) -> ReserveInput:
    return ReserveInput(
        product_id="walk", option_id="DEFAULT", availability_id=SLOT, uuid=uuid,
        unit_items=tuple(UnitItemInput("adult") for _ in range(adults)), **fields,
    )  # fmt: skip


async def _written(services: Services) -> dict[str, object]:
    async with services.database.transaction(write=False) as conn:
        return {
            "bookings": int(await conn.scalar(select(func.count()).select_from(bookings)) or 0),
            "events": int(await conn.scalar(select(func.count()).select_from(booking_events)) or 0),
            "outbox": int(await conn.scalar(select(func.count()).select_from(outbox)) or 0),
            "held": int(await conn.scalar(select(func.coalesce(func.sum(slot_holds.c.pax), 0))) or 0),
            "changes": [
                (row.product_id, row.local_date, row.xid is not None)
                for row in await conn.execute(
                    select(availability_changes).order_by(availability_changes.c.id)
                )
            ],
        }


async def _ready(services: Services, capacity: int = 12) -> tuple[str, Catalog]:
    text = MINIMAL.replace("capacity: 12", f"capacity: {capacity}")
    await services.catalog.import_text(text, actor=COMMAND_LINE)
    connection = await services.connections.ensure("Caller", "caller-key")
    return connection.id, (await services.catalog.snapshot()).catalog


async def _listen(services: Services, connection_id: str) -> None:
    now = datetime.now(UTC)
    hook = Webhook(
        id="hook-1", connection_id=connection_id, event=WebhookEvent.AVAILABILITY_UPDATE,
        url="http://127.0.0.1:9/hook", capabilities=(), use_contact_language=False, headers={},
        retry_on_error=True, created_at=now, updated_at=now,
    )  # fmt: skip
    async with services.database.transaction(write=True) as conn:
        await webhooks_repo.insert_webhook(conn, hook)


async def test_a_reservation_is_one_statement_that_writes_it_all(db: Database, services: Services) -> None:
    connection_id, catalog = await _ready(services)
    await _listen(services, connection_id)
    await services.bookings.reserve(catalog, connection_id, _request("warm-up"))  # the contract read
    with counting(db) as sent:
        await services.bookings.reserve(catalog, connection_id, _request("one", adults=2))
    write, answer = sent.sent
    assert write.startswith("WITH new_booking AS") and "berth_hold_or_refuse(" in write
    assert answer.startswith("SELECT"), answer
    # Each reservation recorded its product and day for the kept answers, with its transaction id
    # (after the catalogue's import, which changed everything).
    changes = [(None, None, True), *[("walk", SLOT[:10], True)] * 2]
    written = {"bookings": 2, "events": 2, "outbox": 2, "held": 3, "changes": changes}
    assert await _written(services) == written
    # Repeated: the statement finds the uuid taken and writes nothing; the answer is the first.
    again = await services.bookings.reserve(catalog, connection_id, _request("one", adults=2))
    assert again.booking.uuid == "one"
    assert await _written(services) == written


async def test_outbox_rows_are_written_only_while_someone_listens(db: Database, services: Services) -> None:
    connection_id, catalog = await _ready(services)
    await services.bookings.reserve(catalog, connection_id, _request("unheard"))
    assert (await _written(services))["outbox"] == 0
    await _listen(services, connection_id)
    await services.bookings.reserve(catalog, connection_id, _request("heard"))
    assert (await _written(services))["outbox"] == 1
    async with db.transaction(write=True) as conn:
        await conn.execute(update(webhooks).values(disabled_at=datetime.now(UTC)))
    await services.bookings.reserve(catalog, connection_id, _request("disabled"))
    assert (await _written(services))["outbox"] == 1


async def test_what_the_request_sent_comes_back_exactly_and_is_never_in_the_text(
    db: Database, services: Services
) -> None:
    connection_id, catalog = await _ready(services)
    for n, value in enumerate(AWKWARD):
        with counting(db) as sent:
            details = await services.bookings.reserve(
                catalog, connection_id, _request(f"odd-{n}", reseller_reference=value, notes=value)
            )
        assert value not in sent.sent[0] or value == "$1"  # "$1" is the statement's own parameter
        assert (details.booking.reseller_reference, details.booking.notes) == (value, value)
        fresh = await services.bookings.get(catalog, connection_id, f"odd-{n}")
        assert (fresh.booking.reseller_reference, fresh.booking.notes) == (value, value)


async def test_a_refusal_writes_nothing_and_says_why(db: Database, services: Services) -> None:
    connection_id, catalog = await _ready(services, capacity=3)
    await services.bookings.reserve(catalog, connection_id, _request("two", adults=2))
    before = await _written(services)
    with counting(db) as refused, pytest.raises(UnprocessableEntity) as raised:
        await services.bookings.reserve(catalog, connection_id, _request("three", adults=2))
    # Refused by the one statement, then placed again with the check inside a transaction,
    # which names the reason and rolls back.
    kinds = refused.kinds()
    assert kinds[0] == "WITH bookings" and "BEGIN" in kinds and "COMMIT" not in kinds, kinds
    assert raised.value.message.endswith("is sold out: 1 place(s) left, 2 requested"), raised.value.message
    assert await _written(services) == before
    # The place left is still for the taking, and every pooled connection serves on.
    for _ in range(3):
        await services.bookings.get(catalog, connection_id, "two")
    await services.bookings.reserve(catalog, connection_id, _request("one"))
    assert (await _written(services))["held"] == 3


async def test_what_one_statement_cannot_carry_is_refused_before_anything_is_sent(db: Database) -> None:
    lock = insert(slot_locks).values(product_id="p", option_id="o", availability_id="a")
    with pytest.raises(NotOneCall):
        async with db.one_call() as call:
            await call.execute(lock)
    with pytest.raises(NotOneCall):
        async with db.one_call() as call:
            await call.execute(select(slot_locks).with_for_update())
    with pytest.raises(NotOneCall, match="never closed"):
        async with db.one_call() as call:
            kept = one_call(call)
            assert kept is not None
            kept.kept["booking"] = {}
    # Reads run at once; a block that only reads sends nothing more.
    async with db.one_call() as call:
        assert await call.scalar(select(func.count()).select_from(slot_locks)) == 0
    assert not call.written
    async with db.transaction(write=False) as conn:
        assert await conn.scalar(select(func.count()).select_from(slot_locks)) == 0


async def test_a_connection_lost_with_the_statement_is_the_database_unavailable(db: Database) -> None:
    with pytest.raises(DBAPIError) as raised:
        async with db.one_call() as call:
            kept = one_call(call)
            assert kept is not None
            kept.close(select(func.pg_terminate_backend(func.pg_backend_pid())), {})
    assert fault_of(raised.value) == "unavailable"
    for _ in range(3):  # the pool dropped the lost connection: every one it hands out works
        async with db.transaction(write=False) as conn:
            await conn.scalar(select(1))


async def test_a_reservation_with_a_contact_keeps_it(db: Database, services: Services) -> None:
    connection_id, catalog = await _ready(services)
    guest = Contact({"firstName": "Ada", "lastName": "O'Guest", "emailAddress": "ada@example.com"})
    details = await services.bookings.reserve(catalog, connection_id, _request("contact", contact=guest))
    assert details.booking.contact == guest
