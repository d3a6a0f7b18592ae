"""octo/resources: a selection that names some resource groups only (issue 17, item 8).

A selection governs the groups it names; required groups it does not name are allocated
automatically on create and keep their allocation where it still fits on PATCH and confirm.
The preview on `/availability/resources` shows the same result.

On the resources tests' harbour cruise (`tests.resources_helpers`), the empty 10:00 departure of 3 June has Kingfisher (15 seats,
1A is the guide's) and Heron (12 seats), and Coach 1 (16) and Coach 2 (12). Automatic
allocation gives a small party the fuller fit: Heron, and Coach 2."""

from __future__ import annotations

from typing import Any

import httpx

from berth.container import Services
from tests.bookings_helpers import GUEST
from tests.conftest import auth
from tests.resources_helpers import BOOKED_TEN, RIB
from tests.test_resources import (
    ONE,
    RIB_ELEVEN,
    TEN,
    R,
    body,
    book,
    booked,
    count_bookings,
    free_seats,
    picks,
    slot_groups,
    summary,
)


async def patch(client: httpx.AsyncClient, booking: dict[str, Any], change: dict[str, Any]) -> httpx.Response:
    return await client.patch(f"/octo/bookings/{booking['uuid']}", json=change, headers=auth(capabilities=R))


async def preview(client: httpx.AsyncClient, data: dict[str, Any]) -> httpx.Response:
    return await client.post("/octo/availability/resources", json=data, headers=auth(capabilities=R))


async def test_a_reservation_naming_one_group_gets_the_others_automatically(
    client: httpx.AsyncClient, seated: Services
) -> None:
    boat_only = await booked(client, body(("adult", "adult"), resourceAllocations=picks("kingfisher")))
    assert summary(boat_only) == [("boats", "kingfisher", 2, ["1B", "1C"]), ("coaches", "coach-2", 2, [])]
    coach_only = await booked(
        client, body(("adult", "adult", "infant"), resourceAllocations=picks("coach-1"))
    )
    assert summary(coach_only) == [("boats", "heron", 2, ["1A", "1B"]), ("coaches", "coach-1", 2, [])]
    groups = await slot_groups(client)
    assert (groups["boats"]["vacancies"], groups["coaches"]["vacancies"]) == (23, 24)
    assert "1B" not in free_seats(groups, "kingfisher") and "1A" not in free_seats(groups, "heron")


