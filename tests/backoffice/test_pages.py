"""What the back office's pages show: dashboard, catalogue, bookings search, a booking, a
manifest; and what they are served with."""

from __future__ import annotations

import re
import uuid
from urllib.parse import quote

import httpx

from berth.container import Services
from tests.backoffice.helpers import sign_in, text_of
from tests.bookings_helpers import GUEST, SLOT, confirm, reservation, reserve
from tests.conftest import KEY_B, Clock, auth
from tests.every_capability import every_capability_catalog

KAYAK_SLOT = "2026-06-06T18:00:00+01:00"


def manifest_path(availability_id: str, product: str = "thames-sightseeing", option: str = "DEFAULT") -> str:
    return f"/admin/slots/{product}/{option}/{quote(availability_id, safe='')}"


async def pending_kayak(client: httpx.AsyncClient) -> dict[str, str]:
    body = {
        **reservation(),
        "productId": "sunset-kayak",
        "availabilityId": KAYAK_SLOT,
        "unitItems": [{"unitId": "paddler"}, {"unitId": "paddler"}],
    }
    held = await reserve(client, body)
    response = await client.post(
        f"/octo/bookings/{held['uuid']}/confirm",
        json={"contact": {**GUEST, "phoneNumber": "+447700900001"}},
        headers=auth(),
    )
    assert response.json()["status"] == "PENDING"
    return held


