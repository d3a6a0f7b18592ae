"""A ticket once admitted at the gate is part of what happened (issue 38 §3): the booking is no
longer cancellable, its tickets cannot be removed, and neither its order nor its package can be
cancelled; staff may undo the admission and then it is cancellable again. A departure's
cancellation leaves such a booking as it leaves a REDEEMED one.
Clock: 2026-06-01T08:00Z; the cruise's departure is 2 June 10:00 London, far from its cutoff
(the day before: each scan admits anyway, as staff would)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from berth.container import Services
from tests.backoffice.helpers import notice_of, sign_in, text_of
from tests.bookings_helpers import GUEST
from tests.checkin_helpers import booking_updates, nonce, party, scan, subscribe
from tests.conftest import ADMIN, Clock, auth
from tests.departures_helpers import cancel_departure, departure_path
from tests.test_orders import CART, create, item
from tests.test_packages import PACKAGES, package_body


async def octo_booking(client: httpx.AsyncClient, booking_uuid: str) -> dict[str, Any]:
    response = await client.get(f"/octo/bookings/{booking_uuid}", headers=auth())
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def refused(response: httpx.Response, ticket: str) -> str:
    """The refusal's message, checked to be OCTO's UNPROCESSABLE_ENTITY naming the ticket."""
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "UNPROCESSABLE_ENTITY"
    message: str = body["errorMessage"]
    assert "admitted at the gate" in message and ticket in message
    return message


async def test_an_admitted_ticket_stays_until_staff_undo_it(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    booking = await party(client, ("adult", "adult"))
    first, second = booking["unitItems"]
    assert booking["cancellable"] is True
    scan_id = nonce()
    await scan(client, first["supplierReference"], nonce=scan_id, admitAnotherDay=True)
    assert (await octo_booking(client, booking["uuid"]))["cancellable"] is False

    # The reseller can neither remove the admitted ticket nor cancel the booking.
    removed = await client.patch(
        f"/octo/bookings/{booking['uuid']}",
        json={"unitItems": [{"uuid": second["uuid"], "unitId": "adult"}]},
        headers=auth(),
    )
    message = refused(removed, first["supplierReference"])
    assert message.startswith(f"Booking {booking['uuid']!r} can no longer be updated")
    cancel = await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth())
    assert refused(cancel, first["supplierReference"]).startswith(
        f"Booking {booking['uuid']!r} can no longer be cancelled"
    )
    # Nor can staff cancel it, forced or not: the admission is undone first.
    staff = await client.post(
        f"/admin/api/bookings/{booking['id']}/cancel", json={"force": True}, headers=ADMIN
    )
    refused(staff, first["supplierReference"])
    after = await octo_booking(client, booking["uuid"])
    assert after["status"] == "CONFIRMED" and [u["uuid"] for u in after["unitItems"]] == [
        first["uuid"],
        second["uuid"],
    ]
    assert after["unitItems"][0]["utcRedeemedAt"] is not None

    undone = await client.post("/admin/api/checkin/undo", json={"nonce": scan_id}, headers=ADMIN)
    assert undone.status_code == 200, undone.text
    assert (await octo_booking(client, booking["uuid"]))["cancellable"] is True
    cancelled = await client.post(f"/octo/bookings/{booking['uuid']}/cancel", json={}, headers=auth())
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED", cancelled.text


async def test_the_booking_page_says_why_it_cannot_be_cancelled_and_undoes_the_admission(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    """The page says who admitted which ticket, offers to undo exactly the tickets admitted, with
    a reason, however long ago (the gate's undo lasts ten minutes), and then the cancel."""
    booking = await party(client, ("adult", "adult"))
    first, second = booking["unitItems"]
    await scan(client, first["supplierReference"], admitAnotherDay=True, device="pier-2")
    clock.advance(days=1)
    csrf = await sign_in(client)
    page = (await client.get(f"/admin/bookings/{booking['id']}")).text
    text = text_of(page)
    assert (
        "Not cancellable: 1 of its tickets was admitted at the gate. "
        "Undo the admission below to cancel the booking." in text
    )
    assert "Cancel even though the cutoff has passed" not in text
    assert "admitted 1 Jun 2026 09:00 BST by admin token on pier-2" in text  # the tickets' table
    assert re.findall(r'name="ticket" value="([^"]+)"', page) == [first["uuid"]]  # only what will work

    url = f"/admin/bookings/{booking['id']}/undo-admission"
    for form, said in (
        ({"ticket": [first["uuid"]], "reason": " "}, "Admission not undone: give a reason"),
        ({"reason": "Wrong party"}, "Admission not undone: tick the tickets to take back."),
        ({"ticket": [second["uuid"]], "reason": "Wrong party"}, "were not admitted at the gate"),
    ):
        response = await client.post(url, data={**form, "csrf_token": csrf})
        assert response.status_code == 303, response.text
        assert said in (notice_of((await client.get(response.headers["location"])).text) or "")
    done = await client.post(
        url, data={"ticket": [first["uuid"]], "reason": "Wrong party", "csrf_token": csrf}
    )
    notice = notice_of((await client.get(done.headers["location"])).text)
    assert notice == (
        f"Booking {booking['supplierReference']}: the admission of {first['supplierReference']} is undone "
        "(CONFIRMED → CONFIRMED); the reason is in its history."
    )
    page = (await client.get(f"/admin/bookings/{booking['id']}")).text
    assert "Not cancellable" not in page and 'name="ticket"' not in page
    assert "Wrong party" in text_of(page)  # the history
    assert (await octo_booking(client, booking["uuid"]))["unitItems"][0]["utcRedeemedAt"] is None


async def test_an_order_with_an_admitted_ticket_is_not_cancelled(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    order = await create(client, item(units=("adult", "adult")), item("2026-06-03T10:00:00+01:00"))
    confirmed = await client.post(
        f"/octo/orders/{order['id']}/confirm", json={"contact": GUEST}, headers=auth(capabilities=CART)
    )
    assert confirmed.status_code == 200, confirmed.text
    ticket = confirmed.json()["bookings"][0]["unitItems"][0]["supplierReference"]
    await scan(client, ticket, admitAnotherDay=True)
    got = (await client.get(f"/octo/orders/{order['id']}", headers=auth(capabilities=CART))).json()
    assert got["cancellable"] is False and [b["cancellable"] for b in got["bookings"]] == [False, True]
    response = await client.post(
        f"/octo/orders/{order['id']}/cancel", json={}, headers=auth(capabilities=CART)
    )
    assert "Nothing in the order was cancelled" in refused(response, ticket)
    after = (await client.get(f"/octo/orders/{order['id']}", headers=auth(capabilities=CART))).json()
    assert after["status"] == "CONFIRMED" and [b["status"] for b in after["bookings"]] == ["CONFIRMED"] * 2


async def test_a_package_with_an_admitted_ticket_is_not_cancelled(
    client: httpx.AsyncClient, packaged: Services
) -> None:
    held = await client.post(
        "/octo/bookings", json=await package_body(client), headers=auth(capabilities=PACKAGES)
    )
    assert held.status_code == 200, held.text
    package = held.json()
    confirmed = await client.post(
        f"/octo/bookings/{package['uuid']}/confirm",
        json={"contact": GUEST},
        headers=auth(capabilities=PACKAGES),
    )
    assert confirmed.status_code == 200 and confirmed.json()["cancellable"] is True, confirmed.text
    cruise = confirmed.json()["packageBookings"][0]
    ticket = cruise["unitItems"][0]["supplierReference"]
    await scan(client, ticket, gate=None, admitAnotherDay=True)
    got = (await client.get(f"/octo/bookings/{package['uuid']}", headers=auth(capabilities=PACKAGES))).json()
    assert got["cancellable"] is False and got["packageBookings"][0]["cancellable"] is False
    response = await client.post(
        f"/octo/bookings/{package['uuid']}/cancel", json={}, headers=auth(capabilities=PACKAGES)
    )
    refused(response, ticket)
    after = (
        await client.get(f"/octo/bookings/{package['uuid']}", headers=auth(capabilities=PACKAGES))
    ).json()
    assert [after["status"], *(m["status"] for m in after["packageBookings"])] == ["CONFIRMED"] * 3


async def test_a_departure_cancelled_after_boarding_began_asks_and_may_keep_the_tickets(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """A party partly through the gate is used, not cancelled with its departure; its tickets
    not through are what staff choose about: without a choice the cancellation is refused and
    changes nothing; KEEP leaves the booking CONFIRMED and its ticket valid."""
    boarding = await party(client, ("adult", "adult"))
    waiting = await party(client, ("adult",))
    first, second = boarding["unitItems"]
    await scan(client, first["supplierReference"], admitAnotherDay=True)
    affected = await client.get(departure_path(suffix="/affected"), headers=ADMIN)
    assert affected.status_code == 200, affected.text
    assert affected.json()["bookings"] == 1
    assert affected.json()["ticketsNotThrough"] == [
        {
            "bookingId": boarding["id"],
            "supplierReference": boarding["supplierReference"],
            "unitItemUuids": [second["uuid"]],
        }
    ]
    unsaid = await cancel_departure(client, "Storm warning")
    assert unsaid.status_code == 400 and unsaid.json()["error"] == "UNPROCESSABLE_ENTITY", unsaid.text
    assert unsaid.json()["errorMessage"].startswith(
        "Boarding began: 1 booking(s) on the departure have 1 ticket(s)"
    )
    assert (await octo_booking(client, waiting["uuid"]))["status"] == "CONFIRMED"  # nothing changed
    assert (await client.get(departure_path(), headers=ADMIN)).json()["closed"] is False
    wrong = await client.post(
        departure_path(suffix="/cancel"), json={"reason": "Storm", "notThrough": "MAYBE"}, headers=ADMIN
    )
    assert wrong.status_code == 400 and wrong.json()["error"] == "BAD_REQUEST"

    response = await client.post(
        departure_path(suffix="/cancel"),
        json={"reason": "Storm warning", "notThrough": "KEEP"},
        headers=ADMIN,
    )
    assert response.status_code == 200, response.text
    done = response.json()
    assert done["cancelledBookingIds"] == [waiting["id"]] and done["notThrough"] == "KEEP"
    assert [b["unitItemUuids"] for b in done["ticketsNotThrough"]] == [[second["uuid"]]]
    assert (await octo_booking(client, waiting["uuid"]))["status"] == "CANCELLED"
    kept = await octo_booking(client, boarding["uuid"])
    assert kept["status"] == "CONFIRMED" and kept["unitItems"][0]["utcRedeemedAt"] is not None
    assert (await scan(client, second["supplierReference"], admitAnotherDay=True))["result"] == "ADMITTED"
    audit = (
        await client.get("/admin/api/audit", params={"action": "departure.cancel"}, headers=ADMIN)
    ).json()
    assert audit["entries"][0]["details"]["notThrough"] == "KEEP"
    assert audit["entries"][0]["details"]["ticketsNotThrough"] == {
        boarding["supplierReference"]: [second["supplierReference"]]
    }


async def test_a_departure_cancelled_after_boarding_began_cancels_the_tickets_not_through(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """CANCEL: the party keeps its ticket through the gate, REDEEMED, with that ticket's place
    and price alone; its reseller is told by a booking_update, its history says which tickets
    went and why; the tickets cancelled no longer open the gate."""
    boarding = await party(client, ("adult", "adult", "adult"))
    first, *rest = boarding["unitItems"]
    await subscribe(client)
    await scan(client, first["supplierReference"], admitAnotherDay=True)
    staff_view = f"/admin/api/bookings/{boarding['id']}"
    before = (await client.get(staff_view, headers=ADMIN)).json()["booking"]
    response = await client.post(
        departure_path(suffix="/cancel"),
        json={"reason": "Storm warning", "notThrough": "CANCEL"},
        headers=ADMIN,
    )
    assert response.status_code == 200, response.text
    done = response.json()
    assert done["cancelledBookingIds"] == [] and done["notThrough"] == "CANCEL"
    assert len(done["connectionIds"]) == 1  # the reseller told, by its booking_update
    after = await octo_booking(client, boarding["uuid"])
    assert after["status"] == "REDEEMED" and [u["uuid"] for u in after["unitItems"]] == [first["uuid"]]
    assert after["utcRedeemedAt"] == after["unitItems"][0]["utcRedeemedAt"] is not None
    priced = (await client.get(staff_view, headers=ADMIN)).json()["booking"]
    assert priced["pricing"]["retail"] * 3 == before["pricing"]["retail"]  # one adult's of three
    sent = await booking_updates(bookable, boarding["id"])
    assert [(b["status"], len(b["unitItems"])) for b in sent] == [("CONFIRMED", 3), ("REDEEMED", 1)]
    history = (await client.get(f"/admin/api/bookings/{boarding['id']}", headers=ADMIN)).json()["history"]
    assert history[-1]["kind"] == "tickets cancelled"
    assert (
        history[-1]["detail"]["reason"] == "Storm warning" and history[-1]["detail"]["cause"] == "departure"
    )
    assert history[-1]["detail"]["tickets"] == [u["supplierReference"] for u in rest]
    gone = await scan(client, rest[0]["supplierReference"], admitAnotherDay=True)
    assert gone["result"] == "UNKNOWN_CODE"
    again = await scan(client, boarding["supplierReference"], admitAnotherDay=True)
    assert again["result"] == "ALREADY_ADMITTED"
