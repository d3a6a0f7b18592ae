"""A sale keeps its price (issue 37): a booking's lines are priced when it is made and changed only
by a change to the booking. After every price of the catalogue changes, the booking, its unit
items, its order, the next webhook payload and its receipt still say what it was sold at; a
change to the booking prices only its new parts, at the rates of that moment.
Clock: 2026-06-01T08:00Z (09:00 in London)."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select, update

from berth.container import Services
from berth.settings import Settings
from berth.store.database import Database
from berth.store.migrate import downgrade, upgrade
from berth.store.tables import bookings
from tests.bookings_helpers import GUEST, booking_products, reservation
from tests.builders import Document, catalog, load
from tests.conftest import ADMIN, Clock, auth
from tests.mail_helpers import Sink, box_office, parts, smtp_sink
from tests.receivers import receiver
from tests.test_webhooks import drain, subscribe

PRICED = "octo/pricing, octo/cart"
AMOUNTS = ("retail", "original", "net")


@pytest.fixture
async def sink() -> AsyncIterator[Sink]:
    async with smtp_sink() as running:
        yield running


@pytest.fixture
def settings(settings: Settings, sink: Sink) -> Settings:
    return settings.model_copy(
        update={"smtp_url": SecretStr(f"smtp://127.0.0.1:{sink.port}"), "mail_from": "Co <m@berth.test>"}
    )


def _halved(node: Any) -> Any:
    """Every amount of a catalogue document halved (a price, its taxes, extras' prices)."""
    if isinstance(node, list):
        return [_halved(item) for item in node]
    if not isinstance(node, dict):
        return node
    found = {key: _halved(value) for key, value in node.items()}
    if "currency" in found and "retail" in found:
        for key in AMOUNTS:
            if isinstance(found.get(key), int):
                found[key] //= 2
        for tax in found.get("includedTaxes", ()):
            for key in AMOUNTS:
                if isinstance(tax.get(key), int):
                    tax[key] //= 2
    return found


def halved_products() -> tuple[Document, ...]:
    return tuple(_halved(copy.deepcopy(p)) for p in booking_products())


async def _get(client: httpx.AsyncClient, path: str) -> dict[str, Any]:
    response = await client.get(path, headers=auth(capabilities=PRICED))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def test_a_confirmed_sale_keeps_its_price_when_the_catalogue_changes(
    client: httpx.AsyncClient, bookable: Services, sink: Sink
) -> None:
    await box_office(bookable)  # the supplier's own sale: its receipt shows the price paid
    async with receiver() as target:
        await subscribe(client, target.url, capabilities="octo/pricing")
        held = await client.post(
            "/octo/bookings",
            json=reservation(("adult", "adult", "child"), currency="EUR"),
            headers=auth(capabilities=PRICED),
        )
        assert held.status_code == 200, held.text
        uuid, order_id = held.json()["uuid"], held.json()["orderId"]
        confirmed = await client.post(
            f"/octo/bookings/{uuid}/confirm",
            json={"contact": GUEST, "emailReceipt": True},
            headers=auth(capabilities=PRICED),
        )
        assert confirmed.status_code == 200, confirmed.text
        sold = confirmed.json()
        assert sold["pricing"]["retail"] == 2500 + 2500 + 1500
        assert [item["pricing"]["retail"] for item in sold["unitItems"]] == [2500, 2500, 1500]
        order = await _get(client, f"/octo/orders/{order_id}")
        month = sold["availability"]["localDateTimeStart"][:7]
        statement_path = f"/admin/api/connections/Reseller A/statements/{month}"
        statement = (await client.get(statement_path, headers=ADMIN)).json()
        assert [line["supplierReference"] for line in statement["lines"]] == [sold["supplierReference"]]
        assert [(t["retail"], t["net"]) for t in statement["totals"]] == [
            (sold["pricing"]["retail"], sold["pricing"]["net"])
        ]
        await drain(bookable)
        target.requests.clear()

        await bookable.catalog.replace(catalog(*halved_products()))

        again = await _get(client, f"/octo/bookings/{uuid}")
        assert again["pricing"] == sold["pricing"]
        assert (await client.get(statement_path, headers=ADMIN)).json() == statement
        assert [i["pricing"] for i in again["unitItems"]] == [i["pricing"] for i in sold["unitItems"]]
        assert (await _get(client, f"/octo/orders/{order_id}"))["pricing"] == order["pricing"]
        # The next webhook payload (a change of notes) carries the price as sold, and no price diff.
        patched = await client.patch(
            f"/octo/bookings/{uuid}", json={"notes": "window seats"}, headers=auth(capabilities=PRICED)
        )
        assert patched.status_code == 200, patched.text
        await drain(bookable)
        [delivery] = target.requests
        assert delivery.json["booking"]["pricing"] == sold["pricing"]
        assert not [op for op in delivery.json["diff"] if "pricing" in op["path"]]
        # The receipt is written out when it is sent, after the change: it says the price paid.
        while await bookable.mailer.send_due():
            pass
        [email] = sink.received
        text, html = parts(email)
        assert "€65.00" in text and "€65.00" in html


async def test_an_update_prices_only_the_new_parts_at_the_rates_of_that_moment(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, capabilities="octo/pricing")
        held = await client.post(
            "/octo/bookings", json=reservation(("adult",), currency="EUR"), headers=auth(capabilities=PRICED)
        )
        uuid = held.json()["uuid"]
        [adult] = held.json()["unitItems"]
        await client.post(
            f"/octo/bookings/{uuid}/confirm", json={"contact": GUEST}, headers=auth(capabilities=PRICED)
        )
        await drain(bookable)
        target.requests.clear()
        await bookable.catalog.replace(catalog(*halved_products()))

        patched = await client.patch(
            f"/octo/bookings/{uuid}",
            json={"unitItems": [{"uuid": adult["uuid"], "unitId": "adult"}, {"unitId": "adult"}]},
            headers=auth(capabilities=PRICED),
        )
        assert patched.status_code == 200, patched.text
        booking = patched.json()
        assert [item["pricing"]["retail"] for item in booking["unitItems"]] == [2500, 1250]
        assert booking["pricing"]["retail"] == 3750
        assert booking["pricing"]["net"] == 2000 + 1000
        await drain(bookable)
        [delivery] = target.requests
        change = {"op": "replace", "path": "/pricing/retail", "was": 2500, "value": 3750}
        assert change in delivery.json["diff"]


def _with_pdf_tickets(products: tuple[Document, ...]) -> tuple[Document, ...]:
    """The cruise delivering a PDF per guest: a ticket reissued would get another URL."""
    cruise, *others = products
    return ({**cruise, "deliveryFormats": ["QRCODE", "PDF_URL"]}, *others)


async def test_unit_items_sent_without_their_uuids_keep_the_ones_sold(
    client: httpx.AsyncClient, services: Services
) -> None:
    """Each unit item sent without a uuid takes the first existing item of its unit the request
    does not name, in order: it keeps its price line, supplier reference and ticket."""
    await load(services, catalog(*_with_pdf_tickets(booking_products())))
    held = await client.post(
        "/octo/bookings", json=reservation(("adult",), currency="EUR"), headers=auth(capabilities=PRICED)
    )
    uuid = held.json()["uuid"]
    confirmed = await client.post(
        f"/octo/bookings/{uuid}/confirm", json={"contact": GUEST}, headers=auth(capabilities=PRICED)
    )
    [adult] = confirmed.json()["unitItems"]
    assert [o["deliveryFormat"] for o in adult["ticket"]["deliveryOptions"]] == ["QRCODE", "PDF_URL"]
    await services.catalog.replace(catalog(*_with_pdf_tickets(halved_products())))

    def sold(item: dict[str, Any]) -> tuple[Any, ...]:
        return item["uuid"], item["supplierReference"], item["ticket"], item["pricing"]

    async def patched(items: list[dict[str, str]]) -> dict[str, Any]:
        response = await client.patch(
            f"/octo/bookings/{uuid}", json={"unitItems": items}, headers=auth(capabilities=PRICED)
        )
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    booking = await patched([{"unitId": "adult"}, {"unitId": "child"}])
    kept, child = booking["unitItems"]
    assert sold(kept) == sold(adult)
    assert (child["unitId"], child["pricing"]["retail"], child["pricing"]["net"]) == ("child", 750, 600)
    assert (booking["pricing"]["retail"], booking["pricing"]["net"]) == (2500 + 750, 2000 + 600)
    # In any order; the item named by its uuid is its own, the others take what is left.
    again = await patched(
        [{"unitId": "child"}, {"unitId": "adult"}, {"uuid": child["uuid"], "unitId": "child"}]
    )
    assert [i["uuid"] for i in again["unitItems"][1:]] == [adult["uuid"], child["uuid"]]
    assert sold(again["unitItems"][1]) == sold(adult)
    assert [i["pricing"]["retail"] for i in again["unitItems"]] == [750, 2500, 750]
    # A unit item given another unit is sold anew, at the price of now.
    changed = await patched([{"unitId": "adult"}, {"uuid": again["unitItems"][0]["uuid"], "unitId": "adult"}])
    assert [i["pricing"]["retail"] for i in changed["unitItems"]] == [2500, 1250]
    assert sold(changed["unitItems"][0]) == sold(adult)


async def test_a_move_to_another_day_is_priced_on_that_day(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    held = await client.post(
        "/octo/bookings", json=reservation(("adult",), currency="EUR"), headers=auth(capabilities=PRICED)
    )
    uuid = held.json()["uuid"]
    await bookable.catalog.replace(catalog(*halved_products()))
    assert (await _get(client, f"/octo/bookings/{uuid}"))["pricing"]["retail"] == 2500
    moved = await client.patch(
        f"/octo/bookings/{uuid}",
        json={"availabilityId": "2026-06-03T10:00:00+01:00"},
        headers=auth(capabilities=PRICED),
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["pricing"]["retail"] == 1250


async def _retail(services: Services, uuid: str) -> int:
    async with services.database.transaction(write=False) as conn:
        lines = await conn.scalar(select(bookings.c.price_lines).where(bookings.c.uuid == uuid))
    return sum(line["retail"] for line in lines or ())


async def test_the_migration_prices_existing_bookings_from_the_catalogue_of_their_day(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    """Booked under the first catalogue (full prices), under the second (halved), and before any
    catalogue version was kept: migrated from 0025, each is priced from the catalogue in force
    when it was made, the last from the current one."""
    first = (await client.post("/octo/bookings", json=reservation(("adult",)), headers=auth())).json()
    early = (await client.post("/octo/bookings", json=reservation(("adult",)), headers=auth())).json()
    clock.advance(minutes=1)
    await bookable.catalog.replace(catalog(*halved_products()))
    clock.advance(minutes=1)
    second = (await client.post("/octo/bookings", json=reservation(("adult",)), headers=auth())).json()
    database = Database(bookable.settings.database_url)
    try:
        async with database.transaction(write=True) as conn:
            await conn.execute(
                update(bookings)
                .where(bookings.c.uuid == early["uuid"])
                .values(created_at=clock.now - timedelta(days=30))
            )
        await downgrade(database, "0025")
        done = await upgrade(database)
    finally:
        await database.dispose()
    assert [await _retail(bookable, b["uuid"]) for b in (first, second, early)] == [2500, 1250, 1250]
    assert any(
        "3 existing bookings: 2 from the catalogue version in force when each was made, "
        "1 from the current catalogue" in note
        for note in done.notes
    ), done.notes
