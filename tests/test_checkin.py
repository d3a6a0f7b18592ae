"""Check-in at the gate over the admin API: what each scan answers, unit-level redemption,
the nonce that makes a retry harmless, the roles, and undo."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.container import Services
from berth.domain.bookings import REFERENCE_ALPHABET
from berth.domain.checkin import readings
from berth.domain.staff import Role
from tests.bookings_helpers import SLOT, TOUR
from tests.checkin_helpers import GATE, ON_THE_DAY, booking_updates, nonce, party, scan, subscribe
from tests.conftest import ADMIN, START, Clock, auth
from tests.test_staff_roles import staff_token

OTHER_SLOT = "2026-06-02T14:00:00+01:00"


@pytest.fixture(autouse=True)
def on_the_day(clock: Clock) -> None:
    """The gate scans on the day of the departures (SLOT and OTHER_SLOT)."""
    clock.now = ON_THE_DAY


async def test_a_voucher_admits_the_whole_party_once(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await party(client, ("adult", "adult", "child"))
    await subscribe(client)
    answer = await scan(client, f"  {booking['supplierReference'].lower()} ", device="gate-1")
    assert answer["result"] == "ADMITTED"
    party_seen = answer["booking"]
    assert party_seen["status"] == "REDEEMED" and party_seen["leadName"] == "Ada Lovelace"
    assert sorted(answer["admitted"]) == sorted(u["uuid"] for u in booking["unitItems"])
    assert all(u["admitted"] and u["admission"]["device"] == "gate-1" for u in party_seen["units"])
    again = await scan(client, booking["supplierReference"])
    assert again["result"] == "ALREADY_ADMITTED" and again["admitted"] == []
    assert again["alreadyAdmitted"]["by"] == "BERTH_ADMIN_TOKEN"  # as the audit trail has it
    assert again["alreadyAdmitted"]["byName"] == "admin token"  # as staff read it
    assert again["alreadyAdmitted"]["device"] == "gate-1"
    octo = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert octo["status"] == "REDEEMED" and octo["utcRedeemedAt"] is not None
    assert all(u["utcRedeemedAt"] == octo["utcRedeemedAt"] for u in octo["unitItems"])
    sent = await booking_updates(bookable, booking["id"])
    assert [b["status"] for b in sent] == ["REDEEMED"]  # one webhook for the admission, none for the rescan


async def test_tickets_are_admitted_one_by_one(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await party(client, ("adult", "adult"))
    await subscribe(client)
    first, second = booking["unitItems"]
    answer = await scan(client, first["supplierReference"].lower())
    assert answer["result"] == "ADMITTED" and answer["admitted"] == [first["uuid"]]
    assert answer["scannedUnit"] == first["uuid"] and answer["booking"]["status"] == "CONFIRMED"
    octo = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    redeemed = {u["uuid"]: u["utcRedeemedAt"] for u in octo["unitItems"]}
    assert redeemed[first["uuid"]] is not None and redeemed[second["uuid"]] is None
    assert octo["status"] == "CONFIRMED" and octo["utcRedeemedAt"] is None
    assert (await scan(client, first["supplierReference"]))["result"] == "ALREADY_ADMITTED"
    # The voucher admits whoever is left; then the booking is REDEEMED.
    rest = await scan(client, booking["supplierReference"])
    assert rest["result"] == "ADMITTED" and rest["admitted"] == [second["uuid"]]
    assert rest["booking"]["status"] == "REDEEMED"
    assert [b["status"] for b in await booking_updates(bookable, booking["id"])] == ["CONFIRMED", "REDEEMED"]


async def test_staff_admit_part_of_a_party(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await party(client, ("adult",) * 5)
    items = [u["uuid"] for u in booking["unitItems"]]
    four = await scan(client, booking["supplierReference"], unitItemUuids=items[:4])
    assert sorted(four["admitted"]) == sorted(items[:4]) and four["booking"]["status"] == "CONFIRMED"
    assert [u["admitted"] for u in four["booking"]["units"]].count(False) == 1
    last = await scan(client, booking["supplierReference"], unitItemUuids=items[4:])
    assert last["admitted"] == items[4:] and last["booking"]["status"] == "REDEEMED"
    stranger = await scan(client, booking["supplierReference"], unitItemUuids=["nope"], status=400)
    assert stranger["error"] == "BAD_REQUEST" and "nope" in stranger["errorMessage"]


async def test_a_retried_scan_admits_once_and_answers_the_same(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    booking = await party(client)
    await subscribe(client)
    same = nonce()
    first = await scan(client, booking["supplierReference"], nonce=same)
    retried = await scan(client, booking["supplierReference"], nonce=same)
    assert first["result"] == retried["result"] == "ADMITTED"
    assert first["admitted"] == retried["admitted"] and retried["replayed"] is True
    assert len(await booking_updates(bookable, booking["id"])) == 1
    entries = (await client.get("/admin/api/audit", params={"action": "checkin.admit"}, headers=ADMIN)).json()
    assert entries["total"] == 1
    assert entries["entries"][0]["details"]["nonce"] == same


async def test_a_nonce_sent_again_with_another_scan_is_a_conflict(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """A client that reuses a nonce by mistake must not be shown the earlier scan's green for
    a party that was not admitted."""
    first, other = await party(client), await party(client)
    same = nonce()
    admitted = await scan(client, first["supplierReference"], nonce=same)
    items = [u["uuid"] for u in admitted["booking"]["units"]]
    for changed in (
        {"code": other["supplierReference"]},
        {"code": first["supplierReference"], "unitItemUuids": items[:1]},
        {"code": first["supplierReference"], "gate": None},
    ):
        refused = await scan(client, nonce=same, status=409, **changed)
        assert refused["error"] == "CONFLICT"
        assert refused["errorMessage"] == (
            f"The nonce {same!r} was sent before with another scan (another code, departure or "
            "tickets): make a new nonce for each scan"
        )
    # The other party was not admitted; the same scan sent again is still answered as it was.
    assert (await scan(client, other["supplierReference"]))["result"] == "ADMITTED"
    retried = await scan(client, first["supplierReference"], nonce=same, device="another phone")
    assert retried["result"] == "ADMITTED" and retried["replayed"] is True


async def test_a_scan_sent_again_after_its_undo_says_it_no_longer_counts(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    booking = await party(client)
    scan_id = nonce()
    await scan(client, booking["supplierReference"], nonce=scan_id)
    undone = await client.post("/admin/api/checkin/undo", json={"nonce": scan_id}, headers=ADMIN)
    assert undone.status_code == 200, undone.text
    replayed = await scan(client, booking["supplierReference"], nonce=scan_id)
    assert replayed["result"] == "UNDONE" and replayed["replayed"] is True
    assert replayed["message"] == "Admitted, then undone: the admission no longer counts"
    assert not any(u["admitted"] for u in replayed["booking"]["units"])
    # Admitted again by another scan: the undone one still does not count.
    assert (await scan(client, booking["supplierReference"]))["result"] == "ADMITTED"
    assert (await scan(client, booking["supplierReference"], nonce=scan_id))["result"] == "UNDONE"


async def test_what_the_gate_refuses(client: httpx.AsyncClient, bookable: Services) -> None:
    elsewhere = await party(client, slot=OTHER_SLOT)
    other = await scan(client, elsewhere["supplierReference"])
    assert other["result"] == "NOT_THIS_DEPARTURE"
    assert other["booking"]["departure"]["availabilityId"] == OTHER_SLOT
    assert other["booking"]["units"][0]["admitted"] is False

    cancelled = await party(client)
    # On the day, past the reseller's cutoff: staff cancel it.
    forced = await client.post(
        f"/admin/api/bookings/{cancelled['id']}/cancel", json={"force": True}, headers=ADMIN
    )
    assert forced.status_code == 200, forced.text
    assert (await scan(client, cancelled["supplierReference"]))["result"] == "CANCELLED"

    from tests.bookings_helpers import reservation, reserve

    held = await reserve(client, reservation())
    assert (await scan(client, held["supplierReference"]))["result"] == "NOT_CONFIRMED"

    unknown = await scan(client, "NOPE1234")
    assert unknown["result"] == "UNKNOWN_CODE" and unknown["booking"] is None
    # Without a departure, the gate admits a booking of any departure.
    assert (await scan(client, elsewhere["supplierReference"], gate=None))["result"] == "ADMITTED"


async def test_codes_by_reseller_reference_and_unit_reference_without_departure(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    booking = await party(client, resellerReference="RES-42")
    assert (await scan(client, "RES-42"))["result"] == "ADMITTED"
    other = await party(client)
    ticket = other["unitItems"][1]["supplierReference"]
    found = await scan(client, ticket.lower(), gate=None)
    assert found["result"] == "ADMITTED" and found["admitted"] == [other["unitItems"][1]["uuid"]]
    assert booking["id"] != other["id"]


async def test_bad_scans_get_clear_errors(client: httpx.AsyncClient, bookable: Services) -> None:
    booking = await party(client)
    empty = await scan(client, "   ", status=400)
    assert empty["error"] == "BAD_REQUEST" and "code" in empty["errorMessage"]
    short = await client.post(
        "/admin/api/checkin", json={"code": booking["supplierReference"], "nonce": "x"}, headers=ADMIN
    )
    assert short.status_code == 400 and "nonce" in short.json()["errorMessage"]
    gate = {**TOUR, "availabilityId": "2026-06-02T11:11:00+01:00"}
    wrong = await scan(client, booking["supplierReference"], gate=gate, status=400)
    assert wrong["error"] == "INVALID_AVAILABILITY_ID"
    unknown_product = await scan(
        client, booking["supplierReference"], gate={**GATE, "productId": "nope"}, status=400
    )
    assert unknown_product["error"] == "INVALID_PRODUCT_ID"
    extra = await client.post(
        "/admin/api/checkin", json={"code": "A", "nonce": nonce(), "what": 1}, headers=ADMIN
    )
    assert extra.status_code == 400
    ticket = booking["unitItems"][0]["supplierReference"]
    mixed = await scan(client, ticket, unitItemUuids=[booking["unitItems"][1]["uuid"]], status=400)
    assert "ticket" in mixed["errorMessage"]
    detail = (await client.get(f"/admin/api/bookings/{booking['id']}", headers=ADMIN)).json()
    assert detail["booking"]["status"] == "CONFIRMED"  # nothing half-written


async def test_a_viewer_looks_up_and_an_operator_admits(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    booking = await party(client)
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    operator = await staff_token(bookable, "operator@example.com", Role.OPERATOR)
    refused = await scan(client, booking["supplierReference"], viewer, status=403)
    assert refused["error"] == "FORBIDDEN" and "operator" in refused["errorMessage"]
    looked = await scan(client, booking["supplierReference"], viewer, path="/admin/api/checkin/lookup")
    assert looked["result"] == "VALID" and looked["booking"]["status"] == "CONFIRMED"
    admitted = await scan(client, booking["supplierReference"], operator, device="pier-2")
    assert admitted["result"] == "ADMITTED"
    assert admitted["booking"]["units"][0]["admission"]["by"] == "operator@example.com"
    assert admitted["booking"]["units"][0]["admission"]["byName"] == "operator@example.com"
    looked = await scan(client, booking["supplierReference"], viewer, path="/admin/api/checkin/lookup")
    assert looked["result"] == "ALREADY_ADMITTED"
    assert looked["alreadyAdmitted"]["by"] == "operator@example.com"


async def test_an_operator_undoes_an_admission_for_a_while(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    booking = await party(client)
    await subscribe(client)
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    scan_id = nonce()
    await scan(client, booking["supplierReference"], nonce=scan_id)
    refused = await client.post("/admin/api/checkin/undo", json={"nonce": scan_id}, headers=viewer)
    assert refused.status_code == 403
    undone = await client.post("/admin/api/checkin/undo", json={"nonce": scan_id}, headers=ADMIN)
    assert undone.status_code == 200, undone.text
    assert undone.json()["booking"]["status"] == "CONFIRMED"
    assert not any(u["admitted"] for u in undone.json()["booking"]["units"])
    assert sorted(undone.json()["undone"]) == sorted(u["uuid"] for u in booking["unitItems"])
    octo = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert octo["status"] == "CONFIRMED" and octo["utcRedeemedAt"] is None
    assert [b["status"] for b in await booking_updates(bookable, booking["id"])] == ["REDEEMED", "CONFIRMED"]
    again = await client.post("/admin/api/checkin/undo", json={"nonce": scan_id}, headers=ADMIN)
    assert again.status_code == 404 and again.json()["error"] == "NOT_FOUND"
    audit = (await client.get("/admin/api/audit", params={"action": "checkin.undo"}, headers=ADMIN)).json()
    assert audit["total"] == 1 and audit["entries"][0]["details"]["to"] == "CONFIRMED"

    late = nonce()
    assert (await scan(client, booking["supplierReference"], nonce=late))["result"] == "ADMITTED"
    clock.advance(minutes=11)
    too_late = await client.post("/admin/api/checkin/undo", json={"nonce": late}, headers=ADMIN)
    assert (
        too_late.json()["error"] == "UNPROCESSABLE_ENTITY" and "10 minutes" in too_late.json()["errorMessage"]
    )


async def test_a_supervisor_undoes_an_admission_at_any_time(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    """Hours after the gate's ten minutes, an operator or an admin takes back the admission of
    chosen tickets through the booking, with a reason: in its history, its webhook and the audit
    trail; a viewer may not, and what cannot be taken back is refused, changing nothing."""
    booking = await party(client, ("adult", "adult"))
    first, second = (u["uuid"] for u in booking["unitItems"])
    await subscribe(client)
    scan_id = nonce()
    assert (await scan(client, booking["supplierReference"], nonce=scan_id))["result"] == "ADMITTED"
    clock.advance(hours=5)
    at_the_gate = await client.post("/admin/api/checkin/undo", json={"nonce": scan_id}, headers=ADMIN)
    assert at_the_gate.status_code == 400 and "booking's page" in at_the_gate.json()["errorMessage"]

    path = f"/admin/api/bookings/{booking['id']}/undo-admission"
    viewer = await staff_token(bookable, "viewer@example.com", Role.VIEWER)
    operator = await staff_token(bookable, "operator@example.com", Role.OPERATOR)
    body = {"unitItemUuids": [first], "reason": "Wrong party ticked at the gate"}
    assert (await client.post(path, json=body, headers=viewer)).status_code == 403
    for wrong, error in (
        ({**body, "reason": "   "}, "BAD_REQUEST"),
        ({"unitItemUuids": [first]}, "BAD_REQUEST"),
        ({**body, "unitItemUuids": []}, "BAD_REQUEST"),
        ({**body, "unitItemUuids": [first, "nope"]}, "BAD_REQUEST"),
    ):
        refused = await client.post(path, json=wrong, headers=operator)
        assert (refused.status_code, refused.json()["error"]) == (400, error), refused.text
    missing = await client.post("/admin/api/bookings/nope/undo-admission", json=body, headers=operator)
    assert missing.status_code == 404
    assert [b["status"] for b in await booking_updates(bookable, booking["id"])] == [
        "REDEEMED"
    ]  # nothing yet

    undone = await client.post(path, json=body, headers=operator)
    assert undone.status_code == 200, undone.text
    assert undone.json()["status"] == "CONFIRMED"
    octo = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    redeemed = {u["uuid"]: u["utcRedeemedAt"] for u in octo["unitItems"]}
    assert octo["status"] == "CONFIRMED" and redeemed[first] is None and redeemed[second] is not None
    assert [b["status"] for b in await booking_updates(bookable, booking["id"])] == ["REDEEMED", "CONFIRMED"]
    audit = (await client.get("/admin/api/audit", params={"action": "checkin.undo"}, headers=ADMIN)).json()
    [entry] = audit["entries"]
    assert entry["actor"] == "operator@example.com"
    assert entry["details"]["reason"] == "Wrong party ticked at the gate"
    assert entry["details"]["nonces"] == [scan_id]
    assert entry["details"]["tickets"] == [booking["unitItems"][0]["supplierReference"]]
    history = (await client.get(f"/admin/api/bookings/{booking['id']}", headers=ADMIN)).json()["history"]
    assert history[-1]["kind"] == "admission undone"
    assert history[-1]["detail"]["reason"] == "Wrong party ticked at the gate"
    # Taken back already: nothing to take back, nothing changes.
    again = await client.post(path, json=body, headers=ADMIN)
    assert again.status_code == 400 and again.json()["error"] == "UNPROCESSABLE_ENTITY"
    assert "not admitted at the gate" in again.json()["errorMessage"]
    # The other ticket too: the booking is cancellable again (by staff, past its cutoff).
    rest = {"unitItemUuids": [second], "reason": "The party turned back"}
    assert (await client.post(path, json=rest, headers=ADMIN)).status_code == 200
    cancelled = await client.post(
        f"/admin/api/bookings/{booking['id']}/cancel", json={"force": True}, headers=ADMIN
    )
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED", cancelled.text


async def test_the_departure_the_scanner_keeps(client: httpx.AsyncClient, bookable: Services) -> None:
    first = await party(client, ("adult", "adult"), notes="Wheelchair")
    await party(client, ("adult",))
    await party(client, slot=OTHER_SLOT)
    await scan(client, first["unitItems"][0]["supplierReference"])
    response = await client.get("/admin/api/checkin/departure", params=GATE, headers=ADMIN)
    assert response.status_code == 200, response.text
    kept = response.json()
    assert (kept["expected"], kept["admitted"]) == (3, 1)
    assert len(kept["parties"]) == 2
    noted = next(p for p in kept["parties"] if p["bookingId"] == first["id"])
    assert noted["notes"] == "Wheelchair" and noted["leadName"] == "Ada Lovelace"
    assert "emailAddress" not in str(kept) and "ada@example.com" not in str(kept)
    bad = await client.get(
        "/admin/api/checkin/departure", params={**GATE, "availabilityId": "x"}, headers=ADMIN
    )
    assert bad.status_code == 400 and bad.json()["error"] == "INVALID_AVAILABILITY_ID"
    assert kept["departure"]["availabilityId"] == SLOT
    assert kept["today"] == "2026-06-02"  # at the departure's place, which the scanner keeps offline


async def test_another_days_ticket_is_admitted_only_when_staff_say_so(
    client: httpx.AsyncClient, bookable: Services, clock: Clock
) -> None:
    """The day before the departure, a scan asks (ANOTHER_DAY, nothing admitted); staff's
    "Admit anyway" is the flag, and the audit trail says the ticket was of another day."""
    clock.now = START  # 1 June, 09:00 in London: the day before SLOT
    booking = await party(client, ("adult", "adult"))
    await subscribe(client)
    first = booking["unitItems"][0]
    asked = await scan(client, first["supplierReference"])
    assert (asked["result"], asked["admitted"]) == ("ANOTHER_DAY", [])
    assert asked["message"].startswith("Booked for another day than today")
    assert asked["booking"]["departure"]["localDateTimeStart"] == SLOT
    assert not any(u["admitted"] for u in asked["booking"]["units"])
    looked = await scan(client, first["supplierReference"], path="/admin/api/checkin/lookup")
    assert looked["result"] == "ANOTHER_DAY"
    assert await booking_updates(bookable, booking["id"]) == []  # nothing changed
    sure = await scan(client, first["supplierReference"], admitAnotherDay=True)
    assert (sure["result"], sure["admitted"]) == ("ADMITTED", [first["uuid"]])
    audit = (await client.get("/admin/api/audit", params={"action": "checkin.admit"}, headers=ADMIN)).json()
    assert [e["details"]["anotherDay"] for e in audit["entries"]] == ["2026-06-02"]
    # A ticket already through says so first; the flag must be a JSON boolean.
    assert (await scan(client, first["supplierReference"]))["result"] == "ALREADY_ADMITTED"
    loose = await scan(client, booking["supplierReference"], admitAnotherDay="yes", status=400)
    assert loose["error"] == "BAD_REQUEST" and "admitAnotherDay" in loose["errorMessage"]
    # On the day, the rest of the party goes through without asking, and no day is audited.
    clock.now = ON_THE_DAY
    rest = await scan(client, booking["supplierReference"])
    assert rest["result"] == "ADMITTED" and rest["booking"]["status"] == "REDEEMED"
    audit = (await client.get("/admin/api/audit", params={"action": "checkin.admit"}, headers=ADMIN)).json()
    assert ["anotherDay" in e["details"] for e in audit["entries"]] == [False, True]  # newest first


async def test_a_look_up_says_what_the_ticket_is_and_admits_nothing(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    booking = await party(client)
    await subscribe(client)
    lookup = "/admin/api/checkin/lookup"
    for _ in range(2):
        looked = await scan(client, booking["supplierReference"], path=lookup)
        assert (looked["result"], looked["message"]) == ("VALID", "Valid: the tickets may go through")
        assert looked["admitted"] == [] and not any(u["admitted"] for u in looked["booking"]["units"])
    octo = (await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth())).json()
    assert octo["status"] == "CONFIRMED" and octo["utcRedeemedAt"] is None
    assert await booking_updates(bookable, booking["id"]) == []
    audit = (await client.get("/admin/api/audit", params={"action": "checkin.admit"}, headers=ADMIN)).json()
    assert audit["total"] == 0

    await scan(client, booking["unitItems"][0]["supplierReference"])
    ticket = booking["unitItems"][0]["supplierReference"]
    assert (await scan(client, ticket, path=lookup))["result"] == "ALREADY_ADMITTED"
    assert (await scan(client, booking["supplierReference"], path=lookup))["result"] == "VALID"  # one to come
    cancelled = await party(client)
    # On the day, past the reseller's cutoff: staff cancel it.
    forced = await client.post(
        f"/admin/api/bookings/{cancelled['id']}/cancel", json={"force": True}, headers=ADMIN
    )
    assert forced.status_code == 200, forced.text
    assert (await scan(client, cancelled["supplierReference"], path=lookup))["result"] == "CANCELLED"
    unknown = await scan(client, "61TAO9S5QR", path=lookup)
    assert (unknown["result"], unknown["message"]) == ("UNKNOWN_CODE", "Unknown code: 61TAO9S5QR")


def misread(code: str) -> str:
    """`code` as staff might type it from a guest's reading: lower case, in groups of three,
    O for 0, I and l for 1."""
    typed = code.lower().replace("0", "O")
    typed = typed.replace("1", "I", 1).replace("1", "l")
    return " ".join(typed[i : i + 3] for i in range(0, len(typed), 3))


async def test_codes_are_read_leniently(client: httpx.AsyncClient, bookable: Services) -> None:
    """Spaces dropped, O as 0, I and L as 1: Berth's references have no O, I or L. The answer
    echoes the code as it was typed."""
    having: dict[str, tuple[dict[str, Any], str]] = {}  # a digit: a party and its code with it
    for _ in range(20):  # references are random: book until two parties have a 0 and a 1
        booking = await party(client, ("adult",))
        codes = (booking["supplierReference"], booking["unitItems"][0]["supplierReference"])
        digit, code = next(((d, c) for d in "01" if d not in having for c in codes if d in c), ("", ""))
        if digit:
            having[digit] = (booking, code)
        if len(having) == 2:
            break
    assert len(having) == 2, "no reference with a 0 and a 1 in 20 bookings"
    for booking, code in having.values():
        typed = misread(code)
        answer = await scan(client, f" {typed} ")
        assert (answer["result"], answer["code"]) == ("ADMITTED", typed), (code, typed)
        assert answer["booking"]["bookingId"] == booking["id"]
    unknown = await scan(client, "61TAO9S5QR")
    assert (unknown["result"], unknown["message"]) == ("UNKNOWN_CODE", "Unknown code: 61TAO9S5QR")
    assert unknown["code"] == "61TAO9S5QR"


@given(st.text(REFERENCE_ALPHABET, min_size=8, max_size=10), st.data())
def test_every_misreading_of_a_reference_reads_back_to_it(reference: str, data: st.DataObject) -> None:
    typed = ""
    for character in reference:
        like = {"0": "0Oo", "1": "1IiLl"}.get(character, character + character.lower())
        typed += data.draw(st.sampled_from(like)) + data.draw(st.sampled_from(["", "", " "]))
    assert readings(typed)[-1].upper() == reference  # references are looked for in any case
    assert readings(reference) == [reference]


def test_what_is_not_a_reference_is_read_as_it_is() -> None:
    assert readings("RES-42") == ["RES-42"]  # a reseller's reference: not Berth's alphabet
    assert readings("res 42") == ["res 42", "RES42"]  # that may be one of Berth's
    url = "https://tickets.example/tickets/aBcOIL_9.pdf"
    assert readings(url) == [url]  # a ticket document's token keeps its case and letters
    assert readings("61tao9s5qr") == ["61tao9s5qr", "61TA09S5QR"]
