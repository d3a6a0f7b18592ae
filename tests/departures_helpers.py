"""Helpers of the departure operations tests: a departure's admin API path and calls."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from tests.bookings_helpers import SLOT, TOUR
from tests.conftest import ADMIN


def departure_path(product: dict[str, str] = TOUR, availability_id: str = SLOT, suffix: str = "") -> str:
    parts = (product["productId"], product["optionId"], availability_id)
    return "/admin/api/departures/" + "/".join(quote(p, safe="") for p in parts) + suffix


async def patch_departure(
    client: httpx.AsyncClient,
    body: dict[str, Any],
    product: dict[str, str] = TOUR,
    availability_id: str = SLOT,
) -> httpx.Response:
    return await client.patch(departure_path(product, availability_id), json=body, headers=ADMIN)


async def changed_departure(
    client: httpx.AsyncClient,
    body: dict[str, Any],
    product: dict[str, str] = TOUR,
    availability_id: str = SLOT,
) -> dict[str, Any]:
    response = await patch_departure(client, body, product, availability_id)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def cancel_departure(
    client: httpx.AsyncClient, reason: str, product: dict[str, str] = TOUR, availability_id: str = SLOT
) -> httpx.Response:
    return await client.post(
        departure_path(product, availability_id, "/cancel"), json={"reason": reason}, headers=ADMIN
    )
