"""Bookings paid with a gift voucher over OCTO (`giftPayment` on confirm, octo/gifts): the
voucher pays exactly what is asked, at most the booking's price, in the confirmation's
transaction; a refusal leaves the booking on hold and the voucher untouched; a cancellation
gives the amount back. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import GUEST, reservation
from tests.conftest import ADMIN, auth

CAPS = "octo/gifts, octo/pricing"


async def _voucher(client: httpx.AsyncClient, amount: int) -> str:
    """A confirmed EUR voucher sold by reseller A (its contract sells gifts), and its code."""
    await client.put(
        "/admin/api/connections/Reseller A/contract",
        json={"products": "ALL", "sellsGifts": True},
        headers=ADMIN,
    )
    created = await client.post(
        "/octo/gifts",
        json={
            "uuid": str(uuid.uuid4()),
            "amount": amount,
            "currency": "EUR",
            "emailReceipt": False,
            "contact": GUEST,
        },
        headers=auth(capabilities=CAPS),
    )
    assert created.status_code == 200, created.text
    confirmed = await client.post(
        f"/octo/gifts/{created.json()['uuid']}/confirm",
        json={"contact": GUEST},
        headers=auth(capabilities=CAPS),
    )
    assert confirmed.status_code == 200, confirmed.text
    options = confirmed.json()["voucher"]["deliveryOptions"]
    code: str = next(o["deliveryValue"] for o in options if o["deliveryFormat"] == "QRCODE")
    return code


async def _confirm(client: httpx.AsyncClient, uuid: str, payment: dict[str, Any]) -> httpx.Response:
    return await client.post(
        f"/octo/bookings/{uuid}/confirm",
        json={"contact": GUEST, "giftPayment": payment},
        headers=auth(capabilities=CAPS),
    )


async def _hold(client: httpx.AsyncClient) -> dict[str, Any]:
    held = await client.post(
        "/octo/bookings", json=reservation(("adult", "adult")), headers=auth(capabilities=CAPS)
    )
    assert held.status_code == 200, held.text
    booking: dict[str, Any] = held.json()
    return booking


@pytest.fixture
async def code(client: httpx.AsyncClient, bookable: Services) -> str:
    return await _voucher(client, 4000)


async def test_a_voucher_pays_part_of_a_booking_and_a_cancellation_gives_it_back(
    client: httpx.AsyncClient, bookable: Services, code: str
) -> None:
    booking = await _hold(client)
    paid = await _confirm(
        client, booking["uuid"], {"giftCode": code.lower(), "amount": 3000, "currency": "EUR"}
    )
    assert paid.status_code == 200, paid.text
    body = paid.json()
    assert body["status"] == "CONFIRMED"
    assert body["giftPayment"] == {
        "giftCode": "…" + code.replace("-", "")[-4:],
        "amount": 3000,
        "currency": "EUR",
    }
    second = await _hold(client)
    short = await _confirm(client, second["uuid"], {"giftCode": code, "amount": 1500, "currency": "EUR"})
    assert short.status_code == 400 and short.json()["error"] == "GIFT_INSUFFICIENT_BALANCE", short.text
    left = (await client.get(f"/octo/bookings/{second['uuid']}", headers=auth(capabilities=CAPS))).json()
    assert (left["status"], left["giftPayment"]) == ("ON_HOLD", None)
    cancelled = await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth())
    assert cancelled.status_code == 200, cancelled.text
    again = await _confirm(client, second["uuid"], {"giftCode": code, "amount": 4000, "currency": "EUR"})
    assert again.status_code == 200, again.text


@pytest.mark.parametrize(
    ("payment", "error"),
    [
        ({"giftCode": "NOT-A-CODE", "amount": 100, "currency": "EUR"}, "INVALID_GIFT_CODE"),
        ({"amount": 100, "currency": "EUR"}, "BAD_REQUEST"),
        ({"giftCode": "X", "amount": 0, "currency": "EUR"}, "BAD_REQUEST"),
    ],
)
async def test_a_payment_that_cannot_be_taken_is_refused_and_leaves_the_booking_held(
    client: httpx.AsyncClient, bookable: Services, code: str, payment: dict[str, Any], error: str
) -> None:
    booking = await _hold(client)
    refused = await _confirm(client, booking["uuid"], payment)
    assert refused.status_code == 400 and refused.json()["error"] == error, refused.text
    left = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert left["status"] == "ON_HOLD"


async def test_a_voucher_pays_no_more_than_the_booking_costs(
    client: httpx.AsyncClient, bookable: Services, code: str
) -> None:
    booking = await _hold(client)  # two adults: EUR 50.00
    over = await _confirm(client, booking["uuid"], {"giftCode": code, "amount": 5001, "currency": "EUR"})
    assert over.status_code == 400, over.text
    assert over.json()["errorMessage"] == "giftPayment.amount 5001 is more than the booking's price, 5000 EUR"
    wrong = await _confirm(client, booking["uuid"], {"giftCode": code, "amount": 100, "currency": "GBP"})
    assert wrong.json()["error"] == "GIFT_CURRENCY_MISMATCH", wrong.text


async def test_an_orders_gift_payment_is_shared_over_its_bookings_in_order(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    code = await _voucher(client, 8000)
    caps = f"octo/cart, {CAPS}"
    bookings = [reservation(("adult", "adult")), reservation(("adult", "adult"))]
    order = (
        await client.post("/octo/orders", json={"bookings": bookings}, headers=auth(capabilities=caps))
    ).json()
    path = f"/octo/orders/{order['id']}/confirm"
    too_much = await client.post(
        path, json={"contact": GUEST, "giftPayment": {"giftCode": code, "amount": 10001, "currency": "EUR"}},
        headers=auth(capabilities=caps),
    )  # fmt: skip
    assert (
        too_much.status_code == 400
        and "more than the order's price, 10000" in too_much.json()["errorMessage"]
    )
    paid = await client.post(
        path, json={"contact": GUEST, "giftPayment": {"giftCode": code, "amount": 6000, "currency": "EUR"}},
        headers=auth(capabilities=caps),
    )  # fmt: skip
    assert paid.status_code == 200, paid.text
    assert [b["giftPayment"]["amount"] for b in paid.json()["bookings"]] == [5000, 1000]
    rest = await _hold(client)
    short = await _confirm(client, rest["uuid"], {"giftCode": code, "amount": 2001, "currency": "EUR"})
    assert short.json()["error"] == "GIFT_INSUFFICIENT_BALANCE", short.text
