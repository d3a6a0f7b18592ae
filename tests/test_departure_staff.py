"""Departure operations as staff actions (issue 21): a viewer may not change or cancel a
departure (FORBIDDEN, nothing changed, nothing recorded); an operator's changes and a
cancellation are in the audit trail, each naming the operator and the departure."""

from __future__ import annotations

from typing import Any

import httpx

from berth.container import Services
from berth.domain.staff import Role
from tests.bookings_helpers import SLOT, reserve
from tests.conftest import ADMIN
from tests.departures_helpers import departure_path
from tests.test_staff_roles import refused, staff_token

DEPARTURE_ID = f"thames-sightseeing/DEFAULT/{SLOT}"


async def audit_of(client: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    response = await client.get("/admin/api/audit", params=params, headers=ADMIN)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


async def test_a_viewer_may_not_change_or_cancel_a_departure(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    await reserve(client)
    refused(await client.patch(departure_path(), json={"closed": True}, headers=viewer), "operator")
    refused(await client.patch(departure_path(), json={"capacity": 5}, headers=viewer), "operator")
    cancel = await client.post(departure_path(suffix="/cancel"), json={"reason": "Storm"}, headers=viewer)
    refused(cancel, "operator")

    seen = await client.get(departure_path(), headers=viewer)  # reading is every role's
    assert seen.status_code == 200, seen.text
    assert (seen.json()["closed"], seen.json()["capacityOverride"], seen.json()["placesHeld"]) == (
        False,
        None,
        2,
    )
    assert await audit_of(client, target=DEPARTURE_ID) == []


async def test_an_operators_departure_actions_are_recorded(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    operator = await staff_token(bookable, "olive@example.com", Role.OPERATOR)
    await reserve(client)
    steps = (
        {"closed": True, "note": "Engine trouble"},
        {"capacity": 12},
        {"closed": False, "capacity": None},
        {"note": "Engine trouble"},  # the same note again: nothing changes, nothing recorded
    )
    for body in steps:
        response = await client.patch(departure_path(), json=body, headers=operator)
        assert response.status_code == 200, response.text
    cancelled = await client.post(
        departure_path(suffix="/cancel"), json={"reason": "Storm"}, headers=operator
    )
    assert cancelled.status_code == 200, cancelled.text

    entries = list(reversed(await audit_of(client, target=DEPARTURE_ID)))
    assert [(e["actor"], e["action"]) for e in entries] == [
        ("olive@example.com", "departure.close"),
        ("olive@example.com", "departure.note"),
        ("olive@example.com", "departure.capacity"),
        ("olive@example.com", "departure.reopen"),
        ("olive@example.com", "departure.capacity"),
        ("olive@example.com", "departure.cancel"),
    ]
    assert {e["target"]["kind"] for e in entries} == {"departure"}
    assert entries[2]["details"] == {"from": None, "to": 12}
    assert entries[4]["details"] == {"from": 12, "to": None}
    assert entries[5]["details"] == {"reason": "Storm", "bookings": 1}
