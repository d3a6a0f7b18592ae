"""Allotments and stop-sells in the back office (issue 40): the contract form keeps what it does
not show and edits allotments and stop-sells as tables; the manifest lists each block on the
departure with what is used and when it releases, and operators release one early (audited);
the departures page shows each departure's blocks; the admin API lists and releases them.
Clock: 2026-06-01T08:00Z; the cruise's departures hold 20 places; Reseller B's block of 10 on
every 10:00 cruise is released twelve hours before it (the 2 Jun one at 22:00 BST on 1 Jun)."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from berth.container import Services
from berth.domain.allotments import Allotment, StopSell
from berth.domain.staff import COMMAND_LINE, Role
from tests.backoffice.helpers import csrf_of, notice_of, text_of
from tests.backoffice.test_catalog_editor import Fields, form_of, send, with_action
from tests.backoffice.test_pages import manifest_path
from tests.backoffice.test_staff_pages import member, signed_in
from tests.bookings_helpers import SLOT, confirm
from tests.conftest import ADMIN, KEY_A, KEY_B, Clock
from tests.statement_counts import counting
from tests.test_allotments import BLOCK_OF_TEN, TWO_PM, book, seen
from tests.test_contracts import connection_id, put_contract

BLOCKS_API = "/admin/api/departures/thames-sightseeing/DEFAULT/" + quote(SLOT, safe="")
RELEASED_AT = "1 Jun 2026 22:00 BST"
WITH_BOTH = {
    "products": [{"product": "thames-sightseeing"}, {"product": "sunset-kayak"}],
    "rate": {"commission": "12.5"},
    "allotments": [
        {"product": "thames-sightseeing", "option": "DEFAULT", "from": "2026-06-01", "until": "2026-09-30",
         "weekdays": ["TUE", "SAT"], "startTimes": ["10:00"], "places": 10, "releaseHours": 48},
        {"product": "sunset-kayak", "places": 2, "releaseHours": 0},
    ],
    "stopSells": [
        {"product": "sunset-kayak", "from": "2026-07-01", "reason": "unpaid invoice 42"},
        {"until": "2026-06-03"},
    ],
    "notes": "Agreed in June",
}  # fmt: skip


def filled(fields: Fields, values: dict[str, str]) -> Fields:
    """The form with each named field's first blank cell (a new row) filled in."""
    left = dict(values)
    done: Fields = []
    for name, value in fields:
        if name in left and value == "":
            done.append((name, left.pop(name)))
        else:
            done.append((name, value))
    assert not left, f"no blank cell for {sorted(left)}"
    return done


async def contract_page(client: httpx.AsyncClient, services: Services) -> tuple[str, str]:
    path = f"/admin/connections/{await connection_id(services, KEY_B)}/contract"
    page = await client.get(path)
    assert page.status_code == 200, page.text
    return path, page.text


