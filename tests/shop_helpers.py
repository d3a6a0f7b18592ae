"""The web shop's test catalogue (every capability a guest meets: the booking tests' cruise,
kayak trip and museum, the lunch cruise's extras, the coach tour's pickups, the sea kayak's
questions, the bike hire's durations, the harbour cruise's boats, and a city pass, a package
of the cruise, the museum and the kayak trip), the shop opened on it, and what a guest's
browser sends: the forms of its pages, with their hidden fields, and the card it gives."""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import unescape
from urllib.parse import quote

import httpx

from berth.container import Services
from berth.domain.catalog import Catalog
from berth.domain.staff import COMMAND_LINE
from berth.fake_stripe import FakeStripe
from tests.bookings_helpers import booking_products
from tests.builders import catalog, load
from tests.extras_helpers import lunch_cruise
from tests.packages_helpers import city_pass
from tests.pickups_helpers import coach_tour
from tests.questions_helpers import sea_kayak
from tests.rentals_helpers import bike_hire
from tests.resources_helpers import resource_products

SLOT = "2026-06-02T10:00:00+01:00"  # the cruise's first departure on the day the tests book
DAY = "2026-06-02"
NAME = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}


def shop_catalog() -> Catalog:
    cruise, kayak, museum = booking_products()
    cruise = {**cruise, "deliveryFormats": ["QRCODE", "PDF_URL"]}  # its tickets a PDF too
    return catalog(
        cruise,
        kayak,
        museum,
        lunch_cruise(),
        coach_tour(),
        sea_kayak(),
        bike_hire(),
        city_pass(),
        *resource_products(),
    )


async def open_shop(services: Services) -> Services:
    """The shop's catalogue loaded, the reseller connections made, and the shop opened."""
    await load(services, shop_catalog())
    await services.shop.open(COMMAND_LINE)
    return services


def hidden_fields(html: str) -> dict[str, str]:
    """The hidden fields of a page's forms (the last of each name)."""
    found = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html)
    return {name: unescape(value) for name, value in found}


def book_url(product: str, party: Mapping[str, int], slot: str = SLOT) -> str:
    units = "".join(f"&unit-{unit}={count}" for unit, count in party.items())
    return f"/shop/{product}/book?option=DEFAULT&slot={quote(slot)}{units}"


async def hold(client: httpx.AsyncClient, product: str = "thames-sightseeing", /, *,
               form: dict[str, str] | None = None, slot: str = SLOT, **units: int) -> httpx.Response:  # fmt: skip
    """The booking form of `product`'s departure for the party, sent with `form`'s choices."""
    page = await client.get(book_url(product, units or {"adult": 2}, slot))
    assert page.status_code == 200, page.text
    return await client.post(f"/shop/{product}/book", data={**hidden_fields(page.text), **(form or {})})


async def held(client: httpx.AsyncClient, adults: int = 2) -> str:
    """A hold of the cruise's SLOT for `adults` adults: its checkout path."""
    answer = await hold(client, adult=adults)
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


async def with_details(client: httpx.AsyncClient, checkout: str, **contact: str) -> httpx.Response:
    page = await client.get(checkout)
    fields = {**hidden_fields(page.text), **NAME, "terms": "yes", **contact}
    return await client.post(checkout, data=fields)


def problems(html: str) -> list[str]:
    """The messages a page shows next to its fields."""
    return [unescape(m) for m in re.findall(r'<div class="problem"[^>]*>(?:<p>([^<]*)</p>)', html)]


async def pay_with(
    client: httpx.AsyncClient, checkout: str, localstripe: FakeStripe, number: str
) -> dict[str, str]:
    """What the payment page's script does: the card given to Stripe, then Berth asked to charge it."""
    pay = await client.get(checkout + "/pay")
    setup = re.search(r'data-setup="([^"]+)"', pay.text)
    assert setup is not None, pay.text
    secret = setup.group(1)
    card = {"number": number, "exp_month": "12", "exp_year": "2034", "cvc": "123"}
    async with httpx.AsyncClient() as stripe_js:
        given = await stripe_js.post(
            f"{localstripe.url}/v1/setup_intents/{secret.split('_secret_')[0]}/confirm",
            json={"key": "pk_test_berth_localstripe", "client_secret": secret, "use_stripe_sdk": True,
                  "payment_method_data": {"type": "card", "card": card}},
        )  # fmt: skip
    assert given.status_code == 200, given.text
    charged = await client.post(checkout + "/charge", data={"csrf": hidden_fields(pay.text)["csrf"]})
    assert charged.headers["content-type"] == "application/json"
    answer: dict[str, str] = charged.json()
    return answer
