"""The manifest's answers (octo/questions): each booking's, and each ticket's."""

from __future__ import annotations

import uuid

import httpx

from berth.container import Services
from tests.backoffice.helpers import sign_in, text_of
from tests.backoffice.test_pages import manifest_path
from tests.bookings_helpers import GUEST, SLOT
from tests.builders import load
from tests.conftest import auth
from tests.questions_helpers import BORN, DEPARTURE, KAYAK, SWIM, WAIVER, questions_catalog


async def test_the_manifest_shows_the_answers(client: httpx.AsyncClient, services: Services) -> None:
    await load(services, questions_catalog())
    await sign_in(client)
    body = {
        "uuid": str(uuid.uuid4()), **KAYAK, "availabilityId": DEPARTURE,
        "unitItems": [{"unitId": "paddler", "questionAnswers": [{"questionId": BORN, "value": "1990-04-01"}]}],
        "questionAnswers": [{"questionId": WAIVER, "value": "accept"}, {"questionId": SWIM, "value": "yes"}],
    }  # fmt: skip
    held = await client.post("/octo/bookings", json=body, headers=auth(capabilities="octo/questions"))
    assert held.status_code == 200, held.text
    ticket = held.json()["unitItems"][0]["supplierReference"]
    await client.post(f"/octo/bookings/{body['uuid']}/confirm", json={"contact": GUEST}, headers=auth())

    text = text_of((await client.get(manifest_path(DEPARTURE, "sea-kayak"))).text)
    assert "Answers Reference Lead guest For Question Answer" in text
    assert (
        "Ada Lovelace Booking I accept the risks of sea kayaking accept Booking Can everyone in the party swim? yes"
        in text
    )
    assert f"{ticket} Paddler Date of birth 1990-04-01" in text
    assert "Answers Reference" not in text_of((await client.get(manifest_path(SLOT))).text)
