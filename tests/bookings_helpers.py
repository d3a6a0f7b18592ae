"""Small builders for booking tests."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.conftest import KEY_A, auth

SLOT = "2026-06-02T10:00:00+01:00"
TOUR = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
GUEST = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}


def reservation(
    units: tuple[str, ...] = ("adult", "adult"), availability_id: str = SLOT, **extra: Any
) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **TOUR,
        "availabilityId": availability_id,
        "unitItems": [{"unitId": u} for u in units],
        **extra,
    }


async def reserve(
    client: httpx.AsyncClient, body: dict[str, Any] | None = None, key: str = KEY_A, **headers: str
) -> dict[str, Any]:
    response = await client.post("/octo/bookings", json=body or reservation(), headers=auth(key, **headers))
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def confirm(
    client: httpx.AsyncClient, booking_uuid: str, key: str = KEY_A, **extra: Any
) -> httpx.Response:
    return await client.post(
        f"/octo/bookings/{booking_uuid}/confirm", json={"contact": GUEST, **extra}, headers=auth(key)
    )


async def vacancies(
    client: httpx.AsyncClient, availability_id: str = SLOT, product: dict[str, str] = TOUR
) -> int:
    response = await client.post(
        "/octo/availability", json={**product, "availabilityIds": [availability_id]}, headers=auth()
    )
    value = response.json()[0]["vacancies"]
    assert isinstance(value, int)
    return value
