"""octo/offers through the OCTO routes, on the booking tests' catalogue (`bookable`): a code
applied at reserve, update and confirm; an automatic offer; every refusal naming why; the
discount kept with the sale; uses given back by a cancellation. Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from berth.container import Services
from berth.domain.staff import COMMAND_LINE
from tests.bookings_helpers import GUEST, KAYAK, TOUR, reservation
from tests.conftest import ADMIN, KEY_B, auth
from tests.ventrata_schema import problems

OFFERS = "octo/offers, octo/pricing"
KAYAK_SLOT = "2026-06-03T18:00:00+01:00"  # a Wednesday


def offer(offer_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": offer_id,
        "texts": {"en-GB": {"title": offer_id.title()}},
        "discount": {"percent": 10},
        **fields,
    }


async def save(services: Services, *offers: dict[str, Any]) -> None:
    await services.offers.save({"offers": list(offers)}, base_version=None, actor=COMMAND_LINE)


async def post(
    client: httpx.AsyncClient,
    path: str,
    body: dict[str, Any],
    key: str = "demo-reseller-a",
    caps: str = OFFERS,
) -> httpx.Response:
    return await client.post(path, json=body, headers=auth(key, capabilities=caps))


async def booked(client: httpx.AsyncClient, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
    response = await post(client, "/octo/bookings", body, **kw)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def refused(response: httpx.Response, code: str, why: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert (body["error"], body["errorMessage"], body["offerCode"]) == (
        "INVALID_OFFER_CODE",
        f"Offer code {code!r} cannot be used: {why}",
        code,
    )


@pytest.fixture
async def offered(bookable: Services) -> Services:
    await save(
        bookable,
        offer("spring", code="SPRING10", appliesTo=[{"product": "thames-sightseeing", "units": ["adult"]}]),
        offer("weekend", code="WEEKEND", weekdays=["SAT", "SUN"]),
        offer("pair", code="PAIR", minUnits=2, discount={"amounts": {"EUR": 1000}, "per": "BOOKING"}),
        offer("gone", code="GONE", saleUntil="2026-05-31T00:00:00Z"),
        offer("once", code="ONCE", maxUses=1),
        offer("b-only", code="BONLY", channels=["SHOP"]),
    )
    return bookable


async def test_a_code_discounts_the_units_it_applies_to(client: httpx.AsyncClient, offered: Services) -> None:
    booking = await booked(client, reservation(("adult", "child"), offerCode="spring10"))
    assert (booking["offerCode"], booking["offerTitle"], booking["offerIsCombination"]) == (
        "SPRING10",
        "Spring",
        False,
    )
    assert booking["offer"]["code"] == "SPRING10" and booking["offer"]["usable"] is True
    adult, child = (item["pricing"] for item in booking["unitItems"])
    # 10 % of 2500 off the adult (its catalogue original, 2800, stays), nothing off the child.
    assert (adult["original"], adult["retail"], adult["offerDiscount"]["retail"]) == (2800, 2250, 250)
    assert adult["includedTaxes"][0]["retail"] == 375  # VAT 417 scaled to 2250 / 2500
    assert (child["retail"], child["offerDiscount"]) == (1500, None)
    total = booking["pricing"]
    assert (total["retail"], total["offerDiscount"]["retail"]) == (3750, 250)
    assert [(t["name"], t["retail"]) for t in total["offerDiscount"]["includedTaxes"]] == [("VAT", 42)]


async def test_a_booking_keeps_its_discount_when_the_offer_changes_or_goes(
    client: httpx.AsyncClient, offered: Services
) -> None:
    booking = await booked(client, reservation(("adult",), offerCode="SPRING10"))
    await save(offered, offer("spring", code="SPRING10", discount={"percent": 50}))
    again = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=OFFERS))).json()
    assert again["pricing"] == booking["pricing"]
    await save(offered)
    gone = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=OFFERS))).json()
    assert gone["pricing"] == booking["pricing"] and gone["offerCode"] == "SPRING10"
    assert gone["offer"]["title"] == "Spring" and gone["offers"] == []


@pytest.mark.parametrize(
    ("code", "body", "why"),
    [
        ("NOPE", reservation(), "no offer has this code"),
        ("GONE", reservation(), "it expired on 2026-05-31T00:00:00+00:00"),
        ("WEEKEND", reservation(), "only available on Sat and Sun"),
        ("PAIR", reservation(("adult",)), "it needs at least 2 units it applies to; the booking has 1"),
        ("SPRING10", {**reservation(), **KAYAK, "availabilityId": KAYAK_SLOT, "unitItems": [{"unitId": "paddler"}]},
         "it does not apply to product 'sunset-kayak', option 'DEFAULT'"),
        ("BONLY", reservation(), "no offer has this code"),
    ],
)  # fmt: skip
async def test_a_code_that_cannot_be_used_is_refused_with_why(
    client: httpx.AsyncClient, offered: Services, code: str, body: dict[str, Any], why: str
) -> None:
    await refused(await post(client, "/octo/bookings", {**body, "offerCode": code}), code, why)
    listed = (await client.get("/octo/bookings?localDate=2026-06-02", headers=auth())).json()
    assert listed == []  # nothing was held


async def test_a_fixed_amount_per_booking_is_shared_over_its_units(
    client: httpx.AsyncClient, offered: Services
) -> None:
    booking = await booked(client, reservation(("adult", "child"), offerCode="PAIR"))
    adult, child = (item["pricing"] for item in booking["unitItems"])
    # 1000 off 2500 + 1500, in proportion to the retail: 625 and 375.
    assert (adult["retail"], child["retail"], booking["pricing"]["retail"]) == (1875, 1125, 3000)


async def test_uses_are_limited_and_a_cancellation_gives_one_back(
    client: httpx.AsyncClient, offered: Services
) -> None:
    first = await booked(client, reservation(offerCode="ONCE"))
    await refused(await post(client, "/octo/bookings", reservation(offerCode="ONCE")), "ONCE",
                  "it has been used as many times as it may be")  # fmt: skip
    cancelled = await client.post(f"/octo/bookings/{first['uuid']}/cancel", json={}, headers=auth())
    assert cancelled.status_code == 200, cancelled.text
    assert (await booked(client, reservation(offerCode="ONCE")))["offerCode"] == "ONCE"


async def test_uses_per_email_are_counted_when_the_email_is_known(
    client: httpx.AsyncClient, offered: Services
) -> None:
    await save(offered, offer("guest", code="GUEST1", maxUsesPerEmail=1))
    first = await booked(client, reservation(offerCode="GUEST1"))
    confirmed = await post(client, f"/octo/bookings/{first['uuid']}/confirm", {"contact": GUEST})
    assert confirmed.status_code == 200, confirmed.text
    second = await booked(client, reservation(offerCode="GUEST1"))  # no email yet: not counted
    other = await post(
        client,
        f"/octo/bookings/{second['uuid']}/confirm",
        {"contact": {**GUEST, "emailAddress": "ADA@example.com"}},
    )
    await refused(other, "GUEST1", "this email address has used it as many times as it may")
    status = (await client.get(f"/octo/bookings/{second['uuid']}", headers=auth())).json()["status"]
    assert status == "ON_HOLD"


async def test_an_update_prices_new_units_with_the_offer_and_can_drop_it(
    client: httpx.AsyncClient, offered: Services
) -> None:
    booking = await booked(client, reservation(("adult",), offerCode="SPRING10"))
    path = f"/octo/bookings/{booking['uuid']}"
    grown = await client.patch(
        path,
        json={"unitItems": [{"unitId": "adult"}, {"unitId": "adult"}]},
        headers=auth(capabilities=OFFERS),
    )
    assert grown.status_code == 200, grown.text
    assert [i["pricing"]["retail"] for i in grown.json()["unitItems"]] == [2250, 2250]
    dropped = await client.patch(path, json={"offerCode": ""}, headers=auth(capabilities=OFFERS))
    assert dropped.status_code == 200, dropped.text
    body = dropped.json()
    assert (body["offerCode"], body["pricing"]["retail"], body["pricing"]["offerDiscount"]) == (
        None,
        5000,
        None,
    )


async def test_an_automatic_offer_applies_when_offers_are_asked_for(
    client: httpx.AsyncClient, offered: Services
) -> None:
    await save(offered, offer("early", discount={"percent": 5}), offer("earlier", discount={"percent": 15}))
    best = await booked(client, reservation(("adult",)))
    assert (best["offerCode"], best["offerTitle"], best["pricing"]["retail"]) == (None, "Earlier", 2125)
    assert best["offer"]["code"] == "" and {o["title"] for o in best["offers"]} == {"Early", "Earlier"}
    plain = await booked(client, reservation(("adult",)), caps="octo/pricing")
    assert plain["pricing"]["retail"] == 2500 and "offerCode" not in plain


async def test_an_automatic_offer_used_up_is_passed_over_and_a_dropped_code_brings_it_back(
    client: httpx.AsyncClient, offered: Services
) -> None:
    await save(
        offered,
        offer("first", discount={"percent": 20}, maxUses=1),
        offer("always", discount={"percent": 5}),
        offer("spring", code="SPRING10"),
    )
    assert (await booked(client, reservation(("adult",))))["offerTitle"] == "First"
    second = await booked(client, reservation(("adult",), offerCode="SPRING10"))
    assert second["offerTitle"] == "Spring"
    path = f"/octo/bookings/{second['uuid']}"
    dropped = await client.patch(path, json={"offerCode": ""}, headers=auth(capabilities=OFFERS))
    assert dropped.status_code == 200, dropped.text
    assert (dropped.json()["offerTitle"], dropped.json()["pricing"]["retail"]) == ("Always", 2375)


async def test_the_offers_route_lists_what_the_connection_may_use(
    client: httpx.AsyncClient, offered: Services
) -> None:
    listed = (await client.get("/octo/offers", headers=auth(capabilities=OFFERS))).json()
    assert [(o["code"], o["usable"], o["unusableReason"]) for o in listed] == [
        ("SPRING10", True, None),
        ("WEEKEND", True, None),
        ("PAIR", True, None),
        ("GONE", False, "it expired on 2026-05-31T00:00:00+00:00"),
        ("ONCE", True, None),
    ]
    other = (await client.get("/octo/offers", headers=auth(KEY_B, capabilities=OFFERS))).json()
    assert "BONLY" not in [o["code"] for o in other]


async def test_offers_that_name_what_the_catalogue_lacks_are_refused(offered: Services) -> None:
    from berth.domain.errors import BadRequest

    with pytest.raises(BadRequest) as refusal:
        await save(offered, offer("x", appliesTo=[{"product": "nowhere"}], channels=["no-such-connection"]))
    assert refusal.value.extra["problems"] == [
        "offer 'x': channel 'no-such-connection' is neither SHOP nor a connection's id",
        "offer 'x': product 'nowhere' is not in the catalogue",
    ]


# --- availability and calendar ------------------------------------------------------------------


async def test_availability_is_priced_at_the_code_and_names_every_offer(
    client: httpx.AsyncClient, offered: Services
) -> None:
    body = {
        **TOUR,
        "localDate": "2026-06-02",
        "offerCode": "SPRING10",
        "units": [{"id": "adult", "quantity": 2}],
    }
    rows = (await post(client, "/octo/availability", body)).json()
    first = rows[0]
    assert (first["offerCode"], first["offerTitle"], first["offer"]["code"]) == (
        "SPRING10",
        "Spring",
        "SPRING10",
    )
    adult = next(p for p in first["unitPricing"] if p["unitId"] == "adult")
    child = next(p for p in first["unitPricing"] if p["unitId"] == "child")
    assert (adult["retail"], adult["offerDiscount"]["retail"], child["offerDiscount"]) == (2250, 250, None)
    assert (first["pricing"]["retail"], first["pricing"]["offerDiscount"]["retail"]) == (4500, 500)
    reasons = {o["code"]: o["unusableReason"] for o in first["offers"]}
    assert reasons["WEEKEND"] == "only available on Sat and Sun" and reasons["SPRING10"] is None


async def test_a_code_that_does_not_fit_a_day_leaves_it_at_its_prices(
    client: httpx.AsyncClient, offered: Services
) -> None:
    body = {**TOUR, "localDateStart": "2026-06-05", "localDateEnd": "2026-06-07", "offerCode": "WEEKEND"}
    days = (await post(client, "/octo/availability/calendar", body)).json()
    assert [(d["localDate"], d["offerCode"]) for d in days] == [
        ("2026-06-05", None),
        ("2026-06-06", "WEEKEND"),
        ("2026-06-07", "WEEKEND"),
    ]
    assert (
        days[0]["pricingFrom"]["offerDiscount"] is None
        and days[1]["pricingFrom"]["offerDiscount"]["retail"] > 0
    )


@pytest.mark.parametrize(
    ("code", "why"), [("NOPE", "no offer has this code"), ("GONE", "it expired on 2026-05-31T00:00:00+00:00")]
)
async def test_availability_with_a_code_that_cannot_be_sold_is_refused(
    client: httpx.AsyncClient, offered: Services, code: str, why: str
) -> None:
    body = {**TOUR, "localDate": "2026-06-02", "offerCode": code}
    await refused(await post(client, "/octo/availability", body), code, why)
    await refused(
        await post(
            client,
            "/octo/availability/calendar",
            {**TOUR, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-03", "offerCode": code},
        ),
        code,
        why,
    )


async def test_without_the_capability_answers_carry_no_offers(
    client: httpx.AsyncClient, offered: Services
) -> None:
    await save(offered, offer("early", discount={"percent": 5}))
    body = {**TOUR, "localDate": "2026-06-02", "offerCode": "ANYTHING"}
    row = (await post(client, "/octo/availability", body, caps="octo/pricing")).json()[0]
    assert "offerCode" not in row and "offerDiscount" not in row["pricing"]


# --- Ventrata's schemas -------------------------------------------------------------------------


async def test_every_offer_field_fits_ventratas_schema(client: httpx.AsyncClient, offered: Services) -> None:
    booking = await booked(client, reservation(("adult", "child"), offerCode="SPRING10"))
    assert problems("BookingOffers", booking, "octo/offers") == []
    assert problems("Offer", booking["offer"]) == []
    assert [problems("Offer", o) for o in booking["offers"]] == [[]] * len(booking["offers"])
    assert problems("OfferDiscount", booking["pricing"]["offerDiscount"]) == []
    assert problems("OfferDiscount", booking["unitItems"][0]["pricing"]["offerDiscount"]) == []
    row = (
        await post(client, "/octo/availability", {**TOUR, "localDate": "2026-06-02", "offerCode": "SPRING10"})
    ).json()[0]
    assert problems("AvailabilityOffers", row, "octo/offers") == []
    assert problems("OfferDiscount", row["unitPricing"][0]["offerDiscount"]) == []
    day = (
        await post(
            client,
            "/octo/availability/calendar",
            {**TOUR, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-02"},
        )
    ).json()[0]
    assert problems("AvailabilityCalendarOffers", day, "octo/offers") == []
    listed = (await client.get("/octo/offers", headers=auth(capabilities=OFFERS))).json()
    assert [problems("Offer", o) for o in listed] == [[]] * len(listed)


# --- orders (octo/cart) ---------------------------------------------------------------------------


async def test_each_booking_of_an_order_takes_its_own_code(
    client: httpx.AsyncClient, offered: Services
) -> None:
    bookings = [reservation(("adult",), offerCode="SPRING10"), reservation(("adult",))]
    response = await client.post(
        "/octo/orders", json={"bookings": bookings}, headers=auth(capabilities=f"octo/cart, {OFFERS}")
    )
    assert response.status_code == 200, response.text
    order = response.json()
    assert [b["offerCode"] for b in order["bookings"]] == ["SPRING10", None]
    assert (order["pricing"]["retail"], order["offerCombinations"]) == (2250 + 2500, [])
    refused_order = await client.post(
        "/octo/orders",
        json={
            "bookings": [
                reservation(("adult",)),
                reservation(("adult",), offerCode="ONCE"),
                reservation(offerCode="ONCE"),
            ]
        },
        headers=auth(capabilities=f"octo/cart, {OFFERS}"),
    )
    assert refused_order.status_code == 400 and refused_order.json()["error"] == "INVALID_OFFER_CODE"
    assert "ONCE" in refused_order.json()["errorMessage"]


async def test_a_sale_through_an_offer_shows_its_discount_on_the_statement(
    client: httpx.AsyncClient, offered: Services
) -> None:
    booking = await booked(client, reservation(("adult", "child"), offerCode="SPRING10"))
    confirmed = await post(client, f"/octo/bookings/{booking['uuid']}/confirm", {"contact": GUEST})
    assert confirmed.status_code == 200, confirmed.text
    ids = {c["name"]: c["id"] for c in (await client.get("/admin/api/connections", headers=ADMIN)).json()}
    statement = await client.get(
        f"/admin/api/connections/{ids['Reseller A']}/statements/2026-06", headers=ADMIN
    )
    assert statement.status_code == 200, statement.text
    (line,) = statement.json()["lines"]
    assert (line["original"], line["discount"], line["retail"]) == (4000, 250, 3750)
