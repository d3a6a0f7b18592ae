"""What a scan shows the gate of a party: its extras (the party's and each ticket's), its
pickup and its answers, as the lines of the capabilities that keep them (the party's `lines`,
each ticket's `lines` beyond them); and ticket documents' URLs as codes."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from berth.container import Services
from tests.bookings_helpers import GUEST
from tests.builders import catalog, load
from tests.checkin_helpers import scan
from tests.conftest import auth
from tests.extras_helpers import NOON, lunch_cruise
from tests.pickups_helpers import COACH, GRAND, coach_tour
from tests.pickups_helpers import DEPARTURE as COACH_DEPARTURE
from tests.questions_helpers import DEPARTURE as KAYAK_DEPARTURE
from tests.questions_helpers import sea_kayak
from tests.test_questions import answers
from tests.tickets_helpers import CRUISE as TICKETED
from tests.tickets_helpers import DEPARTURE as TICKETED_DEPARTURE
from tests.tickets_helpers import cruise_booking, tickets_catalog

EVERYTHING = "octo/extras, octo/pickups, octo/questions"


async def confirmed(client: httpx.AsyncClient, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    held = await client.post(
        "/octo/bookings", json={"uuid": str(uuid.uuid4()), **body}, headers=auth(capabilities=EVERYTHING)
    )
    assert held.status_code == 200, held.text
    done = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/confirm", json={"contact": GUEST, **extra},
        headers=auth(capabilities=EVERYTHING),
    )  # fmt: skip
    assert done.status_code == 200, done.text
    result: dict[str, Any] = done.json()
    return result


async def test_the_gate_sees_extras_pickup_and_answers(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, catalog(lunch_cruise(), coach_tour(), sea_kayak()))
    lunch = await confirmed(
        client,
        {
            "productId": "lunch-cruise", "optionId": "DEFAULT", "availabilityId": NOON,
            "unitItems": [{"unitId": "guest", "extraItems": [{"extraId": "lunch"}]}, {"unitId": "guest"}],
            "extraItems": [{"extraId": "photos"}],
        },
    )  # fmt: skip
    seen = await scan(client, lunch["supplierReference"], gate=None)
    party = seen["booking"]
    assert party["lines"] == [
        {
            "label": "Extras",
            "text": "1 \N{MULTIPLICATION SIGN} Photo package, 1 \N{MULTIPLICATION SIGN} Two-course lunch",
        }
    ]
    # A ticket's extras, its own first, then the party's it shares (as its ticket prints them).
    assert [u["lines"] for u in party["units"]] == [
        [
            {
                "label": "Extras",
                "text": "1 \N{MULTIPLICATION SIGN} Two-course lunch, 1 \N{MULTIPLICATION SIGN} Photo package",
            }
        ],
        [{"label": "Extras", "text": "1 \N{MULTIPLICATION SIGN} Photo package"}],
    ]

    coach = await confirmed(
        client,
        {
            **COACH,
            "availabilityId": COACH_DEPARTURE,
            "unitItems": [{"unitId": "adult"}],
            "pickupPointId": GRAND,
        },
    )
    pickup = (await scan(client, coach["supplierReference"], gate=None))["booking"]["lines"]
    # The pickup window in the departure's own zone (Europe/London: BST in June).
    assert pickup == [
        {
            "label": "Pickup",
            "text": "Grand Hotel, 1 Princes Street, EH2 2EQ, Edinburgh, GB, 09:15 BST to 09:30 BST",
        },
        {"label": "Directions", "text": "Wait at the main entrance"},
    ]

    kayak = await confirmed(
        client,
        {
            "productId": "sea-kayak", "optionId": "DEFAULT", "availabilityId": KAYAK_DEPARTURE,
            "unitItems": [{"unitId": "paddler", "questionAnswers": answers(born="1990-04-01")}],
            "questionAnswers": answers(waiver="accept", swim="yes", diet="vegan"),
        },
    )  # fmt: skip
    given = (await scan(client, kayak["supplierReference"], gate=None))["booking"]
    assert {"label": "Can everyone in the party swim?", "text": "yes"} in given["lines"]
    assert [u["lines"] for u in given["units"]] == [[{"label": "Date of birth", "text": "1990-04-01"}]]


async def test_ticket_urls_are_codes(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, tickets_catalog())
    held = await client.post(
        "/octo/bookings", json=cruise_booking({"unitId": "adult"}, {"unitId": "adult"}), headers=auth()
    )
    assert held.status_code == 200, held.text
    booking = (
        await client.post(
            f"/octo/bookings/{held.json()['uuid']}/confirm", json={"contact": GUEST}, headers=auth()
        )
    ).json()

    def pdf_url(ticket: dict[str, Any]) -> str:
        found = [o["deliveryValue"] for o in ticket["deliveryOptions"] if o["deliveryFormat"] == "PDF_URL"]
        return str(found[0])

    gate = {**TICKETED, "availabilityId": TICKETED_DEPARTURE}
    second = booking["unitItems"][1]
    # The day before the departure: staff admit the tickets anyway.
    one = await scan(client, f" {pdf_url(second['ticket'])} ", gate=gate, admitAnotherDay=True)
    assert one["result"] == "ADMITTED" and one["admitted"] == [second["uuid"]]
    rest = await scan(client, pdf_url(booking["voucher"]) + "?download=1", gate=gate, admitAnotherDay=True)
    assert rest["admitted"] == [booking["unitItems"][0]["uuid"]] and rest["booking"]["status"] == "REDEEMED"
    base = pdf_url(booking["voucher"]).rsplit("/tickets/", 1)[0]
    unknown = await scan(client, f"{base}/tickets/{'x' * 43}.pdf", gate=gate)
    assert unknown["result"] == "UNKNOWN_CODE"
