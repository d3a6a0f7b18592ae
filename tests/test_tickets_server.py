"""The demo's tickets from a real `berth serve --demo` on a loopback port, on the test
database (SQLite or PostgreSQL): a reseller books, the guest opens the PDF_URL exactly as the
booking gives it, and a phone's decoder reads the booking's code from its QR code. The pages
are saved to test-artifacts/screenshots/ (and to TICKET_SCREENSHOTS_TO as well, when it names
a folder: docs/screenshots/ holds them)."""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

import httpx
import pypdfium2

from tests.berth_process import berth_serve
from tests.conftest import auth
from tests.tickets_helpers import TICKET_URL, decoded_codes, pdf_text

CRUISE = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
COACH = {"productId": "white-cliffs-coach", "optionId": "DEFAULT"}
SCREENSHOTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "screenshots"


def save_page(content: bytes, name: str) -> None:
    """The first page as a PNG, as a guest's screen shows it."""
    document = pypdfium2.PdfDocument(content)
    try:
        image = document[0].render(scale=110 / 72).to_pil()
    finally:
        document.close()
    folders = [
        SCREENSHOTS,
        *([Path(os.environ["TICKET_SCREENSHOTS_TO"])] if os.environ.get("TICKET_SCREENSHOTS_TO") else []),
    ]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        image.save(folder / name, optimize=True)


async def first_slot(octo: httpx.AsyncClient, product: dict[str, str]) -> str:
    start = date.today() + timedelta(days=2)
    slots = await octo.post(
        "/octo/availability",
        json={
            **product,
            "localDateStart": start.isoformat(),
            "localDateEnd": (start + timedelta(days=7)).isoformat(),
        },
    )
    found: str = next(s for s in slots.json() if s["available"])["id"]
    return found


async def test_a_demo_booking_s_pdf_ticket_opens_and_its_qr_code_reads(database_url: str) -> None:
    with berth_serve(database_url, "--demo") as base:
        async with httpx.AsyncClient(base_url=base, headers=auth(), timeout=30) as octo:
            slot = await first_slot(octo, CRUISE)
            body = {
                "uuid": "5d0c3c8e-8d7e-4a57-9d3a-1c4f8a7b2e11",
                **CRUISE,
                "availabilityId": slot,
                "unitItems": [
                    {"unitId": "adult", "extraItems": [{"extraId": "lunch-box"}]},
                    {"unitId": "child"},
                ],
            }
            held = await octo.post("/octo/bookings", json=body, headers={"Octo-Capabilities": "octo/extras"})
            assert held.status_code == 200, held.text
            contact = {"firstName": "Grace", "lastName": "Hopper", "emailAddress": "grace@example.com"}
            confirmed = (
                await octo.post(f"/octo/bookings/{body['uuid']}/confirm", json={"contact": contact})
            ).json()
        voucher = {o["deliveryFormat"]: o["deliveryValue"] for o in confirmed["voucher"]["deliveryOptions"]}
        url = voucher["PDF_URL"]
        match = TICKET_URL.match(url)
        assert match and match["base"] == base
        async with httpx.AsyncClient(timeout=30) as guest:  # no API key: a guest's browser
            response = await guest.get(url)
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    pages = pdf_text(response.content)
    assert len(pages) == 3  # the demo cruise issues a voucher and a ticket per guest
    assert "Harbourside Adventures" in pages[0] and "Thames Sightseeing Cruise" in pages[0]
    assert "Grace Hopper" in pages[0]
    code = confirmed["supplierReference"]
    assert decoded_codes(response.content) == {"QRCode": code, "Aztec": code}
    assert "1 \N{MULTIPLICATION SIGN} Riverside lunch box" in pages[0]
    save_page(response.content, "ticket-voucher.png")


async def test_a_coach_ticket_names_the_pickup_point_and_time(database_url: str) -> None:
    with berth_serve(database_url, "--demo") as base:
        async with httpx.AsyncClient(base_url=base, headers=auth(), timeout=30) as octo:
            slot = await first_slot(octo, COACH)
            booking = (
                await octo.get(
                    "/octo/products/white-cliffs-coach",
                    headers={"Octo-Capabilities": "octo/pickups, octo/questions"},
                )
            ).json()
            point = booking["options"][0]["pickupPoints"][0]
            question = booking["options"][0]["questions"][0]
            body = {
                "uuid": "7b1e0a52-3f4c-4d1e-8a6b-2c9d0e1f3a44",
                **COACH,
                "availabilityId": slot,
                "unitItems": [
                    {
                        "unitId": "adult",
                        "contact": {"fullName": "Ada Lovelace"},
                        "extraItems": [{"extraId": "picnic"}],
                    }
                ],
                "pickupPointId": point["id"],
            }
            capabilities = {"Octo-Capabilities": "octo/pickups, octo/questions, octo/extras"}
            held = await octo.post("/octo/bookings", json=body, headers=capabilities)
            assert held.status_code == 200, held.text
            contact = {
                "firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com",
                "phoneNumber": "+447700900123",
            }  # fmt: skip
            answers = [{"questionId": question["id"], "value": question["selectOptions"][0]["value"]}]
            confirmed = await octo.post(
                f"/octo/bookings/{body['uuid']}/confirm",
                json={"contact": contact, "questionAnswers": answers},
                headers=capabilities,
            )
            assert confirmed.status_code == 200, confirmed.text
            ticket = confirmed.json()["unitItems"][0]["ticket"]
        url = next(o["deliveryValue"] for o in ticket["deliveryOptions"] if o["deliveryFormat"] == "PDF_URL")
        async with httpx.AsyncClient(timeout=30) as guest:
            response = await guest.get(url)
    (page,) = pdf_text(response.content)
    assert "Ticket 1 of 1" in page and "Ada Lovelace" in page
    assert "Pickup: Harbourside Hotel, 2 Harbour Walk" in page
    assert "Show each guest's ticket to the driver at the pickup point" in page
    save_page(response.content, "ticket-coach.png")
