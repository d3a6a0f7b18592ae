"""Turns changes into deliveries, with payloads frozen at that moment.

Booking changes go to the owning connection's `booking_update` webhooks inside the booking's
own transaction (serializing for one tenant is cheap, and the diff needs the state before and
after). Availability changes are written to the outbox in the transaction and fanned out to
every connection's `availability_update` webhooks by the worker after commit, one fan-out at a
time, so nothing slow happens while a slot is locked and each slot's messages keep their order.

Mapping notifications (vendor/mappings) are queued here too, in the transaction that resolved
the row: one message to the row's `webhookUrl` each time its mapping changes, retried until a
2XX arrives (never given up). A newer notification for a row supersedes an older one that is
still waiting.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from berth.capabilities.base import JSON, View
from berth.capabilities.ids import MAPPINGS
from berth.delivery.contract_departures import changed_views
from berth.domain.bookings import Booking
from berth.domain.catalog import Catalog, Product
from berth.domain.connections import Connection
from berth.domain.contract_views import terms_of
from berth.domain.contracts import Contract, contract_product
from berth.domain.diff import diff
from berth.domain.languages import choose_language
from berth.domain.mappings import MappedRows, MappingRow, mapping_json, notification_target
from berth.domain.orders import Order
from berth.domain.slots import slot_for_id
from berth.domain.webhooks import Audience, Webhook, WebhookEvent
from berth.read_models.availability import SlotAvailability
from berth.services.allotments import Viewer
from berth.services.availability import AvailabilityService
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.services.events import Describe, DescribeOrder
from berth.settings import Settings
from berth.store import (
    availability_changes_repo,
    connections_repo,
    deliveries_repo,
    mappings_repo,
    webhooks_repo,
)
from berth.store.availability_changes_repo import changes_of
from berth.store.connection import DbConnection, after_commit
from berth.store.database import Database
from berth.store.deliveries_repo import PENDING, SENDING, NewDelivery
from berth.views.availability import availability_view
from berth.views.bookings import booking_view
from berth.views.catalog import product_view
from berth.views.orders import order_view
from berth.views.webhooks import payload_supplier_view, webhook_view


def message_id() -> str:
    return "msg_" + uuid.uuid4().hex


def webhook_delivery(webhook: Webhook, subject_key: str, payload: JSON) -> NewDelivery:
    return NewDelivery(
        id=message_id(),
        kind="webhook",
        webhook_id=webhook.id,
        connection_id=webhook.connection_id,
        target_key=f"webhook:{webhook.id}",
        subject_key=subject_key,
        event=webhook.event.value,
        url=webhook.url,
        headers=dict(webhook.headers),
        payload=payload,
        retry_on_error=webhook.retry_on_error,
    )


MAPPING_EVENT = "mapping_update"


def mapping_delivery(row: MappingRow) -> NewDelivery:
    """The notification of a resolved row: the row shape, POSTed to its `webhookUrl`, signed
    with the connection's secrets and retried until a 2XX arrives."""
    assert row.webhook_url is not None
    return NewDelivery(
        id=message_id(),
        kind="mapping",
        webhook_id=None,
        connection_id=row.connection_id,
        target_key=notification_target(row.id),
        subject_key=notification_target(row.id),
        event=MAPPING_EVENT,
        url=row.webhook_url,
        headers={},
        payload=mapping_json(row),
        retry_on_error=True,
        retry_forever=True,
    )


class Contracts:
    """The contracts of the connections webhooks belong to, read once per fan-out: a product a
    connection may not sell is never announced to it, and what is announced carries its net."""

    def __init__(self, conn: DbConnection, today: date) -> None:
        self._conn = conn
        self._today = today
        self._loaded: dict[str, Contract] | None = None

    async def product(self, webhook: Webhook, product: Product | None) -> Product | None:
        if product is None:
            return None
        if self._loaded is None:
            self._loaded = {c.id: c.contract for c in await connections_repo.list_connections(self._conn)}
        contract = self._loaded.get(webhook.connection_id)
        if contract is None or not contract.in_force(self._today):
            return None
        return contract_product(product, contract)

    def viewer(self, webhook: Webhook) -> Viewer:
        """Who the webhook's availability is for (after `product`, which loads the contracts)."""
        contract = (self._loaded or {}).get(webhook.connection_id)
        return Viewer(webhook.connection_id, contract.stop_sells if contract is not None else ())


