"""The webhooks an event goes to are read once per transaction (issue 31): a second fan-out in
the same transaction asks no statement, a webhook added or disabled in it is seen at once, and
the next transaction reads them again."""

from __future__ import annotations

from berth.container import Services
from berth.domain.webhooks import Webhook, WebhookEvent
from berth.store import webhooks_repo
from tests.conftest import Clock
from tests.statement_counts import counting


async def test_webhooks_are_read_once_per_transaction_and_again_after_a_change(
    services: Services, clock: Clock
) -> None:
    connection = await services.connections.ensure("Hooked", "hooked-key")
    hook = Webhook(
        id="hook-1", connection_id=connection.id, event=WebhookEvent.BOOKING_UPDATE, url="http://127.0.0.1:9/",
        capabilities=(), use_contact_language=False, headers={}, retry_on_error=True,
        created_at=clock(), updated_at=clock(),
    )  # fmt: skip
    event = WebhookEvent.BOOKING_UPDATE
    async with services.database.transaction(write=True) as conn:
        with counting(services.database) as first:
            assert await webhooks_repo.active_webhooks(conn, event, connection.id) == []
        with counting(services.database) as again:
            assert await webhooks_repo.active_webhooks(conn, event, connection.id) == []
        await webhooks_repo.insert_webhook(conn, hook)
        assert [h.id for h in await webhooks_repo.active_webhooks(conn, event, connection.id)] == ["hook-1"]
        await webhooks_repo.disable_webhook(conn, "hook-1", clock(), "test")
        assert await webhooks_repo.active_webhooks(conn, event, connection.id) == []
    assert len(first) == 1 and len(again) == 0
    async with services.database.transaction(write=True) as conn:
        await webhooks_repo.save_webhook(conn, hook)  # enabled again
    async with services.database.transaction(write=False) as conn:
        with counting(services.database) as next_one:
            assert [h.id for h in await webhooks_repo.active_webhooks(conn, event, connection.id)] == [
                "hook-1"
            ]
    assert len(next_one) == 1
