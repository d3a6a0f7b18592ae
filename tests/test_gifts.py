"""octo/gifts through the OCTO routes, on the booking tests' catalogue (`bookable`, EUR and
GBP): a gift held, changed, confirmed (its code issued), cancelled; the uuid an idempotency
key; every refusal a clear OCTO error; GET /gifts with Ventrata's filters; every answer valid
against Ventrata's `Gift` schema. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import httpx
import pytest

from berth.container import Services
from berth.domain.gift_codes import parse_code
from berth.domain.gifts import MovementKind
from tests.conftest import KEY_B, Clock, auth
from tests.gifts_helpers import BUYER, FRIEND, answered, gift_body, issued, refused, sell_gifts, send


@pytest.fixture
async def selling(bookable: Services) -> Services:
    await sell_gifts(bookable)
    return bookable


async def test_a_gift_is_held_changed_and_confirmed_with_its_code(
    client: httpx.AsyncClient, selling: Services
) -> None:
    body = gift_body(resellerReference="R-1", notes="for the desk")
    held = answered(await send(client, "POST", "/gifts", body))
    assert (held["status"], held["uuid"], held["amount"], held["currency"]) == (
        "ON_HOLD",
        body["uuid"],
        5000,
        "EUR",
    )
    assert (held["updatable"], held["confirmable"], held["cancellable"]) == (True, True, True)
    assert held["utcExpiresAt"] == "2026-06-01T08:30:00Z" and held["utcConfirmedAt"] is None
    assert held["voucher"]["deliveryOptions"] == [] and held["supplierReference"].startswith("G")
    assert held["pricing"] == {
        "original": 5000, "retail": 5000, "net": 4000, "currency": "EUR", "currencyPrecision": 2, "includedTaxes": [],
    }  # fmt: skip
    assert (held["recipient"]["fullName"], held["contact"]["emailAddress"]) == (
        "Grace Hopper",
        "ada@example.com",
    )

    changed = answered(
        await send(client, "PATCH", f"/gifts/{body['uuid']}", {"amount": 6250, "message": "Enjoy"})
    )
    assert (changed["amount"], changed["pricing"]["net"], changed["message"]) == (6250, 5000, "Enjoy")

    confirmed = answered(await send(client, "POST", f"/gifts/{body['uuid']}/confirm", {"notes": "paid"}))
    assert (confirmed["status"], confirmed["notes"], confirmed["utcConfirmedAt"]) == (
        "CONFIRMED", "paid", "2026-06-01T08:00:00Z",
    )  # fmt: skip
    assert confirmed["utcExpiresAt"] == "2029-06-01T08:00:00Z"  # BERTH_GIFT_VALIDITY_MONTHS: 36
    assert (confirmed["updatable"], confirmed["confirmable"], confirmed["cancellable"]) == (
        False,
        False,
        True,
    )
    [option] = confirmed["voucher"]["deliveryOptions"]
    assert (
        option["deliveryFormat"] == "QRCODE"
        and parse_code(option["deliveryValue"]) == option["deliveryValue"]
    )
    assert answered(await send(client, "GET", f"/gifts/{body['uuid']}")) == confirmed
    again = answered(await send(client, "POST", f"/gifts/{body['uuid']}/confirm"))
    assert again == confirmed  # confirming twice issues nothing more
    movements = await selling.gifts.movements(confirmed["id"])
    assert [(m.kind, m.amount) for m in movements] == [(MovementKind.ISSUE, 6250)]
    assert await selling.gifts.balance(confirmed["id"]) == 6250


async def test_answers_follow_the_capabilities_asked_for(
    client: httpx.AsyncClient, selling: Services
) -> None:
    plain = answered(await send(client, "POST", "/gifts", gift_body(), caps=""), caps="")
    assert "pricing" not in plain
    response = await send(client, "GET", f"/gifts/{plain['uuid']}", caps="octo/gifts")
    assert answered(response, caps="octo/gifts")["id"] == plain["id"]
    assert response.headers["Octo-Capabilities"] == "octo/gifts"


async def test_the_uuid_makes_a_create_safe_to_repeat(client: httpx.AsyncClient, selling: Services) -> None:
    body = gift_body()
    first = answered(await send(client, "POST", "/gifts", body))
    assert answered(await send(client, "POST", "/gifts", body)) == first
    refused(
        await send(client, "POST", "/gifts", {**body, "amount": 9900}),
        "INVALID_GIFT_UUID",
        f"The uuid {body['uuid']!r} was already used for a different gift",
    )


async def test_only_a_contract_that_sells_gifts_may_sell_them(
    client: httpx.AsyncClient, selling: Services
) -> None:
    refused(
        await send(client, "POST", "/gifts", gift_body(), key=KEY_B), "BAD_REQUEST", "sellsGifts is false"
    )
    await sell_gifts(selling, "Reseller B", validUntil="2026-05-31")
    refused(
        await send(client, "POST", "/gifts", gift_body(), key=KEY_B),
        "BAD_REQUEST",
        "contract ended on 2026-05-31",
    )


async def test_a_net_price_list_does_not_apply_to_gifts(client: httpx.AsyncClient, selling: Services) -> None:
    listed = {
        "netPrices": [{"product": "thames-sightseeing", "unit": "adult", "currency": "EUR", "net": 1000}]
    }
    await sell_gifts(selling, "Reseller B", rate=listed)
    gift = answered(await send(client, "POST", "/gifts", gift_body(), key=KEY_B))
    assert (gift["pricing"]["retail"], gift["pricing"]["net"]) == (5000, 5000)
    await sell_gifts(selling, "Reseller B", rate={"commission": "12.5"})
    gift = answered(await send(client, "POST", "/gifts", gift_body(amount=4999), key=KEY_B))
    assert gift["pricing"]["net"] == 4999 - 625  # 624.875 rounded half up


@pytest.mark.parametrize(
    ("fields", "code", "fragment"),
    [
        ({"uuid": None}, "BAD_REQUEST", "uuid is required"),
        ({"uuid": "not-a-uuid"}, "BAD_REQUEST", "uuid"),
        ({"amount": None}, "BAD_REQUEST", "amount is required"),
        ({"amount": 0}, "BAD_REQUEST", "amount must be at least 1"),
        ({"amount": 12.5}, "BAD_REQUEST", "amount"),
        ({"amount": "50"}, "BAD_REQUEST", "amount"),
        ({"amount": 10**13}, "BAD_REQUEST", "above the maximum amount"),
        (
            {"currency": None},
            "BAD_REQUEST",
            "currency is required: the currency of the gift voucher (EUR, GBP)",
        ),
        ({"currency": "USD"}, "BAD_REQUEST", "cannot be sold in 'USD': the supplier sells in EUR, GBP"),
        ({"expirationMinutes": 0}, "BAD_REQUEST", "expirationMinutes"),
        ({"emailReceipt": "yes"}, "BAD_REQUEST", "emailReceipt"),
        ({"settlementMethod": "CASH"}, "BAD_REQUEST", "settlementMethod"),
        ({"contact": {"emailAddress": "x" * 2000}}, "BAD_REQUEST", "contact"),
        (
            {"giftPayment": {"giftCode": "X", "amount": 1, "currency": "EUR"}},
            "BAD_REQUEST",
            "another gift voucher",
        ),
        ({"offerCode": "SPRING10"}, "BAD_REQUEST", "offers do not apply to gift vouchers"),
    ],
)
async def test_every_bad_create_is_a_clear_octo_error(
    client: httpx.AsyncClient, selling: Services, fields: dict[str, object], code: str, fragment: str
) -> None:
    body = {key: value for key, value in gift_body(**fields).items() if value is not None}
    refused(await send(client, "POST", "/gifts", body), code, fragment)


async def test_bodies_that_are_no_gift_are_refused(client: httpx.AsyncClient, selling: Services) -> None:
    headers = {**auth(capabilities="octo/gifts"), "Content-Type": "application/json"}
    for content in (b"{", b"[]", b"null", b'"gift"'):
        response = await client.post("/octo/gifts", content=content, headers=headers)
        assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", content


async def test_unknown_and_foreign_gifts_do_not_exist(client: httpx.AsyncClient, selling: Services) -> None:
    mine = answered(await send(client, "POST", "/gifts", gift_body()))
    unknown = "9b1d2c3e-0000-4000-8000-000000000000"
    for method, path in (("GET", ""), ("PATCH", ""), ("POST", "/confirm"), ("POST", "/cancel")):
        body: dict[str, object] | None = {} if method != "GET" else None
        refused(
            await send(client, method, f"/gifts/{unknown}{path}", body), "INVALID_GIFT_UUID", "does not exist"
        )
        refused(
            await send(client, method, f"/gifts/nope{path}", body), "INVALID_GIFT_UUID", "is not a gift uuid"
        )
        refused(
            await send(client, method, f"/gifts/{mine['uuid']}{path}", body, key=KEY_B),
            "INVALID_GIFT_UUID",
            "does not exist",
        )


async def test_a_confirmed_gift_cannot_be_changed(client: httpx.AsyncClient, selling: Services) -> None:
    gift = await issued(client)
    refused(
        await send(client, "PATCH", f"/gifts/{gift['uuid']}", {"amount": 100}),
        "UNPROCESSABLE_ENTITY",
        "is CONFIRMED: only a gift ON_HOLD can be changed",
    )


async def test_a_held_gift_expires_like_a_booking(
    client: httpx.AsyncClient, selling: Services, clock: Clock
) -> None:
    held = answered(await send(client, "POST", "/gifts", gift_body(expirationMinutes=10)))
    clock.advance(minutes=10)
    shown = answered(await send(client, "GET", f"/gifts/{held['uuid']}"))
    assert (shown["status"], shown["confirmable"], shown["cancellable"]) == ("EXPIRED", False, False)
    refused(
        await send(client, "POST", f"/gifts/{held['uuid']}/confirm"),
        "UNPROCESSABLE_ENTITY",
        "is EXPIRED: only a gift ON_HOLD can be confirmed",
    )
    assert await selling.gifts.expire_due() == 1
    assert await selling.gifts.expire_due() == 0
    assert (await selling.gifts.gift(held["id"])).gift.status == "EXPIRED"


async def test_cancelling_a_held_and_an_unused_gift(client: httpx.AsyncClient, selling: Services) -> None:
    held = answered(await send(client, "POST", "/gifts", gift_body()))
    cancelled = answered(
        await send(client, "POST", f"/gifts/{held['uuid']}/cancel", {"reason": "changed mind"})
    )
    assert cancelled["status"] == "CANCELLED"
    assert cancelled["cancellation"] == {
        "refund": "NONE", "reason": "changed mind", "utcCancelledAt": "2026-06-01T08:00:00Z",
    }  # fmt: skip
    gift = await issued(client)
    cancelled = answered(await send(client, "POST", f"/gifts/{gift['uuid']}/cancel"))
    assert (cancelled["status"], cancelled["cancellation"]["refund"], cancelled["voucher"]["deliveryOptions"]) == (
        "CANCELLED", "FULL", [],
    )  # fmt: skip
    assert answered(await send(client, "POST", f"/gifts/{gift['uuid']}/cancel")) == cancelled
    ledger = [(m.kind, m.amount) for m in await selling.gifts.movements(gift["id"])]
    assert ledger == [(MovementKind.ISSUE, 5000), (MovementKind.CANCELLATION, -5000)]
    refused(
        await send(client, "POST", f"/gifts/{gift['uuid']}/confirm"),
        "UNPROCESSABLE_ENTITY",
        "is CANCELLED: only a gift ON_HOLD can be confirmed",
    )


async def test_gifts_are_found_by_ventratas_filters(
    client: httpx.AsyncClient, selling: Services, clock: Clock
) -> None:
    first = answered(
        await send(client, "POST", "/gifts", gift_body(resellerReference="A-1", expirationMinutes=600))
    )
    clock.advance(hours=1)
    second = answered(
        await send(
            client,
            "POST",
            "/gifts",
            gift_body(resellerReference="A-2", contact={**BUYER, "emailAddress": "Zoe@Example.com"}),
        )
    )
    clock.advance(hours=1)
    answered(await send(client, "PATCH", f"/gifts/{first['uuid']}", {"notes": "touched"}))
    await sell_gifts(selling, "Reseller B")
    answered(await send(client, "POST", "/gifts", gift_body(resellerReference="A-1"), key=KEY_B))

    async def found(query: str) -> list[str]:
        response = await send(client, "GET", f"/gifts?{query}")
        assert response.status_code == 200, response.text
        return [g["uuid"] for g in response.json()]

    assert await found("resellerReference=A-1") == [first["uuid"]]
    assert await found(f"supplierReference={second['supplierReference'].lower()}") == [second["uuid"]]
    assert await found("contactEmailAddress=zoe@example.COM") == [second["uuid"]]
    assert await found("contactEmailAddress=ada@example.com") == [first["uuid"]]
    created = "utcCreatedAtStart=2026-06-01T08:30:00Z&utcCreatedAtEnd=2026-06-01T09:00:00Z"
    assert await found(created) == [second["uuid"]]
    updated = "utcUpdatedAtStart=2026-06-01T10:00:00Z&utcUpdatedAtEnd=2026-06-01T10:00:00Z"
    assert await found(updated) == [first["uuid"]]
    assert await found("resellerReference=nothing") == []
    for query, fragment in (
        ("", "Filter by resellerReference"),
        (
            "utcCreatedAtStart=2026-06-01T08:00:00Z",
            "utcCreatedAtStart and utcCreatedAtEnd must be sent together",
        ),
        (
            "utcUpdatedAtStart=2026-06-02T00:00:00Z&utcUpdatedAtEnd=2026-06-01T00:00:00Z",
            "before utcUpdatedAtStart",
        ),
        ("utcCreatedAtStart=yesterday&utcCreatedAtEnd=today", "utcCreatedAtStart"),
    ):
        refused(await send(client, "GET", f"/gifts?{query}"), "BAD_REQUEST", fragment)
    [listed] = (await send(client, "GET", "/gifts?resellerReference=A-2")).json()
    assert listed["recipient"]["emailAddress"] == FRIEND["emailAddress"]
