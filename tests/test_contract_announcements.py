"""A contract save announces what it changed (issue 47, finding 6): a stop-sell or a block changes
what resellers see of departures at once, and a channel manager kept selling closed departures
until it was refused, as no `availability_update` went out. Now each departure whose view the
save changed is announced, to the connections whose view changed: a stop-sell to its own
reseller (CLOSED), a block to the others (fewer places; the holder's own view does not change,
as at its release), nothing for a save that changes no one's view; and `product_update` to the
reseller for each product it now sells otherwise. Real receivers on loopback; the clock is
2026-06-01T08:00Z; the cruise's departures (10:00, 12:00, 14:00, 16:00) hold 20 places."""

from __future__ import annotations

from typing import Any

import httpx

from berth.container import Services, build_services
from berth.settings import Settings
from tests.bookings_helpers import confirm
from tests.conftest import KEY_A, KEY_B, Clock
from tests.receivers import Receiver, receiver
from tests.test_allotments import book
from tests.test_contracts import put_contract
from tests.test_webhooks import drain, subscribe

TUESDAY = ["2026-06-02T10:00:00+01:00", "2026-06-02T12:00:00+01:00", "2026-06-02T14:00:00+01:00", "2026-06-02T16:00:00+01:00"]  # fmt: skip
STOP_TUESDAY = {
    "stopSells": [
        {"product": "thames-sightseeing", "option": "DEFAULT", "from": "2026-06-02", "until": "2026-06-02"}
    ]
}
# Tuesday's and Wednesday's 10:00 cruises, ten places each, released at the departure.
BLOCK = {"product": "thames-sightseeing", "option": "DEFAULT", "from": "2026-06-02", "until": "2026-06-03",
         "startTimes": ["10:00"], "places": 10, "releaseHours": 0}  # fmt: skip
BLOCKED = ["2026-06-02T10:00:00+01:00", "2026-06-03T10:00:00+01:00"]


def announced(to: Receiver, since: int = 0) -> list[tuple[str, str, int | None]]:
    """(availability id, status, vacancies) of each availability_update received since `since`."""
    found = [p["availability"] for p in to.payloads()[since:] if p["event"] == "availability_update"]
    return sorted((a["id"], a["status"], a["vacancies"]) for a in found)


async def saved(client: httpx.AsyncClient, services: Services, key: str, document: dict[str, Any]) -> None:
    answer = await put_contract(client, services, key, document)
    assert answer.status_code == 200, answer.text
    await drain(services)


async def test_a_stop_sell_is_announced_closed_to_its_reseller_only(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async with receiver() as to_a, receiver() as to_b:
        await subscribe(client, to_a.url, event="availability_update", key=KEY_A)
        await subscribe(client, to_b.url, event="availability_update", key=KEY_B)
        await saved(client, bookable, KEY_B, STOP_TUESDAY)
        assert announced(to_b) == [(slot, "CLOSED", 0) for slot in TUESDAY]
        assert to_a.requests == [], "A's view did not change"

        # The same contract again, and a change of terms only: no one's view changes.
        await saved(client, bookable, KEY_B, STOP_TUESDAY)
        await saved(client, bookable, KEY_B, {**STOP_TUESDAY, "notes": "unpaid", "paymentTerms": "PREPAID"})
        assert len(to_b.requests) == len(TUESDAY) and to_a.requests == []

        # Lifted: open again, to B alone.
        await saved(client, bookable, KEY_B, {})
        assert announced(to_b, len(TUESDAY)) == [(slot, "AVAILABLE", 20) for slot in TUESDAY]
        assert to_a.requests == []


async def test_a_block_is_announced_to_the_others_whose_places_it_takes(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async with receiver() as to_a, receiver() as to_b:
        await subscribe(client, to_a.url, event="availability_update", key=KEY_A)
        await subscribe(client, to_b.url, event="availability_update", key=KEY_B)
        await saved(client, bookable, KEY_B, {"allotments": [BLOCK]})
        assert announced(to_a) == [(slot, "AVAILABLE", 10) for slot in BLOCKED]
        assert to_b.requests == [], "B sees its own block's places as its own: its view did not change"

        # B fills Tuesday's block: shrinking it to what B holds changes nothing there for A.
        held = await book(client, KEY_B, 10, BLOCKED[0])
        assert (await confirm(client, held.json()["uuid"], KEY_B)).status_code == 200
        await drain(bookable)
        before_a, before_b = len(to_a.requests), len(to_b.requests)
        await saved(client, bookable, KEY_B, {"allotments": [{**BLOCK, "places": 8}]})
        assert announced(to_a, before_a) == [(BLOCKED[1], "AVAILABLE", 12)]
        assert len(to_b.requests) == before_b

        # Dropped: Wednesday's places are everyone's again; Tuesday's stay B's bookings.
        await saved(client, bookable, KEY_B, {})
        assert announced(to_a, before_a + 1) == [(BLOCKED[1], "AVAILABLE", 20)]
        assert len(to_b.requests) == before_b


async def test_a_product_the_contract_starts_selling_is_a_product_update(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    only_museum = {"products": [{"product": "tower-of-stories"}]}
    await saved(client, bookable, KEY_B, only_museum)
    async with receiver() as to_a, receiver() as to_b:
        await subscribe(client, to_a.url, event="product_update", key=KEY_A)
        await subscribe(client, to_b.url, event="product_update", key=KEY_B, capabilities="octo/pricing")
        await saved(client, bookable, KEY_B, only_museum)
        assert to_b.requests == []
        with_cruise = {"products": [{"product": "tower-of-stories"}, {"product": "thames-sightseeing"}]}
        await saved(client, bookable, KEY_B, with_cruise)
        [added] = to_b.payloads()
        assert added["product"]["id"] == "thames-sightseeing"
        assert added["diff"][0]["op"] == "add"
        await saved(client, bookable, KEY_B, {**with_cruise, "rate": {"commission": 25}})
        assert sorted(p["product"]["id"] for p in to_b.payloads()[1:]) == [
            "thames-sightseeing",
            "tower-of-stories",
        ]
        assert all(d["path"].endswith("/net") for p in to_b.payloads()[1:] for d in p["diff"])
        assert to_a.requests == []


async def test_another_process_announces_the_saved_block_not_the_one_it_kept(
    client: httpx.AsyncClient, bookable: Services, settings: Settings, clock: Clock
) -> None:
    """The fan-out may run in another process, which keeps the blocks it read for
    BERTH_AUTH_CACHE_SECONDS (an hour here): it reads them again for a save's announcements."""
    other = build_services(settings.model_copy(update={"auth_cache_seconds": 3600.0}), clock)
    try:
        async with receiver() as to_a:
            await subscribe(client, to_a.url, event="availability_update", key=KEY_A)
            assert not await other.allotments.book()  # kept: no block anywhere
            answer = await put_contract(client, bookable, KEY_B, {"allotments": [BLOCK]})
            assert answer.status_code == 200, answer.text
            await drain(other)
            assert announced(to_a) == [(slot, "AVAILABLE", 10) for slot in BLOCKED]
    finally:
        await other.close()