class MappingRows:
    """Each connection's mapped rows, loaded once per fan-out for the webhooks that ask for
    vendor/mappings."""

    def __init__(self, conn: DbConnection) -> None:
        self._conn = conn
        self._loaded: dict[str, MappedRows] = {}

    async def of(self, webhook: Webhook) -> MappedRows | None:
        if MAPPINGS not in webhook.capabilities:
            return None
        rows = self._loaded.get(webhook.connection_id)
        if rows is None:
            rows = self._loaded[webhook.connection_id] = await mappings_repo.mapped_rows(
                self._conn, webhook.connection_id
            )
        return rows


class WebhookFanout:
    def __init__(
        self,
        database: Database,
        settings: Settings,
        clock: Clock,
        catalogs: CatalogService,
        availability: AvailabilityService,
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._catalogs = catalogs
        self._availability = availability
        self.wakeup = asyncio.Event()

    def _view(
        self,
        webhook: Webhook,
        catalog: Catalog,
        locales: Sequence[str] = (),
        mappings: MappedRows | None = None,
    ) -> View:
        language = None
        if webhook.use_contact_language and locales:
            language = choose_language(", ".join(locales), catalog.languages)
        return View(capabilities=frozenset(webhook.capabilities), language=language, mappings=mappings)

    def _envelope(self, webhook: Webhook, catalog: Catalog, view: View) -> JSON:
        return {
            "event": webhook.event.value,
            "webhook": webhook_view(webhook),
            "supplier": payload_supplier_view(catalog.supplier, self._settings.octo_endpoint(), view),
        }

    # --- called inside the changing transaction ---------------------------------------------

    async def booking_changed(
        self, conn: DbConnection, describe: Describe, before: Booking, after: Booking
    ) -> None:
        hooks = await webhooks_repo.active_webhooks(conn, WebhookEvent.BOOKING_UPDATE, after.connection_id)
        if not hooks:
            return
        catalog = (await self._catalogs.snapshot_in(conn)).catalog
        old, new = await describe(before), await describe(after)
        now = self._clock()
        rows = MappingRows(conn)
        for hook in hooks:
            view = self._view(hook, catalog, after.contact.locales, await rows.of(hook))
            old_json, new_json = booking_view(old, view), booking_view(new, view)
            payload = {
                **self._envelope(hook, catalog, view),
                "booking": new_json,
                "diff": diff(old_json, new_json),
            }
            await deliveries_repo.add_delivery(
                conn, webhook_delivery(hook, f"booking:{after.id}", payload), now
            )
        after_commit(conn, self.wakeup.set)

    async def order_changed(
        self, conn: DbConnection, describe: DescribeOrder, before: Order, after: Order
    ) -> None:
        hooks = await webhooks_repo.active_webhooks(conn, WebhookEvent.ORDER_UPDATE, after.connection_id)
        if not hooks:
            return
        catalog = (await self._catalogs.snapshot_in(conn)).catalog
        old, new = await describe(before), await describe(after)
        now = self._clock()
        for hook in hooks:
            view = self._view(hook, catalog, after.contact.locales)
            old_json, new_json = order_view(old, view), order_view(new, view)
            payload = {
                **self._envelope(hook, catalog, view),
                "order": new_json,
                "diff": diff(old_json, new_json),
            }
            await deliveries_repo.add_delivery(
                conn, webhook_delivery(hook, f"order:{after.id}", payload), now
            )
        after_commit(conn, self.wakeup.set)

    async def slots_changed(
        self, conn: DbConnection, slots: Sequence[tuple[str, str, str]], unchanged_for: Sequence[str] = ()
    ) -> None:
        """Announce `slots`' availability to its subscribers, but to the connections
        `unchanged_for` (whose view of them did not change: a block's own, at its release)."""
        event, now = WebhookEvent.AVAILABILITY_UPDATE, self._clock()
        # What every process's kept answers of these days must give up (berth.services.answers).
        await availability_changes_repo.record(conn, changes_of(slots), now)
        unchanged = {"unchangedFor": list(unchanged_for)} if unchanged_for else {}
        subjects = [
            {"productId": product_id, "optionId": option_id, "availabilityId": availability_id, **unchanged}
            for product_id, option_id, availability_id in slots
        ]
        # Written only while someone listens: a later subscriber must not hear of changes made
        # before it (a one-call statement checks that itself).
        if not deliveries_repo.keep_outbox(conn, event.value, subjects, now):
            if not await webhooks_repo.active_webhooks(conn, event, limit=1):
                return
            await deliveries_repo.add_outbox(conn, event.value, subjects, now)
        after_commit(conn, self.wakeup.set)

    async def catalog_changed(self, conn: DbConnection, before: Catalog, after: Catalog) -> None:
        hooks = await webhooks_repo.active_webhooks(conn, WebhookEvent.PRODUCT_UPDATE)
        if not hooks:
            return
        now = self._clock()
        contracts = Contracts(conn, now.date())
        for changed in after.products:
            if before.product(changed.id) == changed:
                continue
            for hook in hooks:
                product = await contracts.product(hook, changed)
                if product is None:
                    continue
                previous = await contracts.product(hook, before.product(changed.id))
                await self._product_changed(conn, hook, after, previous, product)
        after_commit(conn, self.wakeup.set)

    async def _product_changed(
        self,
        conn: DbConnection,
        hook: Webhook,
        catalog: Catalog,
        previous: Product | None,
        product: Product,
        *,
        unless_same: bool = False,
    ) -> None:
        """Queue `product_update` of `product` as `hook`'s connection sees it (`previous`: as it
        saw it before, None when it did not); `unless_same`: not when the hook's view of it is
        the same."""
        view = self._view(hook, catalog)
        new_json = product_view(product, view)
        old_json = product_view(previous, view) if previous is not None else {}
        changes = diff(old_json, new_json)
        if unless_same and not changes:
            return
        payload = {**self._envelope(hook, catalog, view), "product": new_json, "diff": changes}
        await deliveries_repo.add_delivery(
            conn, webhook_delivery(hook, f"product:{product.id}", payload), self._clock()
        )

    async def contract_changed(
        self, conn: DbConnection, connection: Connection, before: Contract, after: Contract
    ) -> None:
        """A contract saved for `connection` (`before` it was `connection`'s contract): each
        departure whose view it changed (stop-sells, blocks: domain.contract_views), on the
        next `BERTH_CONTRACT_ANNOUNCE_DAYS` days, to the connections whose view changed
        (`availability_update`); and each product it sells whose view changed (it sells it
        now, other options, another net) to `connection` (`product_update`)."""
        now = self._clock()
        catalog = (await self._catalogs.snapshot_in(conn)).catalog
        listening = {
            h.connection_id
            for h in await webhooks_repo.active_webhooks(conn, WebhookEvent.AVAILABILITY_UPDATE)
        }
        if listening:
            subjects = await changed_views(
                conn, self._availability, catalog, connection, before, after, listening, now,
                self._settings.contract_announce_days,
            )  # fmt: skip
            if subjects:
                await deliveries_repo.add_outbox(conn, WebhookEvent.AVAILABILITY_UPDATE.value, subjects, now)
                after_commit(conn, self.wakeup.set)
        hooks = await webhooks_repo.active_webhooks(conn, WebhookEvent.PRODUCT_UPDATE, connection.id)
        was, becomes = terms_of(connection, before, now.date()), terms_of(connection, after, now.date())
        if not hooks or becomes is None or (was is not None and was.digest == becomes.digest):
            return
        for product in catalog.products:
            sold = contract_product(product, becomes)
            previous = contract_product(product, was) if was is not None else None
            if sold is None or sold is previous:
                continue
            for hook in hooks:
                await self._product_changed(conn, hook, catalog, previous, sold, unless_same=True)
        after_commit(conn, self.wakeup.set)

    async def mapping_resolved(self, conn: DbConnection, row: MappingRow) -> None:
        """Queue the notification of a row the supplier mapped (or re-mapped); an older one
        still waiting is superseded, as it carries an outdated state."""
        await deliveries_repo.supersede(conn, [notification_target(row.id)], (PENDING,))
        await deliveries_repo.add_delivery(conn, mapping_delivery(row), self._clock())
        after_commit(conn, self.wakeup.set)

    async def mapping_url_changed(self, conn: DbConnection, row: MappingRow) -> None:
        """The reseller moved a row's `webhookUrl`: a notification not yet delivered goes to
        the new address instead (the old one may be why it was never delivered), or is dropped
        when the row has no address or no mapping any more."""
        target = notification_target(row.id)
        if not await deliveries_repo.has_unfinished(conn, target):
            return
        if not row.mapped or row.webhook_url is None:
            await deliveries_repo.supersede(conn, [target], (PENDING, SENDING))
            return
        await deliveries_repo.supersede(conn, [target], (PENDING,))
        await deliveries_repo.add_delivery(conn, mapping_delivery(row), self._clock())
        after_commit(conn, self.wakeup.set)

    async def mappings_removed(self, conn: DbConnection, rows: Sequence[MappingRow]) -> None:
        """Rows the reseller removed are not notified any more."""
        targets = [notification_target(row.id) for row in rows]
        await deliveries_repo.supersede(conn, targets, (PENDING, SENDING))

    # --- run by the worker after commit -------------------------------------------------------

    async def fan_out(self, batch: int = 200) -> int:
        """Turn outbox rows into deliveries: one message per webhook and slot, carrying the
        slot's availability as it stands now. Returns how many outbox rows were handled."""
        async with self._db.single_read() as conn:  # no write turn (SQLite) when there is nothing
            if not await deliveries_repo.outbox_waiting(conn):
                return 0
        catalog = (await self._catalogs.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            rows = await deliveries_repo.take_outbox(conn, batch)
            if not rows:
                return 0
            hooks = await webhooks_repo.active_webhooks(conn, WebhookEvent.AVAILABILITY_UPDATE)
            # A departure announced twice is announced once, to whoever one of its
            # announcements is for.
            audiences: dict[tuple[str, str, str], Audience] = {}
            for _, _, s in rows:
                key = (s["productId"], s["optionId"], s["availabilityId"])
                audiences.setdefault(key, Audience()).add(s)
            if any("onlyFor" in s for _, _, s in rows):
                # A contract save's announcements (the only ones naming their audience): the
                # blocks this process keeps may be older than that save.
                self._availability.allotments.forget()
            if hooks:
                now = self._clock()
                mapping_rows = MappingRows(conn)
                contracts = Contracts(conn, now.date())
                for (product_id, option_id, availability_id), audience in audiences.items():
                    found = await self._slot(conn, catalog, product_id, option_id, availability_id)
                    if found is None:
                        continue
                    for hook in hooks:
                        if not audience.includes(hook.connection_id):
                            continue
                        product = await contracts.product(hook, found.product)
                        option = product.option(option_id) if product is not None else None
                        if product is None or option is None:
                            continue
                        item = await self._availability.seen_in(
                            conn, contracts.viewer(hook), replace(found, product=product, option=option)
                        )
                        view = self._view(hook, catalog, mappings=await mapping_rows.of(hook))
                        payload = {
                            **self._envelope(hook, catalog, view),
                            "productId": product_id,
                            "optionId": option_id,
                            "availability": availability_view(item, view),
                        }
                        subject_key = f"availability:{product_id}:{option_id}:{availability_id}"
                        await deliveries_repo.add_delivery(
                            conn, webhook_delivery(hook, subject_key, payload), now
                        )
            await deliveries_repo.drop_outbox(conn, [row_id for row_id, _, _ in rows])
        return len(rows)

    async def _slot(
        self, conn: DbConnection, catalog: Catalog, product_id: str, option_id: str, availability_id: str
    ) -> SlotAvailability | None:
        product = catalog.product(product_id)
        option = product.option(option_id) if product else None
        slot = slot_for_id(product, option, availability_id) if product and option else None
        if product is None or option is None or slot is None:
            return None
        return (await self._availability.states_in(conn, product, option, [slot]))[0]
