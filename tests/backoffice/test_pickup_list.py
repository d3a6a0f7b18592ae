"""The manifest's pickup list (octo/pickups): who is collected where, by pickup time, and the
same list as CSV for the driver."""

from __future__ import annotations

import csv
import io
import uuid

import httpx

from berth.container import Services
from tests.backoffice.helpers import sign_in, text_of
from tests.backoffice.test_pages import manifest_path
from tests.bookings_helpers import GUEST, SLOT
from tests.builders import load
from tests.conftest import auth
from tests.pickups_helpers import BRIDGE, COACH, DEPARTURE, GRAND, MEET, pickups_catalog


async def book(client: httpx.AsyncClient, product: dict[str, str], name: str, **pickup: str) -> None:
    body = {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": DEPARTURE,
        "unitItems": [{"unitId": "adult"}],
    }
    headers = auth(capabilities="octo/pickups")
    held = (await client.post("/octo/bookings", json={**body, **pickup}, headers=headers)).json()
    contact = {**GUEST, "firstName": name, "phoneNumber": "+447700900002"}
    confirmed = await client.post(
        f"/octo/bookings/{held['uuid']}/confirm", json={"contact": contact}, headers=headers
    )
    assert confirmed.status_code == 200, confirmed.text


async def test_the_manifest_lists_pickups_by_time(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, pickups_catalog())
    await sign_in(client)
    await book(client, COACH, "Grace", pickupPointId=BRIDGE)
    await book(client, COACH, "Alan", pickupPointId=GRAND)
    page = await client.get(manifest_path(DEPARTURE, "highland-coach"))
    assert page.status_code == 200
    text = text_of(page.text)
    assert "Pickups Pickup list (CSV)" in text
    assert (
        "09:15-09:30 Grand Hotel 1 Princes Street, EH2 2EQ, Edinburgh, GB Alan Lovelace +447700900002 1"
        in text
    )
    assert text.index("Grand Hotel 1 Princes") < text.index("09:40-09:45 North Bridge Grace Lovelace")

    download = await client.get(manifest_path(DEPARTURE, "highland-coach") + "/pickups.csv")
    assert download.status_code == 200 and download.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(download.content.decode("utf-8-sig"))))
    assert [r["leadGuest"] for r in rows] == ["Alan Lovelace", "Grace Lovelace"]

    # An option with pickups but none asked for yet, and one without pickups at all.
    meet = text_of((await client.get(manifest_path(DEPARTURE, "highland-coach", MEET["optionId"]))).text)
    assert "Nobody booked on this departure has asked for pickup yet." in meet
    assert "Pickups" not in text_of((await client.get(manifest_path(SLOT))).text)
