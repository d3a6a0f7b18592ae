"""Builders for the check-in tests: confirmed parties on the cruise, scans, and what the
outbox holds of a booking."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy import select

from berth.container import Services
from berth.store.tables import deliveries
from tests.bookings_helpers import SLOT, TOUR, confirm, reservation, reserve
from tests.conftest import ADMIN, auth

GATE = {**TOUR, "availabilityId": SLOT}
# 07:00 in London on the day of SLOT: the gate admits that day's tickets without asking.
ON_THE_DAY = datetime(2026, 6, 2, 6, 0, tzinfo=UTC)


async def party(
    client: httpx.AsyncClient, units: tuple[str, ...] = ("adult", "adult"), slot: str = SLOT, **extra: Any
) -> dict[str, Any]:
    """A confirmed booking on the cruise, as OCTO answered its confirmation."""
    held = await reserve(client, reservation(units, availability_id=slot, **extra))
    confirmed = await confirm(client, held["uuid"])
    assert confirmed.status_code == 200, confirmed.text
    result: dict[str, Any] = confirmed.json()
    return result


def nonce() -> str:
    return uuid.uuid4().hex


async def scan(
    client: httpx.AsyncClient,
    code: str,
    headers: dict[str, str] = ADMIN,
    *,
    gate: dict[str, str] | None = GATE,
    status: int = 200,
    path: str = "/admin/api/checkin",
    **extra: Any,
) -> dict[str, Any]:
    body = {"code": code, "nonce": extra.pop("nonce", None) or nonce(), **extra}
    if gate is not None:
        body["departure"] = gate
    response = await client.post(path, json=body, headers=headers)
    assert response.status_code == status, response.text
    result: dict[str, Any] = response.json()
    return result


async def subscribe(client: httpx.AsyncClient) -> None:
    """A booking_update webhook of the cruise's reseller (never called: deliveries are counted)."""
    body = {"event": "booking_update", "url": "http://127.0.0.1:9/hook"}
    response = await client.post("/octo/webhooks", json=body, headers=auth(capabilities="octo/webhooks"))
    assert response.status_code == 200, response.text


async def booking_updates(services: Services, booking_id: str) -> list[dict[str, Any]]:
    """The booking_update deliveries of the booking, oldest first: the booking each carries."""
    async with services.database.transaction(write=False) as conn:
        rows = await conn.execute(
            select(deliveries.c.payload)
            .where(
                deliveries.c.event == "booking_update", deliveries.c.subject_key == f"booking:{booking_id}"
            )
            .order_by(deliveries.c.sequence)
        )
        return [row.payload["booking"] for row in rows]
