"""slot_holds, the places held per slot kept beside the bookings, always agrees with the
bookings themselves: random sequences of every booking change (reserve, confirm, change
units, move, extend, cancel, expire, test mode, accept, reject, redeem) with the clock moving
on, compared after every step with the sum over the bookings. And the migration fills it from
the bookings already there."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select

from berth.container import Services
from berth.domain.bookings import HELD_FOR_GOOD, Booking, BookingStatus, Contact, place_hold
from berth.store import bookings_reads
from berth.store.database import Database
from berth.store.migrate import downgrade, upgrade
from berth.store.tables import slot_holds
from tests.bookings_helpers import GUEST, reservation
from tests.conftest import ADMIN, Clock, auth

TOUR_SLOTS = ("2026-06-02T10:00:00+01:00", "2026-06-02T14:00:00+01:00")
KAYAK = {"productId": "sunset-kayak", "optionId": "DEFAULT"}
KAYAK_SLOT = "2026-06-06T18:00:00+01:00"
FIRST, LAST = datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 30, tzinfo=UTC)
PRODUCTS = (("thames-sightseeing", "DEFAULT"), ("sunset-kayak", "DEFAULT"))


async def held_both_ways(services: Services, now: datetime) -> list[tuple[dict[str, int], dict[str, int]]]:
    """(from slot_holds, from the bookings) for each product of the test."""
    found = []
    async with services.database.transaction(write=False) as conn:
        for product_id, option_id in PRODUCTS:
            counted = await bookings_reads.held_places(conn, product_id, option_id, FIRST, LAST, now)
            summed = await bookings_reads.held_places(
                conn, product_id, option_id, FIRST, LAST, now, excluding="no-such-booking"
            )
            found.append((counted, summed))
    return found


async def _step(client: httpx.AsyncClient, rng: random.Random, live: list[str], clock: Clock) -> str:
    action = rng.choice(
        ["reserve", "reserve", "reserve-test", "kayak", "confirm", "units", "move", "extend", "cancel",
         "wait", "sweep", "accept", "reject", "redeem"]
    )  # fmt: skip
    chosen = rng.choice(live) if live else None
    answer: httpx.Response | None = None
    if action in ("reserve", "reserve-test"):
        units = tuple(rng.choice(["adult", "child"]) for _ in range(rng.randint(1, 4)))
        body = reservation(units, rng.choice(TOUR_SLOTS), expirationMinutes=rng.choice([1, 5, 30]))
        headers = auth(**({"Octo-Env": "test"} if action == "reserve-test" else {}))
        answer = await client.post("/octo/bookings", json=body, headers=headers)
    elif action == "kayak":
        body = {**reservation(), **KAYAK, "availabilityId": KAYAK_SLOT, "unitItems": [{"unitId": "paddler"}]}
        answer = await client.post("/octo/bookings", json=body, headers=auth())
    elif chosen is None:
        return action
    elif action == "confirm":
        contact = {**GUEST, "phoneNumber": "+447700900001"}
        answer = await client.post(
            f"/octo/bookings/{chosen}/confirm", json={"contact": contact}, headers=auth()
        )
    elif action == "units":
        items = [{"unitId": "adult"} for _ in range(rng.randint(1, 5))]
        answer = await client.patch(f"/octo/bookings/{chosen}", json={"unitItems": items}, headers=auth())
    elif action == "move":
        body = {"availabilityId": rng.choice(TOUR_SLOTS)}
        answer = await client.patch(f"/octo/bookings/{chosen}", json=body, headers=auth())
    elif action == "extend":
        answer = await client.post(
            f"/octo/bookings/{chosen}/extend", json={"expirationMinutes": rng.choice([1, 10])}, headers=auth()
        )
    elif action == "cancel":
        answer = await client.post(f"/octo/bookings/{chosen}/cancel", headers=auth())
    elif action == "wait":
        clock.advance(seconds=rng.choice([0.4, 30, 61, 200]))
    elif action == "sweep":
        return action
    else:  # accept, reject, redeem: the supplier's side, by booking id
        found = await client.get(f"/octo/bookings/{chosen}", headers=auth())
        if found.status_code == 200:
            booking_id = found.json()["id"]
            answer = await client.post(f"/admin/api/bookings/{booking_id}/{action}", headers=ADMIN)
    if answer is not None and answer.status_code == 200 and action in ("reserve", "reserve-test", "kayak"):
        live.append(answer.json()["uuid"])
    if answer is not None:
        assert answer.status_code in (200, 400, 404), answer.text  # refusals are fine; errors are not
    return action


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_slot_holds_agree_with_the_bookings(
    client: httpx.AsyncClient, bookable: Services, clock: Clock, seed: int
) -> None:
    rng = random.Random(seed)
    live: list[str] = []
    actions: list[str] = []
    for _ in range(60):
        actions.append(await _step(client, rng, live, clock))
        if actions[-1] == "sweep":
            await bookable.expiry.expire_due()
        for counted, summed in await held_both_ways(bookable, clock.now):
            assert counted == summed, f"after {actions}"
    assert {"reserve", "confirm", "cancel", "wait"} <= set(actions)


def test_place_hold_counts_until_the_second_the_hold_ends() -> None:
    start = datetime(2026, 6, 2, 9, tzinfo=UTC)
    booking = Booking(
        id="b", uuid="u", connection_id="c", test_mode=False, status=BookingStatus.ON_HOLD,
        product_id="p", option_id="o", availability_id="a", slot_start=start, local_date=None, pax=3,
        reseller_reference=None, supplier_reference="S", notes=None, contact=Contact(), unit_items=(),
        currency=None, freesale=False, request_fingerprint="f", created_at=start, updated_at=None,
        expires_at=datetime(2026, 6, 1, 8, 30, 0, 250_000, tzinfo=UTC), confirmed_at=None, redeemed_at=None,
    )  # fmt: skip
    hold = place_hold(booking)
    assert hold is not None and hold.pax == 3 and hold.until == datetime(2026, 6, 1, 8, 30, 1, tzinfo=UTC)
    exact = replace(booking, expires_at=datetime(2026, 6, 1, 8, 30, tzinfo=UTC))
    assert (place_hold(exact) or hold).until == datetime(2026, 6, 1, 8, 30, tzinfo=UTC)
    confirmed = replace(booking, status=BookingStatus.CONFIRMED)
    assert (place_hold(confirmed) or hold).until == HELD_FOR_GOOD
    for gone in (BookingStatus.CANCELLED, BookingStatus.EXPIRED, BookingStatus.REJECTED):
        assert place_hold(replace(booking, status=gone)) is None
    assert place_hold(replace(booking, test_mode=True)) is None


async def test_the_migration_counts_the_bookings_already_there(
    client: httpx.AsyncClient, stocked: Services, clock: Clock
) -> None:
    """Upgrading a database with bookings (seated parties, plus holds, confirmed and cancelled
    ones) fills slot_holds as the bookings say."""
    for units in (("adult",), ("adult", "child"), ("adult", "adult", "adult")):
        held = (await client.post("/octo/bookings", json=reservation(units), headers=auth())).json()
        if len(units) == 2:
            contact: dict[str, Any] = {"contact": GUEST}
            await client.post(f"/octo/bookings/{held['uuid']}/confirm", json=contact, headers=auth())
        if len(units) == 3:
            await client.post(f"/octo/bookings/{held['uuid']}/cancel", headers=auth())
    clock.advance(minutes=1, microseconds=1)
    before = await held_both_ways(stocked, clock.now)
    assert any(counted for counted, _ in before)
    database = Database(stocked.settings.database_url)
    try:
        async with database.transaction(write=True) as conn:
            await conn.execute(delete(slot_holds))
        await downgrade(database, "0009")
        await upgrade(database)
        async with database.transaction(write=False) as conn:
            rows = (await conn.execute(select(slot_holds.c.until))).all()
    finally:
        await database.dispose()
    assert rows and all(row.until > clock.now - timedelta(days=1) for row in rows)
    assert await held_both_ways(stocked, clock.now) == before
