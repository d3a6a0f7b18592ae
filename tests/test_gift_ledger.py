"""A gift voucher's balance as a ledger, through the primitives bookings pay with
(`GiftService.redeem_in`, `reverse_in`): never more than the balance, the right refusal for each
code that cannot pay, a cancelled booking's part given back once, the rest expiring with the
voucher, and the supplier's outstanding liability. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import httpx
import pytest

from berth.container import Services
from berth.domain.audit import AuditFilter
from berth.domain.gift_errors import GiftCurrencyMismatch, GiftInsufficientBalance, InvalidGiftCode
from berth.domain.gifts import Movement, MovementKind
from berth.domain.staff import COMMAND_LINE
from tests.conftest import Clock
from tests.gifts_helpers import answered, code_of, gift_body, held_booking, issued, refused, sell_gifts, send


@pytest.fixture
async def selling(bookable: Services) -> Services:
    await sell_gifts(bookable)
    return bookable


async def redeem(
    services: Services, code: str, amount: int, booking_id: str, *, currency: str = "EUR", exact: bool = True,
    at: datetime | None = None,
) -> int:  # fmt: skip
    async with services.database.transaction(write=True) as conn:
        return await services.gifts.redeem_in(
            conn, code, currency, amount, booking_id, at or services.clock(), exact=exact
        )


async def reverse(services: Services, booking_id: str) -> int:
    async with services.database.transaction(write=True) as conn:
        return await services.gifts.reverse_in(conn, booking_id, services.clock())


def kinds(movements: Sequence[Movement]) -> list[tuple[str, int]]:
    return [(m.kind.value, m.amount) for m in movements]


async def test_a_voucher_pays_in_parts_and_never_more_than_it_holds(
    client: httpx.AsyncClient, selling: Services
) -> None:
    gift = await issued(client)
    code = code_of(gift)
    first, second, third = [await held_booking(selling) for _ in range(3)]
    assert await redeem(selling, code, 3000, first) == 3000
    with pytest.raises(
        GiftInsufficientBalance, match=re.escape("has EUR 20.00 left, less than the EUR 25.00 asked for")
    ):
        await redeem(selling, code, 2500, second)
    # As typed by a person: lower case, spaces for dashes.
    typed = code.lower().replace("-", " ")
    assert await redeem(selling, typed, 2500, third, exact=False) == 2000
    with pytest.raises(GiftInsufficientBalance, match="no balance left"):
        await redeem(selling, code, 1, await held_booking(selling), exact=False)
    assert await selling.gifts.balance(gift["id"]) == 0
    shown = answered(await send(client, "GET", f"/gifts/{gift['uuid']}"))
    assert shown["utcRedeemedAt"] == "2026-06-01T08:00:00Z" and shown["cancellable"] is False
    refused(
        await send(client, "POST", f"/gifts/{gift['uuid']}/cancel"),
        "UNPROCESSABLE_ENTITY",
        "bookings were paid with it: cancel them first",
    )


async def test_each_code_that_cannot_pay_says_why(
    client: httpx.AsyncClient, selling: Services, clock: Clock
) -> None:
    booking = await held_booking(selling)
    held = answered(await send(client, "POST", "/gifts", gift_body()))
    gift = await issued(client)
    code = code_of(gift)
    mistyped = code[:-1] + ("0" if code[-1] != "0" else "1")
    cases = [
        ("", "no gift code was given"),
        ("HELLO", "has 28 letters and digits"),
        (mistyped, "mistyped"),
        ("0000-0000-0000-0000-0000-0000-0000", "no gift voucher has this code"),
    ]
    for typed, why in cases:
        with pytest.raises(InvalidGiftCode, match=why) as refusal:
            await redeem(selling, typed, 100, booking)
        assert refusal.value.body()["giftCode"] == typed
    with pytest.raises(GiftCurrencyMismatch, match="is in EUR; it cannot pay an amount in GBP"):
        await redeem(selling, code, 100, booking, currency="GBP")
    cancelled = await issued(client)
    await send(client, "POST", f"/gifts/{cancelled['uuid']}/cancel")
    with pytest.raises(InvalidGiftCode, match="was cancelled"):
        await redeem(selling, code_of(cancelled), 100, booking)
    with pytest.raises(InvalidGiftCode, match="expired on 2029-06-01"):
        await redeem(selling, code, 100, booking, at=datetime.fromisoformat("2029-06-01T08:00:00+00:00"))
    assert held["voucher"]["deliveryOptions"] == []  # a held gift has no code to pay with yet
    assert await selling.gifts.balance(gift["id"]) == 5000


async def test_a_cancelled_booking_gives_its_part_back_once(
    client: httpx.AsyncClient, selling: Services
) -> None:
    gift = await issued(client)
    booking, other = await held_booking(selling), await held_booking(selling)
    await redeem(selling, code_of(gift), 1200, booking)
    await redeem(selling, code_of(gift), 300, booking, exact=False)
    await redeem(selling, code_of(gift), 500, other)
    assert await reverse(selling, booking) == 1500
    assert await reverse(selling, booking) == 0
    assert await reverse(selling, await held_booking(selling)) == 0
    assert kinds(await selling.gifts.movements(gift["id"])) == [
        ("ISSUE", 5000), ("REDEMPTION", -1200), ("REDEMPTION", -300), ("REDEMPTION", -500), ("REVERSAL", 1500),
    ]  # fmt: skip
    assert await selling.gifts.balance(gift["id"]) == 4500


async def test_what_is_left_expires_with_the_voucher(
    client: httpx.AsyncClient, selling: Services, clock: Clock
) -> None:
    gift = await issued(client)
    gbp = await issued(client, currency="GBP", amount=2000)
    booking = await held_booking(selling)
    await redeem(selling, code_of(gift), 1000, booking)
    assert await selling.gifts.outstanding_by_currency() == {"EUR": 4000, "GBP": 2000}
    clock.now = datetime.fromisoformat("2029-06-01T08:00:00+00:00")
    assert await selling.gifts.outstanding_by_currency() == {}  # past its validity: owed no more
    assert await selling.gifts.expire_due() == 2
    assert kinds(await selling.gifts.movements(gift["id"])) == [
        ("ISSUE", 5000), ("REDEMPTION", -1000), ("EXPIRY", -4000),
    ]  # fmt: skip
    assert kinds(await selling.gifts.movements(gbp["id"])) == [("ISSUE", 2000), ("EXPIRY", -2000)]
    shown = answered(await send(client, "GET", f"/gifts/{gift['uuid']}"))
    assert (shown["status"], shown["voucher"]["deliveryOptions"]) == ("EXPIRED", [])
    # The booking cancelled after the voucher expired: its part comes back and expires at once.
    assert await reverse(selling, booking) == 1000
    assert kinds(await selling.gifts.movements(gift["id"]))[-2:] == [("REVERSAL", 1000), ("EXPIRY", -1000)]
    assert await selling.gifts.balance(gift["id"]) == 0


async def test_test_gifts_are_no_liability(client: httpx.AsyncClient, selling: Services) -> None:
    created = answered(
        await client.post(
            "/octo/gifts",
            json=gift_body(),
            headers={"Authorization": "Bearer demo-reseller-a", "Octo-Env": "test"},
        ),
        caps="",
    )
    assert created["testMode"] is True
    await send(client, "POST", f"/gifts/{created['uuid']}/confirm")
    assert await selling.gifts.outstanding_by_currency() == {}


async def test_staff_cancel_an_unused_gift_and_the_audit_trail_says_so(
    client: httpx.AsyncClient, selling: Services
) -> None:
    gift = await issued(client)
    details = await selling.gifts.staff_cancel(gift["id"], "bought twice", actor=COMMAND_LINE)
    assert details.gift.status == "CANCELLED" and details.balance == 0
    [entry], _ = await selling.audit.search(AuditFilter(target=gift["id"]), 10, 0)
    assert (entry.action, entry.actor, entry.target.label) == (
        "gift.cancel",
        "command line",
        gift["supplierReference"],
    )
    assert entry.details == {
        "was": "CONFIRMED",
        "cancelled": 5000,
        "currency": "EUR",
        "reason": "bought twice",
    }
    assert kinds(details.movements) == [("ISSUE", 5000), ("CANCELLATION", -5000)]
    assert [m.actor for m in details.movements] == ["reseller", "command line"]
    assert MovementKind.CANCELLATION in {m.kind for m in details.movements}
