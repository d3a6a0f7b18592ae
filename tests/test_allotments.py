"""Allotments and stop-sells over HTTP (issue 40): a reseller's block is its own until its
release time, every other key sees and books only the general pool; at the release time (or
early, by staff) the unused places go back to everyone, announced once to those whose view
changed; a stop-sell closes departures to one reseller only. Clock: 2026-06-01T08:00Z; the
cruise's departures hold 20 places."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from berth.container import Services
from berth.domain.catalog.lookup import find_option, find_product
from berth.domain.slots import slot_for_id
from berth.domain.staff import COMMAND_LINE
from tests.bookings_helpers import SLOT, TOUR, confirm, reservation
from tests.conftest import ADMIN, KEY_A, KEY_B, Clock, auth
from tests.receivers import receiver
from tests.test_contracts import connection_id, put_contract
from tests.test_webhooks import drain, subscribe

TWO_PM = "2026-06-02T14:00:00+01:00"
CONTRACTS_DOC = Path(__file__).resolve().parents[1] / "docs" / "contracts.md"
# Released at 2026-06-01T21:00Z, twelve hours before the 10:00 departure (09:00Z).
BLOCK_OF_TEN = {
    "allotments": [
        {
            "product": "thames-sightseeing",
            "option": "DEFAULT",
            "startTimes": ["10:00"],
            "places": 10,
            "releaseHours": 12,
        }
    ]
}


async def seen(client: httpx.AsyncClient, key: str, availability_id: str = SLOT) -> dict[str, Any]:
    response = await client.post(
        "/octo/availability", json={**TOUR, "availabilityIds": [availability_id]}, headers=auth(key)
    )
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()[0]
    return found


async def book(
    client: httpx.AsyncClient, key: str, adults: int, availability_id: str = SLOT
) -> httpx.Response:
    return await client.post(
        "/octo/bookings", json=reservation(("adult",) * adults, availability_id), headers=auth(key)
    )


async def test_a_block_is_its_resellers_alone_until_its_release(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    assert (await put_contract(client, bookable, KEY_B, BLOCK_OF_TEN)).status_code == 200
    a, b = await seen(client, KEY_A), await seen(client, KEY_B)
    assert (a["vacancies"], a["capacity"], b["vacancies"], b["capacity"]) == (10, 10, 20, 20)
    # The 14:00 departure has no block.
    assert (await seen(client, KEY_A, TWO_PM))["vacancies"] == 20
    # A sells the general pool out; B's block is still all B's.
    for _ in range(5):
        assert (await book(client, KEY_A, 2)).status_code == 200
    refused = await book(client, KEY_A, 1)
    assert refused.status_code == 400 and refused.json()["error"] == "UNPROCESSABLE_ENTITY", refused.text
    assert "sold out" in refused.json()["errorMessage"]
    a, b = await seen(client, KEY_A), await seen(client, KEY_B)
    assert (a["status"], a["vacancies"]) == ("SOLD_OUT", 0)
    assert (b["status"], b["vacancies"]) == ("AVAILABLE", 10)
    # B's own bookings draw on its block.
    assert (await book(client, KEY_B, 11)).status_code == 400
    assert (await book(client, KEY_B, 10)).status_code == 200
    assert (await seen(client, KEY_B))["status"] == "SOLD_OUT"


async def test_at_the_release_time_the_unused_places_go_back_announced_once(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    assert (await put_contract(client, bookable, KEY_B, BLOCK_OF_TEN)).status_code == 200
    async with receiver() as to_a, receiver() as to_b:
        await subscribe(client, to_a.url, event="availability_update")
        await subscribe(client, to_b.url, event="availability_update", key=KEY_B)
        catalog = (await bookable.catalog.snapshot()).catalog
        # Today's 10:00 departure (09:00Z) was released eleven hours ago, before the sweep's
        # look-back: released for reads, not announced now.
        assert await bookable.allotments.release_due(catalog) == 0
        for key, adults in ((KEY_A, 5), (KEY_B, 3)):
            held = await book(client, key, adults)
            assert (await confirm(client, held.json()["uuid"], key)).status_code == 200
        await drain(bookable)
        before_a, before_b = len(to_a.requests), len(to_b.requests)
        # 20 - 8 held - 7 of B's block unused.
        assert (await seen(client, KEY_A))["vacancies"] == 5
        assert (await seen(client, KEY_B))["vacancies"] == 12
        assert await bookable.allotments.release_due(catalog) == 0
        clock.advance(hours=13)  # 21:00Z passed; the departure is at 09:00Z tomorrow
        assert (await seen(client, KEY_A))["vacancies"] == 12
        assert await bookable.allotments.release_due(catalog) == 1
        assert await bookable.allotments.release_due(catalog) == 0, "a release is recorded once"
        await drain(bookable)
        announced = to_a.payloads()[before_a:]
        assert [p["availability"]["id"] for p in announced] == [SLOT]
        assert announced[0]["availability"]["vacancies"] == 12
        assert len(to_b.requests) == before_b, "B's own view did not change: no webhook"


def worked_example() -> list[tuple[str, str, str]]:
    """(what happened, A sees, B sees) of each row of docs/contracts.md's worked example."""
    text = CONTRACTS_DOC.read_text(encoding="utf-8")
    table = text[text.index("**Worked example.**") :].split("\n\n")[1]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    assert rows[0] == ["What happened", "B holds", "others hold", "general pool", "A sees", "B sees"]
    return [(row[0], row[4], row[5]) for row in rows[2:]]


