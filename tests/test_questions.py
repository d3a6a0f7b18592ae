"""octo/questions through the OCTO routes, on the questions tests' sea kayak trip
(`tests.questions_helpers`). Clock: 2026-06-01T08:00Z."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from berth.container import Services
from tests.bookings_helpers import GUEST, reservation
from tests.builders import load
from tests.conftest import auth
from tests.questions_helpers import (
    BORN,
    DEPARTURE,
    DIET,
    GUIDED,
    KAYAK,
    NOTES,
    PHOTOS,
    SWIM,
    WAIVER,
    WEIGHT,
    questions_catalog,
)  # fmt: skip
from tests.receivers import receiver
from tests.test_bookings import count_bookings
from tests.test_webhooks import drain, subscribe

QUESTIONS = "octo/questions"


@pytest.fixture
async def kayaks(services: Services) -> Services:
    return await load(services, questions_catalog())


def answers(**given: str | None) -> list[dict[str, Any]]:
    ids = {"waiver": WAIVER, "swim": SWIM, "born": BORN, "photos": PHOTOS, "weight": WEIGHT, "diet": DIET,
           "notes": NOTES}  # fmt: skip
    return [{"questionId": ids[name], "value": value} for name, value in given.items()]


def trip(*items: dict[str, Any], product: dict[str, str] = KAYAK, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": DEPARTURE,
        "unitItems": [{"unitId": "paddler", **item} for item in items] or [{"unitId": "paddler"}],
        **extra,
    }


async def send(
    client: httpx.AsyncClient, method: str, path: str, body: Any, capabilities: str | None = QUESTIONS
) -> httpx.Response:
    return await client.request(method, path, json=body, headers=auth(capabilities=capabilities))


async def reserved(
    client: httpx.AsyncClient, body: dict[str, Any], capabilities: str | None = QUESTIONS
) -> Any:
    response = await send(client, "POST", "/octo/bookings", body, capabilities)
    assert response.status_code == 200, response.text
    return response.json()


async def confirm(
    client: httpx.AsyncClient, booking_uuid: str, capabilities: str | None = QUESTIONS, **extra: Any
) -> httpx.Response:
    body = {"contact": GUEST, **extra}
    return await send(client, "POST", f"/octo/bookings/{booking_uuid}/confirm", body, capabilities)


def values(answered: list[dict[str, Any]]) -> dict[str, str | None]:
    return {a["question"]["title"]: a["value"] for a in answered}


async def refused(response: httpx.Response, message: str, code: str = "BAD_REQUEST") -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    assert (body["error"], body["errorMessage"]) == (code, message)
    return body


# --- fields ------------------------------------------------------------------------------------


async def test_fields_absent_without_the_capability(client: httpx.AsyncClient, kayaks: Services) -> None:
    product = (await client.get("/octo/products/sea-kayak", headers=auth())).json()
    option = product["options"][0]
    assert "questions" not in product and "questions" not in option and "questions" not in option["units"][0]
    booking = await reserved(client, trip({"questionAnswers": answers(born="1990-04-01")},
                                          questionAnswers=answers(waiver="accept", swim="yes")))  # fmt: skip
    plain = (await send(client, "GET", f"/octo/bookings/{booking['uuid']}", None, None)).json()
    assert "questionAnswers" not in plain and "questionAnswers" not in plain["unitItems"][0]


async def test_questions_on_options_and_units(client: httpx.AsyncClient, kayaks: Services) -> None:
    response = await client.get("/octo/products/sea-kayak", headers=auth(capabilities=QUESTIONS))
    assert response.headers["Octo-Capabilities"] == QUESTIONS
    product = response.json()
    assert "questions" not in product  # the schema places them on options and units
    default, guided = product["options"]
    # Per booking: the product's, then the option's; per unit item: the per-unit ones, then the unit's.
    assert [q["id"] for q in default["questions"]] == [WAIVER, SWIM, DIET, NOTES]
    assert [q["id"] for q in default["units"][0]["questions"]] == [BORN, PHOTOS, WEIGHT]
    assert [q["id"] for q in guided["questions"]] == [WAIVER] and guided["units"][0]["questions"] == []
    assert default["questions"][0] == {
        "id": WAIVER, "label": "I accept the risks of sea kayaking", "title": "I accept the risks of sea kayaking",
        "shortDescription": None, "description": None, "internalName": "waiver", "inputType": "radio",
        "maxLength": None, "required": True, "selectOptions": [{"label": "Accept", "value": "accept"}],
        "coverImageUrl": None,
    }  # fmt: skip
    notes = default["questions"][3]
    assert (notes["inputType"], notes["maxLength"], notes["required"], notes["selectOptions"]) == (
        "textArea", 20, False, [],
    )  # fmt: skip
    plain = (
        await client.get("/octo/products/thames-sightseeing", headers=auth(capabilities=QUESTIONS))
    ).json()
    assert plain["options"][0]["questions"] == [] and plain["options"][0]["units"][0]["questions"] == []


# --- answering ---------------------------------------------------------------------------------


async def test_answers_are_echoed_per_booking_and_per_unit_item(
    client: httpx.AsyncClient, kayaks: Services
) -> None:
    booking = await reserved(
        client,
        trip({"questionAnswers": answers(born="1990-04-01", photos="ada@example.com")},
             {"questionAnswers": answers(born="1992-12-24", weight="72.5")},
             questionAnswers=answers(swim="yes", diet="vegan", notes="  left-handed  ")),
    )  # fmt: skip
    assert values(booking["questionAnswers"]) == {
        "I accept the risks of sea kayaking": None, "Can everyone in the party swim?": "yes", "Lunch": "vegan",
        "Anything we should know?": "left-handed",
    }  # fmt: skip
    assert booking["questionAnswers"][1]["questionId"] == SWIM
    first, second = (values(item["questionAnswers"]) for item in booking["unitItems"])
    assert first == {
        "Date of birth": "1990-04-01",
        "Email for the photos": "ada@example.com",
        "Weight in kg": None,
    }
    assert second == {"Date of birth": "1992-12-24", "Email for the photos": None, "Weight in kg": "72.5"}
    again = (
        await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(capabilities=QUESTIONS))
    ).json()
    assert again["questionAnswers"] == booking["questionAnswers"]
    assert again["unitItems"][1]["questionAnswers"] == booking["unitItems"][1]["questionAnswers"]


@pytest.mark.parametrize(
    ("item", "booking", "message"),
    [
        ({}, answers(swim="maybe"),
         f"questionAnswers[0]: 'maybe' is not an option of question 'Can everyone in the party swim?' ({SWIM}); "
         "answer one of: yes, no"),
        ({}, answers(diet="fish"),
         f"questionAnswers[0]: 'fish' is not an option of question 'Lunch' ({DIET}); answer one of: meat, vegetarian, vegan"),
        ({}, answers(notes="x" * 21),
         f"questionAnswers[0]: the answer to question 'Anything we should know?' ({NOTES}) is 21 characters long; "
         "at most 20 are allowed"),
        (answers(born="01/04/1990"), [],
         f"unitItems[0].questionAnswers[0]: the answer to question 'Date of birth' ({BORN}) must be a date "
         "(YYYY-MM-DD); '01/04/1990' given"),
        (answers(born="1990-02-30"), [],
         f"unitItems[0].questionAnswers[0]: the answer to question 'Date of birth' ({BORN}) must be a date "
         "(YYYY-MM-DD); '1990-02-30' given"),
        (answers(weight="seventy"), [],
         f"unitItems[0].questionAnswers[0]: the answer to question 'Weight in kg' ({WEIGHT}) must be a number; "
         "'seventy' given"),
        (answers(weight="NaN"), [],
         f"unitItems[0].questionAnswers[0]: the answer to question 'Weight in kg' ({WEIGHT}) must be a number; "
         "'NaN' given"),
        (answers(photos="ada@example"), [],
         f"unitItems[0].questionAnswers[0]: the answer to question 'Email for the photos' ({PHOTOS}) must be an "
         "email address; 'ada@example' given"),
        ({}, answers(born="1990-04-01"),
         f"questionAnswers[0]: question 'Date of birth' ({BORN}) is answered per unit item, in "
         "unitItems[].questionAnswers"),
        (answers(swim="yes"), [],
         f"unitItems[0].questionAnswers[0]: question 'Can everyone in the party swim?' ({SWIM}) is answered per "
         "booking, in questionAnswers"),
        ({}, answers(swim="yes") + answers(swim="no"),
         f"questionAnswers[1]: question {SWIM!r} is answered twice"),
    ],
)  # fmt: skip
async def test_answers_are_checked_by_type(
    client: httpx.AsyncClient, kayaks: Services, item: Any, booking: list[dict[str, Any]], message: str
) -> None:
    before = await count_bookings(kayaks)
    unit_item = {"questionAnswers": item} if item else {}
    response = await send(client, "POST", "/octo/bookings", trip(unit_item, questionAnswers=booking))
    error = await refused(response, message)
    assert error["questionId"] in (SWIM, DIET, NOTES, BORN, WEIGHT, PHOTOS)
    assert await count_bookings(kayaks) == before


async def test_an_unknown_question_is_named(client: httpx.AsyncClient, kayaks: Services) -> None:
    unknown = str(uuid.uuid4())
    body = trip(questionAnswers=[{"questionId": unknown, "value": "x"}])
    error = await refused(
        await send(client, "POST", "/octo/bookings", body),
        f"questionAnswers[0]: {unknown!r} is not a question of option 'DEFAULT'",
    )
    assert error["questionId"] == unknown
    # The guided option does not ask whether the party can swim.
    guided = trip(product=GUIDED, questionAnswers=answers(swim="yes"))
    await refused(
        await send(client, "POST", "/octo/bookings", guided),
        f"questionAnswers[0]: {SWIM!r} is not a question of option 'guided'",
    )
    plain = reservation(unitItems=[{"unitId": "adult", "questionAnswers": answers(born="1990-01-01")}])
    await refused(
        await send(client, "POST", "/octo/bookings", plain),
        f"unitItems[0].questionAnswers[0]: {BORN!r} is not a question for unit 'adult'",
    )
    wrong_type = await send(
        client, "POST", "/octo/bookings", trip(questionAnswers=[{"questionId": SWIM, "value": 1}])
    )
    assert wrong_type.status_code == 400 and "questionAnswers" in wrong_type.json()["errorMessage"]


async def test_required_answers_are_needed_to_confirm(client: httpx.AsyncClient, kayaks: Services) -> None:
    booking = await reserved(client, trip({}, {"questionAnswers": answers(born="1992-12-24")}))
    await refused(
        await confirm(client, booking["uuid"]),
        f"Required questions are not answered: 'I accept the risks of sea kayaking' ({WAIVER}); "
        f"'Can everyone in the party swim?' ({SWIM}); unitItems[0]: 'Date of birth' ({BORN}). "
        "Request octo/questions and send their questionAnswers",
        "UNPROCESSABLE_ENTITY",
    )
    held = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert held["status"] == "ON_HOLD"
    first, second = (item["uuid"] for item in booking["unitItems"])
    # Answered at confirm: the booking's, and the first item's by its uuid (items sent again).
    done = await confirm(
        client, booking["uuid"], questionAnswers=answers(waiver="accept", swim="no"),
        unitItems=[{"unitId": "paddler", "uuid": first, "questionAnswers": answers(born="1990-04-01")},
                   {"unitId": "paddler", "uuid": second}],
    )  # fmt: skip
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["status"] == "CONFIRMED"
    assert [values(item["questionAnswers"])["Date of birth"] for item in body["unitItems"]] == [
        "1990-04-01", "1992-12-24",
    ]  # fmt: skip


async def test_a_client_without_the_capability_cannot_hold_required_questions(
    client: httpx.AsyncClient, kayaks: Services
) -> None:
    """Such a hold could never be confirmed, and would keep its places until it expired (issue
    32): refused at POST /bookings and in an order, naming the capability, nothing held."""
    # Its answers are not read at all: a wrong one is no error, and no answer.
    body = trip({"questionAnswers": answers(photos="not an email")}, questionAnswers=answers(swim="maybe"))
    alone = await send(client, "POST", "/octo/bookings", body, None)
    assert alone.status_code == 400 and alone.json()["error"] == "UNPROCESSABLE_ENTITY", alone.text
    message = alone.json()["errorMessage"]
    assert message.startswith(
        "Option 'DEFAULT' of product 'sea-kayak' has required questions, which only octo/questions can "
        "answer: request the octo/questions capability (Octo-Capabilities)"
    ), message
    assert "'Can everyone in the party swim?'" in message and "unitItems[0]: 'Date of birth'" in message
    order = {"bookings": [trip(product=GUIDED)]}
    in_order = await client.post("/octo/orders", json=order, headers=auth(capabilities="octo/cart"))
    assert in_order.status_code == 400 and in_order.json()["error"] == "UNPROCESSABLE_ENTITY", in_order.text
    assert "request the octo/questions capability" in in_order.json()["errorMessage"]
    assert await count_bookings(kayaks) == 0
    # With the capability, a hold may wait for its answers; confirmed without it, it is still refused.
    booking = await reserved(client, trip())
    response = await confirm(client, booking["uuid"], None, questionAnswers=answers(waiver="accept"))
    assert response.status_code == 400 and "Request octo/questions" in response.json()["errorMessage"]
    assert (
        await confirm(client, (await reserved(client, reservation(), None))["uuid"], None)
    ).status_code == 200


async def test_patch_changes_clears_and_keeps_answers(client: httpx.AsyncClient, kayaks: Services) -> None:
    booking = await reserved(
        client, trip({"questionAnswers": answers(born="1990-04-01", weight="70")},
                     questionAnswers=answers(swim="yes", diet="meat")),
    )  # fmt: skip
    path = f"/octo/bookings/{booking['uuid']}"
    item = booking["unitItems"][0]["uuid"]
    changed = await send(client, "PATCH", path, {"questionAnswers": answers(diet="vegan", swim=None)})
    assert changed.status_code == 200, changed.text
    given = values(changed.json()["questionAnswers"])
    assert (given["Lunch"], given["Can everyone in the party swim?"]) == ("vegan", None)
    # Unit items sent again keep their answers by uuid; a new item starts without any.
    items = [{"unitId": "paddler", "uuid": item}, {"unitId": "paddler"}]
    grown = (await send(client, "PATCH", path, {"unitItems": items})).json()
    assert [values(i["questionAnswers"])["Weight in kg"] for i in grown["unitItems"]] == ["70", None]
    # Another option asks other questions: answers it does not ask are dropped.
    moved = (
        await send(client, "PATCH", path, {"optionId": "guided", "unitItems": [{"unitId": "paddler"}]})
    ).json()
    assert [a["questionId"] for a in moved["questionAnswers"]] == [WAIVER]
    assert moved["unitItems"][0]["questionAnswers"] == []


async def test_a_confirmed_booking_keeps_its_required_answers(
    client: httpx.AsyncClient, kayaks: Services
) -> None:
    body = trip(
        {"questionAnswers": answers(born="1990-04-01")}, questionAnswers=answers(waiver="accept", swim="yes")
    )
    booking = await reserved(client, body)
    assert (await confirm(client, booking["uuid"])).status_code == 200
    path = f"/octo/bookings/{booking['uuid']}"
    await refused(
        await send(client, "PATCH", path, {"questionAnswers": answers(swim="")}),
        f"Required questions are not answered: 'Can everyone in the party swim?' ({SWIM}). "
        "Request octo/questions and send their questionAnswers",
        "UNPROCESSABLE_ENTITY",
    )
    changed = await send(client, "PATCH", path, {"questionAnswers": answers(swim="no")})
    assert (
        changed.status_code == 200
        and values(changed.json()["questionAnswers"])["Can everyone in the party swim?"] == "no"
    )


async def test_same_uuid_with_other_answers_is_another_request(
    client: httpx.AsyncClient, kayaks: Services
) -> None:
    body = trip(questionAnswers=answers(swim="yes"))
    first = await reserved(client, body)
    assert (await reserved(client, body))["id"] == first["id"]
    clash = await send(client, "POST", "/octo/bookings", {**body, "questionAnswers": answers(swim="no")})
    assert clash.status_code == 400 and clash.json()["error"] == "INVALID_BOOKING_UUID"


async def test_webhook_payloads_carry_the_answers(client: httpx.AsyncClient, kayaks: Services) -> None:
    async with receiver() as target:
        await subscribe(client, target.url, capabilities=QUESTIONS)
        body = trip(
            {"questionAnswers": answers(born="1990-04-01")},
            questionAnswers=answers(waiver="accept", swim="yes"),
        )
        booking = await reserved(client, body)
        assert (await confirm(client, booking["uuid"])).status_code == 200
        await drain(kayaks)
        payload = [p for p in target.payloads() if p["booking"]["uuid"] == booking["uuid"]][-1]["booking"]
        assert values(payload["questionAnswers"])["Can everyone in the party swim?"] == "yes"
        assert values(payload["unitItems"][0]["questionAnswers"])["Date of birth"] == "1990-04-01"