async def test_saving_the_contract_page_unchanged_keeps_its_allotments_and_stop_sells(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    assert (await put_contract(client, office, KEY_B, WITH_BOTH)).status_code == 200
    cid = await connection_id(office, KEY_B)
    before = (await office.contracts.get(cid)).contract
    path, page = await contract_page(client, office)
    text = text_of(page)
    assert (  # with its dates and days (issue 49 §4: they were left out)
        "Allotments 10 places on thames-sightseeing (DEFAULT) from 2026-06-01 until 2026-09-30 on TUE SAT"
        " at 10:00, released 48 h before" in text
    ), text
    assert (
        "Stop-sells sunset-kayak from 2026-07-01: unpaid invoice 42; Every product until 2026-06-03" in text
    )
    saved = await send(client, path, with_action(form_of(page, "contract-form"), "save"))
    assert saved.status_code == 303, text_of(saved.text)
    after = await office.contracts.get(cid)
    assert after.contract.to_document() == before.to_document()
    assert after.contract_version == 1  # nothing to store: no new version
    notice = notice_of((await client.get(path)).text)
    assert notice == "Nothing changed: the contract of Reseller B stays at version 1."
    # A form that does not send a table (one that does not show it) leaves it as it is.
    _, page = await contract_page(client, office)
    shown = [(n, v) for n, v in form_of(page, "contract-form") if not n.startswith(("al_", "ss_"))]
    shown = [(n, "Renewed" if n == "notes" else v) for n, v in shown]
    assert (await send(client, path, with_action(shown, "save"))).status_code == 303
    kept = (await office.contracts.get(cid)).contract
    assert kept.allotments == before.allotments and kept.stop_sells == before.stop_sells
    assert kept.notes == "Renewed"


async def test_an_allotment_and_a_stop_sell_added_through_the_form_are_stored(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    path, page = await contract_page(client, office)
    fields = filled(
        form_of(page, "contract-form"),
        {"al_product": "thames-sightseeing", "al_option": "DEFAULT", "al_weekdays": "tue, sat",
         "al_start_times": "10:00", "al_places": "10", "al_release_hours": "48",
         "ss_product": "*", "ss_from": "2026-08-01", "ss_reason": "dispute"},
    )  # fmt: skip
    saved = await send(client, path, with_action(fields, "save"))
    assert saved.status_code == 303, text_of(saved.text)
    contract = (await office.contracts.get(await connection_id(office, KEY_B))).contract
    assert contract.allotments == (
        Allotment.model_validate(
            {"product": "thames-sightseeing", "option": "DEFAULT", "weekdays": ["TUE", "SAT"],
             "startTimes": ["10:00"], "places": 10, "releaseHours": 48}
        ),
    )  # fmt: skip
    assert contract.stop_sells == (StopSell.model_validate({"from": "2026-08-01", "reason": "dispute"}),)
    # Shown again as rows (a stop-sell of every product as `*`), and a preview keeps them.
    _, page = await contract_page(client, office)
    fields = form_of(page, "contract-form")
    assert ("al_weekdays", "TUE SAT") in fields and ("ss_product", "*") in fields
    assert "al_places" in dict(fields) and "contract-form" in page


async def test_a_bad_allotment_row_is_refused_naming_its_field_and_saves_nothing(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    path, page = await contract_page(client, office)
    blank = form_of(page, "contract-form")
    for values, named in (
        ({"al_product": "thames-sightseeing", "al_places": "ten", "al_release_hours": "48"}, "allotments[0].places"),
        ({"al_product": "thames-sightseeing", "al_places": "4"}, "allotments[0].releaseHours"),
        ({"al_product": "thames-sightseeing", "al_weekdays": "Tuesday", "al_places": "4", "al_release_hours": "1"}, "allotments[0].weekdays"),
        ({"al_product": "no-such", "al_places": "4", "al_release_hours": "1"}, "allotments[0].product"),
        ({"ss_option": "DEFAULT"}, "stopSells[0]"),
    ):  # fmt: skip
        refused = await send(client, path, with_action(filled(blank, values), "save"))
        assert refused.status_code == 400 and named in text_of(refused.text), (named, text_of(refused.text))
    assert (await office.contracts.get(await connection_id(office, KEY_B))).contract_version == 0


async def booked_on_the_block(client: httpx.AsyncClient, services: Services) -> None:
    assert (await put_contract(client, services, KEY_B, BLOCK_OF_TEN)).status_code == 200
    held = await book(client, KEY_B, 3)
    assert (await confirm(client, held.json()["uuid"], KEY_B)).status_code == 200


def blocks_of(page: str) -> str:
    found = re.search(r'<section class="card blocks-card">(.*?)</section>', page, re.S)
    assert found is not None, "the manifest has no Blocks section"
    return text_of(found.group(1))


async def test_the_manifest_shows_each_block_and_an_operator_releases_one_early(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    await booked_on_the_block(client, office)
    page = (await client.get(manifest_path(SLOT))).text
    assert (
        "Connection Places Used Unused Release State Actions "
        f"Reseller B 10 3 7 {RELEASED_AT} held Release now"
    ) in blocks_of(page)
    # Release now asks first (backoffice.js confirms a form's data-confirm)
    assert "data-confirm=\"Release Reseller B's 7 unused places to general sale now?" in page, blocks_of(page)
    assert (await seen(client, KEY_A))["vacancies"] == 10  # 20 - 3 held - B's 7 unused
    path = manifest_path(SLOT) + "/blocks/" + await connection_id(office, KEY_B) + "/release"
    released = await client.post(path, data={"csrf_token": csrf})
    assert released.status_code == 303 and released.headers["location"] == manifest_path(SLOT)
    page = (await client.get(manifest_path(SLOT))).text
    assert notice_of(page) == (
        "Reseller B's block on Thames Sightseeing · Tue 2 Jun 2026 10:00 BST released: its unused "
        "places are back on general sale."
    )
    # when staff released it, in the supplier's time (issue 49 §4: it did not say)
    assert re.search(
        rf"Reseller B 10 3 0 {RELEASED_AT} released early \d{{1,2}} Jun 2026 \d\d:\d\d BST", blocks_of(page)
    ), blocks_of(page)
    assert "Release now" not in blocks_of(page)
    assert (await seen(client, KEY_A))["vacancies"] == 17
    entries = (await client.get("/admin/api/audit", headers=ADMIN)).json()["entries"]
    release = next(e for e in entries if e["action"] == "allotment.release")
    assert release["target"] == {
        "kind": "connection", "id": await connection_id(office, KEY_B), "label": "Reseller B"
    }  # fmt: skip
    again = await client.post(path, data={"csrf_token": csrf_of(page)})
    assert notice_of((await client.get(again.headers["location"])).text) == (
        "Not released: Reseller B's block on Thames Sightseeing · Tue 2 Jun 2026 10:00 BST is released already."
    )
    none = await client.post(
        manifest_path(TWO_PM) + "/blocks/" + await connection_id(office, KEY_B) + "/release",
        data={"csrf_token": csrf_of(page)},
    )
    assert "has no block" in (notice_of((await client.get(none.headers["location"])).text) or "")


async def test_a_block_released_at_its_time_and_a_viewer_cannot_release(
    client: httpx.AsyncClient, office: Services, clock: Clock
) -> None:
    await booked_on_the_block(client, office)
    await member(office, "viewer@example.com", Role.VIEWER)
    token = await signed_in(client, "viewer@example.com")
    page = (await client.get(manifest_path(SLOT))).text
    assert f"Reseller B 10 3 7 {RELEASED_AT} held" in blocks_of(page)
    assert "Release now" not in page and "does not allow releasing blocks" in blocks_of(page)
    path = manifest_path(SLOT) + "/blocks/" + await connection_id(office, KEY_B) + "/release"
    assert (await client.post(path, data={"csrf_token": token})).status_code == 403
    clock.advance(hours=13)  # past 21:00Z
    await signed_in(client, "viewer@example.com")  # the session has run out meanwhile
    page = (await client.get(manifest_path(SLOT))).text
    assert f"Reseller B 10 3 0 {RELEASED_AT} released at its time" in blocks_of(page)


async def test_the_departures_page_shows_each_departures_blocks_read_at_once(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    await booked_on_the_block(client, office)
    path = "/admin/departures?product=thames-sightseeing&option=DEFAULT&month=2026-06"
    with counting(office.database) as sent:
        page = await client.get(path)
    assert page.status_code == 200
    # The month's thirty 10:00 departures: their releases read with one query.
    assert sent.kinds().count("SELECT allotment_releases") == 1, sent.kinds()

    def row(availability_id: str) -> str:
        found = re.search(rf'<tr data-availability="{re.escape(availability_id)}".*?</tr>', page.text, re.S)
        assert found is not None, availability_id
        return text_of(found.group(0))

    assert f"3/20 Reseller B 3/10 · releases {RELEASED_AT}" in row(SLOT)
    assert "Reseller B 0/10 · released 31 May 2026 22:00 BST" in row("2026-06-01T10:00:00+01:00")
    assert "Reseller B" not in row(TWO_PM)
    catalog = (await office.catalog.snapshot()).catalog
    d = await office.departures.get(catalog, "thames-sightseeing", "DEFAULT", SLOT)
    b = await connection_id(office, KEY_B)
    assert await office.allotments.release_early(d.product, d.option, d.slot, b, actor=COMMAND_LINE)
    again = (await client.get(path)).text
    found = re.search(rf'<tr data-availability="{re.escape(SLOT)}".*?</tr>', again, re.S)
    assert found is not None and "Reseller B 3/10 · released early" in text_of(found.group(0))


async def test_the_admin_api_lists_and_releases_blocks(client: httpx.AsyncClient, office: Services) -> None:
    await booked_on_the_block(client, office)
    b = await connection_id(office, KEY_B)
    listed = await client.get(BLOCKS_API + "/blocks", headers=ADMIN)
    assert listed.status_code == 200
    assert listed.json() == [
        {"connectionId": b, "connectionName": "Reseller B", "places": 10, "used": 3, "unused": 7,
         "releaseAt": "2026-06-01T21:00:00Z", "released": False, "releasedEarly": False}
    ]  # fmt: skip
    two_pm = BLOCKS_API.replace(quote(SLOT, safe=""), quote(TWO_PM, safe=""))
    none = await client.get(two_pm + "/blocks", headers=ADMIN)
    assert none.status_code == 200 and none.json() == []
    released = await client.post(f"{BLOCKS_API}/blocks/{b}/release", headers=ADMIN)
    assert released.status_code == 200, released.text
    assert released.json() == listed.json()[0] | {"unused": 0, "released": True, "releasedEarly": True}
    again = await client.post(f"{BLOCKS_API}/blocks/{b}/release", headers=ADMIN)
    assert again.status_code == 409 and again.json()["error"] == "CONFLICT", again.text
    assert "released already" in again.json()["errorMessage"]
    a = await connection_id(office, KEY_A)
    unknown = await client.post(f"{BLOCKS_API}/blocks/{a}/release", headers=ADMIN)
    assert unknown.status_code == 404 and unknown.json()["error"] == "NOT_FOUND", unknown.text
    entries = (await client.get("/admin/api/audit", headers=ADMIN)).json()["entries"]
    assert [e["target"]["id"] for e in entries if e["action"] == "allotment.release"] == [b]