def stated(cell: str) -> tuple[int, str | None]:
    """`0 + 7 = 7 (`LIMITED`)`: the places a reseller sees (the last number) and the status,
    where the cell names one."""
    status = re.search(r"\(`(\w+)`\)", cell)
    places = re.findall(r"\d+", cell.split("(")[0])
    return int(places[-1]), status[1] if status else None


async def test_the_worked_example_of_the_contracts_page_is_what_berth_answers(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    """Each row of docs/contracts.md's worked example (the 10:00 cruise, 20 places, a block of
    10 for B), played over HTTP: what A and B see, statuses included. Rows 1-4 on one day; the
    release row, which comes "instead" after row 3, on the next day's 10:00."""
    assert (await put_contract(client, bookable, KEY_B, BLOCK_OF_TEN)).status_code == 200
    catalog = (await bookable.catalog.snapshot()).catalog
    product = find_product(catalog, TOUR["productId"])
    option = find_option(product, "DEFAULT")
    b = await connection_id(bookable, KEY_B)

    async def sell(key: str, places: int, departure: str) -> None:
        assert (await book(client, key, places, departure)).status_code == 200

    async def release(departure: str) -> None:
        slot = slot_for_id(product, option, departure)
        assert slot is not None
        assert await bookable.allotments.release_early(product, option, slot, b, actor=COMMAND_LINE)

    next_day = "2026-06-03T10:00:00+01:00"

    async def nothing() -> None:
        pass

    async def row_two() -> None:
        await sell(KEY_A, 5, SLOT)
        await sell(KEY_B, 3, SLOT)

    async def instead_released() -> None:
        await sell(KEY_A, 5, next_day)
        await sell(KEY_B, 3, next_day)
        await sell(KEY_A, 5, next_day)
        await release(next_day)

    steps: dict[str, tuple[Callable[[], Awaitable[None]], str]] = {
        "nothing sold": (nothing, SLOT),
        "A sells 5, B sells 3": (row_two, SLOT),
        "A sells 5 more": (lambda: sell(KEY_A, 5, SLOT), SLOT),
        "B sells 7 more": (lambda: sell(KEY_B, 7, SLOT), SLOT),
        "or instead, after row 3, the block is released": (instead_released, next_day),
    }
    rows = worked_example()
    assert [what for what, _, _ in rows] == list(steps)
    for what, a_sees, b_sees in rows:
        step, departure = steps[what]
        await step()
        for key, cell in ((KEY_A, a_sees), (KEY_B, b_sees)):
            found = await seen(client, key, departure)
            places, status = stated(cell)
            assert found["vacancies"] == places, (what, key, cell, found)
            if status is not None:
                assert found["status"] == status, (what, key, cell, found)
        if what == "A sells 5 more":  # "After row 3, a request of B for 9 places is refused"
            refused = await book(client, KEY_B, 9)
            assert refused.json()["error"] == "UNPROCESSABLE_ENTITY", refused.text
            assert "sold out" in refused.json()["errorMessage"]


async def test_staff_release_a_block_early_once(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    assert (await put_contract(client, bookable, KEY_B, BLOCK_OF_TEN)).status_code == 200
    catalog = (await bookable.catalog.snapshot()).catalog
    product = find_product(catalog, TOUR["productId"])
    option = find_option(product, "DEFAULT")
    slot = slot_for_id(product, option, SLOT)
    assert slot is not None
    b = await connection_id(bookable, KEY_B)
    (uses,) = await bookable.allotments.blocks_of(product, option, [slot])
    assert [(u.block.places, u.used, u.unused, u.released) for u in uses] == [(10, 0, 10, False)]
    assert await bookable.allotments.release_early(product, option, slot, b, actor=COMMAND_LINE)
    assert not await bookable.allotments.release_early(product, option, slot, b, actor=COMMAND_LINE)
    assert (await seen(client, KEY_A))["vacancies"] == 20
    (uses,) = await bookable.allotments.blocks_of(product, option, [slot])
    assert [(u.unused, u.released) for u in uses] == [(0, True)]


async def test_a_stop_sell_closes_departures_to_one_reseller_only(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    held = await book(client, KEY_A, 2)
    assert held.status_code == 200
    stop = {"stopSells": [{"product": "thames-sightseeing", "from": "2026-06-02", "until": "2026-06-02", "reason": "unpaid invoice 42"}]}  # fmt: skip
    assert (await put_contract(client, bookable, KEY_A, stop)).status_code == 200
    a, b = await seen(client, KEY_A), await seen(client, KEY_B)
    assert (a["status"], a["available"], b["status"]) == ("CLOSED", False, "AVAILABLE")
    assert (await seen(client, KEY_A, "2026-06-03T10:00:00+01:00"))["status"] == "AVAILABLE"
    refused = await book(client, KEY_A, 1)
    assert refused.status_code == 400 and refused.json()["error"] == "INVALID_AVAILABILITY_ID"
    assert "not on sale for this connection" in refused.json()["errorMessage"]
    assert "unpaid" not in refused.text
    # Existing bookings are untouched: the hold made before is confirmed.
    assert (await confirm(client, held.json()["uuid"])).status_code == 200
    # A move onto a stopped departure is a new sale there.
    other = await book(client, KEY_A, 1, "2026-06-03T10:00:00+01:00")
    moved = await client.patch(
        f"/octo/bookings/{other.json()['uuid']}", json={"availabilityId": TWO_PM}, headers=auth(KEY_A)
    )
    assert moved.status_code == 400 and moved.json()["error"] == "INVALID_AVAILABILITY_ID"
    assert (await book(client, KEY_B, 1)).status_code == 200


async def test_bad_allotments_are_refused_with_their_path(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    unknown = await put_contract(client, bookable, KEY_B, {"allotments": [{"product": "no-such", "places": 2, "releaseHours": 1}]})  # fmt: skip
    assert unknown.status_code == 400 and "allotments[0].product" in unknown.json()["errorMessage"]
    bad = await put_contract(client, bookable, KEY_B, {"allotments": [{"product": "sunset-kayak", "places": 0, "releaseHours": -1}]})  # fmt: skip
    message = bad.json()["errorMessage"]
    assert (
        bad.status_code == 400
        and "allotments[0].places" in message
        and "allotments[0].releaseHours" in message
    )
    unsold = await put_contract(
        client,
        bookable,
        KEY_B,
        {
            "products": [{"product": "tower-of-stories"}],
            "allotments": [{"product": "sunset-kayak", "places": 2, "releaseHours": 1}],
        },
    )
    assert unsold.status_code == 400 and "does not sell 'sunset-kayak'" in unsold.json()["errorMessage"]
    assert (await client.get(f"/admin/api/connections/{await connection_id(bookable, KEY_B)}/contract", headers=ADMIN)).json()["version"] == 0  # fmt: skip