async def test_dashboard_shows_today_and_tomorrow_with_occupancy(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booking = await reserve(client)  # 2 adults tomorrow (2 June) at 10:00
    await confirm(client, booking["uuid"])
    await pending_kayak(client)
    page = await client.get("/admin")
    text = text_of(page.text)
    assert "Today Mon 1 Jun 2026" in text and "Tomorrow Tue 2 Jun 2026" in text
    today, tomorrow = text.split("Tomorrow Tue 2 Jun 2026")
    assert today.count("Thames Sightseeing") == 4  # the museum is closed on Mondays
    assert "Tower Of Stories" in tomorrow and "All day (09:30-17:30)" in tomorrow
    rows = re.findall(r"<tr>.*?</tr>", page.text, re.S)
    booked = next(text_of(row) for row in rows if manifest_path(SLOT) in row)
    assert booked.startswith("10:00 Thames Sightseeing")
    assert booked.endswith("AVAILABLE 2 of 20 2/20 Manifest")
    assert "1 booking waits for your decision" in text
    assert "Time BST" in text  # the products' zone, in its abbreviation


def departures(page: str) -> tuple[list[str], list[str]]:
    """Today's rows: (those folded away as departed, those still to come)."""
    today = page.split('<section class="day">')[1]
    folded = (
        today.split('<details class="departed">')[1].split("</details>")[0] if "<details" in today else ""
    )
    coming = today.replace(folded, "")
    return (
        [text_of(r) for r in re.findall(r"<tr>.*?</tr>", folded, re.S) if "<td" in r],
        [text_of(r) for r in re.findall(r"<tr>.*?</tr>", coming, re.S) if "<td" in r],
    )


async def test_dashboard_in_the_evening_folds_away_what_has_departed(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    # At 09:00 in London: a party of two for the 10:00 cruise, a family with an infant for the
    # 13:00 harbour cruise (3 places, 4 guests), and a test booking that holds nothing.
    morning = await reserve(client, reservation(availability_id="2026-06-01T10:00:00+01:00"))
    await confirm(client, morning["uuid"])
    family = {
        "productId": "harbour-cruise",
        "optionId": "DEFAULT",
        "availabilityId": "2026-06-01T13:00:00+01:00",
        "unitItems": [{"unitId": u} for u in ("adult", "adult", "child", "infant")],
    }
    await confirm(client, (await reserve(client, family))["uuid"])
    clock.advance(hours=10, minutes=30)  # 19:30 in London: everything today has left

    page = (await client.get("/admin")).text
    text = text_of(page)
    assert '<details class="departed">' in page and '<details class="departed" open' not in page
    folded, coming = departures(page)
    # 4 Thames cruises, 7 bike hires, 3 harbour cruises, and the museum and city pass (shut on Mondays)
    assert len(folded) == 16 and coming == []
    assert folded[2].startswith("09:00 City Bike Hire")
    assert any(r.startswith("10:00 Thames Sightseeing") and "2/20" in r for r in folded)
    today, tomorrow = text.split("Tomorrow Tue 2 Jun 2026")
    # Capacity: 4 x 20 on the Thames, 5 x 12 + 2 x 4 bikes, 27 + 15 + 27 harbour seats (the museum
    # and city pass are shut, and sell nothing).
    assert "Today Mon 1 Jun 2026 2 bookings · 6 guests · 5 of 217 places sold" in today
    assert "Departed today: 16 departures · 2 bookings · 6 guests" in today
    assert "Nothing more departs today." in today
    # Tomorrow: the box office's three parties seated on the first harbour cruise (13 people, 12 places).
    assert "3 bookings · 13 guests · 12 of" in tomorrow and "Departed" not in tomorrow


async def test_day_totals_when_a_departure_has_no_limit(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    catalog = every_capability_catalog()
    cruise = catalog.products[0]
    daytime = cruise.options[0]
    freesale = daytime.model_copy(
        update={"schedules": tuple(s.model_copy(update={"capacity": None}) for s in daytime.schedules)}
    )
    cruise = cruise.model_copy(update={"allow_freesale": True, "options": (freesale, *cruise.options[1:])})
    await office.catalog.replace(catalog.model_copy(update={"products": (cruise, *catalog.products[1:])}))
    await confirm(client, (await reserve(client))["uuid"])
    text = text_of((await client.get("/admin")).text)
    assert (
        "Tomorrow Tue 2 Jun 2026 4 bookings · 15 guests · 14 places sold (some departures have no limit)"
        in text
    )


async def test_dashboard_in_the_morning_has_nothing_departed(
    client: httpx.AsyncClient, csrf: str, office: Services, clock: Clock
) -> None:
    clock.advance(hours=-2)  # 07:00 in London
    page = (await client.get("/admin")).text
    assert "<details" not in page
    folded, coming = departures(page)
    assert folded == [] and len(coming) == 16


async def test_dashboard_of_an_empty_catalogue_says_how_to_fill_it(
    client: httpx.AsyncClient, services: Services
) -> None:
    await sign_in(client)
    text = text_of((await client.get("/admin")).text)
    assert "The catalogue is empty" in text and "berth catalog import FILE" in text


async def test_catalogue_shows_options_units_schedules_closed_dates_and_prices(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    listing = text_of((await client.get("/admin/catalog")).text)
    assert "Thames Sightseeing" in listing and "Sunset Kayak" in listing
    assert "Confirmed on request" in listing and "Priced per booking in EUR" in listing
    cruise = text_of((await client.get("/admin/catalog/thames-sightseeing")).text)
    assert "Every day 10:00, 12:00, 14:00, 16:00 20" in cruise
    assert "2026-04-01 to 2026-10-31 Thu, Fri, Sat 19:30 30" in cruise
    assert "Fri 25 Dec 2026" in cruise
    assert "Adult adult Adult 16-100 1 25.00 EUR 28.00 EUR net 20.00 EUR 22.00 GBP net 17.60 GBP" in cruise
    kayak = text_of((await client.get("/admin/catalog/sunset-kayak")).text)
    assert "Price per booking 240.00 EUR net 192.00 EUR" in kayak
    museum = text_of((await client.get("/admin/catalog/tower-of-stories")).text)
    assert "Tue, Wed, Thu, Fri, Sat, Sun 09:30-17:30 300" in museum
    assert "Family family Family 0-100 4 48.00 EUR" in museum
    bikes = text_of((await client.get("/admin/catalog/city-bike-hire")).text)
    assert "Rental durations" in bikes and "3 days 3-days 3 days x 2.5" in bikes
    assert "1 day 1-day · default 1 day x 1" in bikes
    assert "Half day 4 hours half-day · default 4 hours x 0.6" in bikes  # the e-bike's first
    export = await client.get("/admin/catalog.yaml")
    assert export.headers["content-type"].startswith("application/yaml")
    assert "thames-sightseeing" in export.text
    missing = await client.get("/admin/catalog/nope")
    assert missing.status_code == 404 and "The product 'nope' does not exist" in text_of(missing.text)


async def test_bookings_search_filters_by_every_field(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    mine = await reserve(client, reservation(resellerReference="ALPHA-1"))
    await confirm(client, mine["uuid"])
    theirs = await reserve(
        client,
        reservation(resellerReference="BETA-1", availability_id="2026-06-03T12:00:00+01:00"),
        key=KEY_B,
    )

    async def references(**params: str) -> list[str]:
        response = await client.get("/admin/bookings", params=params)
        assert response.status_code == 200, response.text
        return re.findall(r'<a href="/admin/bookings/[^"]+"><strong>(\w+)</strong>', response.text)

    seated = 3  # the box office's parties on the first harbour cruise
    assert len(await references()) == 2 + seated
    assert await references(reference="alpha-1") == []  # reseller references match exactly
    assert await references(reference="ALPHA-1") == [mine["supplierReference"]]
    assert await references(reference=theirs["supplierReference"].lower()) == [theirs["supplierReference"]]
    assert await references(reference=theirs["uuid"]) == [theirs["supplierReference"]]
    assert await references(date="2026-06-03", product="thames-sightseeing") == [theirs["supplierReference"]]
    assert await references(status="ON_HOLD") == [theirs["supplierReference"]]
    connections = (
        await client.get("/admin/api/connections", headers={"Authorization": "Bearer demo-admin"})
    ).json()
    reseller_b = next(c["id"] for c in connections if c["name"] == "Reseller B")
    assert await references(connection=reseller_b) == [theirs["supplierReference"]]
    assert len(await references(product="harbour-cruise", status="CONFIRMED")) == seated


async def test_bookings_search_paginates(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    for index in range(26):
        slot = SLOT if index < 13 else "2026-06-02T12:00:00+01:00"
        await reserve(
            client, reservation(units=("adult",), availability_id=slot, resellerReference=f"P{index:02}")
        )
    first = await client.get("/admin/bookings", params={"product": "thames-sightseeing"})
    text = text_of(first.text)
    assert "26 bookings, 1-25 shown" in text and "Page 1 of 2" in text
    assert 'href="/admin/bookings?product=thames-sightseeing&amp;page=2"' in first.text
    second = await client.get("/admin/bookings", params={"product": "thames-sightseeing", "page": "2"})
    assert "26 bookings, 26-26 shown" in text_of(second.text) and "Page 2 of 2" in text_of(second.text)
    shown = re.findall(r"<br><span class=\"muted\">(P\d\d)</span>", first.text + second.text)
    assert sorted(shown) == [f"P{index:02}" for index in range(26)]
    beyond = text_of(
        (await client.get("/admin/bookings", params={"product": "thames-sightseeing", "page": "9"})).text
    )
    assert "go to the first page" in beyond
    bad = await client.get("/admin/bookings", params={"page": "0"})
    assert bad.status_code == 400 and "That address is not valid" in text_of(bad.text)


async def test_bookings_search_explains_empty_results(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    nothing = text_of((await client.get("/admin/bookings", params={"reference": "NOPE"})).text)
    assert "No booking matches" in nothing and "clear them" in nothing
    bad_date = text_of((await client.get("/admin/bookings", params={"date": "June 2nd"})).text)
    assert "The date 'June 2nd' is not a date like 2026-06-02." in bad_date


async def test_bookings_page_without_bookings_says_where_they_come_from(
    client: httpx.AsyncClient, services: Services
) -> None:
    await sign_in(client)
    text = text_of((await client.get("/admin/bookings")).text)
    assert "No bookings yet" in text and "Connections" in text


async def test_booking_detail_shows_the_booking_and_its_history(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booking = await reserve(
        client, reservation(units=("adult", "child"), resellerReference="R-42", notes="Pushchair")
    )
    await confirm(client, booking["uuid"])
    page = await client.get(f"/admin/bookings/{booking['id']}")
    text = text_of(page.text)
    assert f"Booking {booking['supplierReference']} CONFIRMED" in text
    assert "When Tue 2 Jun 2026 10:00 BST" in text
    assert "Units 1 x Adult, 1 x Child Guests 2 Places 2" in text
    assert "Price 40.00 EUR net 32.00 EUR" in text
    assert "Lead guest Ada Lovelace ada@example.com" in text
    assert "Connection Reseller A" in text and "R-42" in text and "Pushchair" in text
    # Every time in the product's zone, labelled (the test clock is 08:00 UTC).
    assert "Created 1 Jun 2026 09:00 BST" in text and "Confirmed 1 Jun 2026 09:00 BST" in text
    assert "1 Jun 2026 09:00 BST Reserved reseller ON HOLD availabilityId: 2026-06-02T10:00:00+01:00" in text
    assert "1 Jun 2026 09:00 BST Confirmed reseller CONFIRMED" in text
    assert "UTC" not in text
    assert "Redeem: guests have arrived" in text and "Cancel booking" in text
    assert "Cancel even though the cutoff has passed" not in text  # still before the cutoff
    assert f'href="{manifest_path(SLOT)}"' in page.text
    missing = await client.get(f"/admin/bookings/{uuid.uuid4()}")
    assert missing.status_code == 404 and "Not found" in text_of(missing.text)


async def test_manifest_lists_who_is_booked(client: httpx.AsyncClient, csrf: str, office: Services) -> None:
    ada = await reserve(client, reservation(units=("adult", "child"), resellerReference="ADA"))
    await confirm(client, ada["uuid"])
    grace = await reserve(client, reservation(units=("adult",)), key=KEY_B)
    await confirm(
        client,
        grace["uuid"],
        key=KEY_B,
        contact={"firstName": "Grace", "lastName": "Hopper", "emailAddress": "g@example.com"},
    )
    gone = await reserve(client, reservation(units=("adult",)))
    await client.post(f"/octo/bookings/{gone['uuid']}/cancel", headers=auth())
    elsewhere = await reserve(client, reservation(availability_id="2026-06-02T12:00:00+01:00"))

    page = await client.get(manifest_path(SLOT))
    assert page.status_code == 200
    text = text_of(page.text)
    expected, others = text.split("Not travelling")
    assert "Date Tue 2 Jun 2026 Time 10:00 BST" in expected
    assert "Guests 3 people in 2 bookings Places sold 3 of 20 3/20" in expected
    assert expected.index("Ada Lovelace") < expected.index("Grace Hopper")  # by lead name
    assert "Lead guest Units Guests Places Status" in expected
    assert "Ada Lovelace ada@example.com 1 x Adult, 1 x Child 2 guests · 2 places 2 2 CONFIRMED" in expected
    assert ada["supplierReference"] in expected and "ADA" in expected
    for item in ada["unitItems"]:
        assert item["supplierReference"] in expected
    assert "Reseller B" in expected
    assert gone["supplierReference"] in others and "CANCELLED" in others
    assert elsewhere["supplierReference"] not in text


async def test_manifest_counts_guests_and_places_apart(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    # The box office seats three parties on tomorrow's first harbour cruise; Grace Hopper's has an
    # infant on a lap (a guest who takes no place).
    harbour = text_of((await client.get(manifest_path(SLOT, "harbour-cruise"))).text)
    assert "Guests 13 people in 3 bookings Places sold 12 of 27 12/27" in harbour
    assert "an infant on a lap is a guest who takes no place" in harbour
    assert "Grace Hopper 2 x Adult, 1 x Child, 1 x Infant 4 guests · 3 places 4 3 CONFIRMED" in harbour
    assert "In all : 13 guests · 12 places 13 12" in harbour  # the table's foot (a phone's line first)
    # A family ticket is one ticket for four guests, who take four places.
    body = {
        "productId": "tower-of-stories",
        "optionId": "DEFAULT",
        "availabilityId": "2026-06-02T00:00:00+01:00",
        "unitItems": [{"unitId": "family"}, {"unitId": "child"}],
    }
    await confirm(client, (await reserve(client, body))["uuid"])
    museum = text_of((await client.get(manifest_path("2026-06-02T00:00:00+01:00", "tower-of-stories"))).text)
    assert "Guests 5 people in 1 booking Places sold 5 of 300" in museum
    assert "1 x Family, 1 x Child 5 guests · 5 places 5 5 CONFIRMED" in museum


async def test_dates_follow_the_products_locale(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    catalog = every_capability_catalog()
    cruise = catalog.products[0]
    german = cruise.model_copy(update={"locale": "de-DE", "content": {"de-DE": cruise.content["en-GB"]}})
    await office.catalog.replace(catalog.model_copy(update={"products": (german, *catalog.products[1:])}))
    booking = await reserve(client)
    await confirm(client, booking["uuid"])
    text = text_of((await client.get(f"/admin/bookings/{booking['id']}")).text)
    assert "When Di., 2. Juni 2026 10:00 BST" in text and "Created 1. Juni 2026 09:00 BST" in text
    assert "Di., 2. Juni 2026 10:00 BST" in text_of((await client.get("/admin/bookings")).text)
    assert "Date Di., 2. Juni 2026" in text_of((await client.get(manifest_path(SLOT))).text)
    # The supplier's pages follow the locale most products declare (still en-GB).
    assert "Today Mon 1 Jun 2026" in text_of((await client.get("/admin")).text)
    connections = text_of((await client.get("/admin/connections")).text)
    assert "1 Jun 2026 09:00 BST" in connections


async def test_manifest_of_an_empty_or_unknown_slot(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    empty = text_of((await client.get(manifest_path("2026-06-02T16:00:00+01:00"))).text)
    assert "Nobody is booked on this departure yet" in empty and "Not travelling" not in empty
    day = text_of((await client.get(manifest_path("2026-06-02T00:00:00+01:00", "tower-of-stories"))).text)
    assert "All day (09:30-17:30 BST)" in day and "Nobody is booked on this day yet" in day
    for path in (
        manifest_path("2026-06-02T11:00:00+01:00"),
        manifest_path(SLOT, "nope"),
        manifest_path(SLOT, option="nope"),
    ):
        assert (await client.get(path)).status_code == 404, path


async def test_pages_are_private_and_load_only_berths_own_files(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    page = await client.get("/admin")
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assets = re.findall(r'(?:href|src)="(/admin/static/[^"]+)"', page.text)
    assert len(assets) == 2
    assert not re.search(r'(?:href|src)="(?:https?:)?//', page.text)
    for asset in assets:
        response = await client.get(asset.replace("&amp;", "&"))
        assert response.status_code == 200 and "max-age" in response.headers["cache-control"]
        again = await client.get(asset, headers={"If-None-Match": response.headers["etag"]})
        assert again.status_code == 304
    assert (await client.get("/admin/static/nope.css")).status_code == 404
    schema = (await client.get("/openapi.json")).text
    assert "/admin/sign-in" not in schema and "/admin/bookings/" not in schema