async def test_the_preview_shows_the_combined_result(client: httpx.AsyncClient, seated: Services) -> None:
    answer = await preview(
        client,
        {"productId": "harbour-cruise", "optionId": "DEFAULT", "availabilityId": TEN,
         "units": [{"id": "adult", "quantity": 2}], "resourceAllocations": picks("kingfisher")},
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    groups = {g["resourceGroupId"]: g for g in answer.json()}
    assert [(s["id"], s["resourceId"]) for s in groups["boats"]["selectedSeats"]] == [
        ("1B", "kingfisher"), ("1C", "kingfisher"),
    ]  # fmt: skip
    assert [(r["resourceId"], r["paxCount"]) for r in groups["coaches"]["resources"]] == [
        ("coach-1", 0), ("coach-2", 2),
    ]  # fmt: skip
    # The booking made with the same selection gets what the preview showed, and the preview took nothing.
    assert (await slot_groups(client))["boats"]["vacancies"] == 27
    made = await booked(client, body(("adult", "adult"), resourceAllocations=picks("kingfisher")))
    assert summary(made) == [("boats", "kingfisher", 2, ["1B", "1C"]), ("coaches", "coach-2", 2, [])]


async def test_patch_naming_one_group_keeps_the_others_where_they_fit(
    client: httpx.AsyncClient, seated: Services
) -> None:
    # On Coach 1, which automatic allocation would not choose for a party of two.
    booking = await booked(client, body(("adult", "adult"), resourceAllocations=picks("heron", "coach-1")))
    moved = await patch(client, booking, {"resourceAllocations": picks("kingfisher")})
    assert moved.status_code == 200, moved.text
    assert summary(moved.json()) == [("boats", "kingfisher", 2, ["1B", "1C"]), ("coaches", "coach-1", 2, [])]
    groups = await slot_groups(client)
    assert len(free_seats(groups, "heron")) == 12  # Heron's seats are free again
    # Naming the coaches keeps the seats on the boat, though fresh seats would be others.
    first = await booked(client, body(("adult", "adult")))
    second = await booked(client, body(("adult", "adult")))
    assert summary(first)[0] == ("boats", "heron", 2, ["1A", "1B"])
    assert summary(second)[0] == ("boats", "heron", 2, ["1C", "1D"])
    await client.post(f"/octo/bookings/{first['uuid']}/cancel", headers=auth(capabilities=R))
    coach = await patch(client, second, {"resourceAllocations": picks("coach-1")})
    assert summary(coach.json()) == [("boats", "heron", 2, ["1C", "1D"]), ("coaches", "coach-1", 2, [])]


async def test_patch_reallocates_an_unnamed_group_that_no_longer_fits(
    client: httpx.AsyncClient, seated: Services
) -> None:
    # Moved to 13:00, when Heron does not sail, naming the coach: the boat is allocated afresh.
    early = await booked(client, body(("adult", "adult")))
    assert summary(early)[0] == ("boats", "heron", 2, ["1A", "1B"])
    late = await patch(client, early, {"availabilityId": ONE, "resourceAllocations": picks("coach-1")})
    assert late.status_code == 200, late.text
    assert summary(late.json()) == [("boats", "kingfisher", 2, ["1B", "1C"]), ("coaches", "coach-1", 2, [])]
    booking = await booked(
        client, body(("adult", "adult"), resourceAllocations=picks("kingfisher", "coach-1"))
    )
    await booked(client, body(("adult",) * 10, resourceAllocations=picks("heron", "coach-1")))
    await booked(client, body(("adult", "adult"), resourceAllocations=picks("heron", "coach-1")))
    # Coach 1 has 16 places: 12 are others', so the party grown to five no longer fits it.
    grown = await patch(
        client, booking, {"unitItems": [{"unitId": "adult"}] * 5, "resourceAllocations": picks("kingfisher")}
    )
    assert grown.status_code == 200, grown.text
    boat, coach = summary(grown.json())
    assert boat[:3] == ("boats", "kingfisher", 5) and len(boat[3]) == 5
    assert coach == ("coaches", "coach-2", 5, [])


async def test_confirm_with_a_partial_selection(client: httpx.AsyncClient, seated: Services) -> None:
    held = await booked(client, body(("adult", "child")))
    assert summary(held) == [("boats", "heron", 2, ["1A", "1B"]), ("coaches", "coach-2", 2, [])]
    confirmed = await client.post(
        f"/octo/bookings/{held['uuid']}/confirm",
        json={"contact": GUEST, "resourceAllocations": picks("coach-1")}, headers=auth(capabilities=R),
    )  # fmt: skip
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "CONFIRMED"
    assert summary(confirmed.json()) == [("boats", "heron", 2, ["1A", "1B"]), ("coaches", "coach-1", 2, [])]


async def test_a_named_resource_that_cannot_take_the_party_is_still_refused(
    client: httpx.AsyncClient, seated: Services
) -> None:
    before = await count_bookings(seated)
    # The box office filled Heron on 2 June at 10:00.
    full = await book(client, body(("adult", "adult"), BOOKED_TEN, resourceAllocations=picks("heron")))
    assert full.status_code == 400
    assert full.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Resource group 'boats' (Boats) does not split and resource 'heron' (MV Heron) has 0 "
        "free places; the booking needs 2",
    }
    shown = await preview(
        client,
        {"productId": "harbour-cruise", "optionId": "DEFAULT", "availabilityId": BOOKED_TEN,
         "units": [{"id": "adult", "quantity": 2}], "resourceAllocations": picks("heron")},
    )  # fmt: skip
    assert shown.json() == full.json()
    idle = await book(client, body(("adult",), ONE, resourceAllocations=picks("heron")))
    assert idle.json() == {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Resource group 'boats' (Boats): resource 'heron' (MV Heron) does not serve availability "
        f"{ONE}",
    }
    small = await book(client, body(("rider",) * 7, RIB_ELEVEN, RIB, resourceAllocations=picks("falcon")))
    assert small.json()["errorMessage"] == (
        "Resource group 'ribs' (RIBs) does not split and resource 'falcon' (RIB Falcon) has 6 free places; "
        "the booking needs 7"
    )
    assert await count_bookings(seated) == before
    # A booking whose selection is refused on PATCH keeps what it had.
    booking = await booked(client, body(("adult", "adult"), BOOKED_TEN))
    refused = await patch(client, booking, {"resourceAllocations": picks("heron")})
    assert refused.json()["error"] == "UNPROCESSABLE_ENTITY"
    kept = await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=R))
    assert summary(kept.json()) == summary(booking)
