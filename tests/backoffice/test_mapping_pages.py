"""The back office's mappings inbox: every connection's rows (waiting ones first), filtered and
paginated; a row's page with the completion form (validated here, so it works without
scripts), the reseller notified at a real loopback receiver, and each row's notification."""

from __future__ import annotations

import html
import re
from typing import Any

import httpx

from berth.container import Services
from tests.backoffice.helpers import notice_of, sign_in, text_of
from tests.backoffice.test_webhook_pages import connection_id, rows_of
from tests.conftest import ADMIN, KEY_A, KEY_B, SECRET_B, auth
from tests.receivers import receiver
from tests.test_webhooks import drain, verify

# How a mapping reads, its parts joined by a single right-pointing angle quotation mark.
EVENING_ADULT = " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} ".join(
    ("Thames Sightseeing", "evening", "Adult")
)


async def upload(client: httpx.AsyncClient, rows: list[dict[str, Any]], key: str = KEY_B) -> None:
    response = await client.put("/octo/mappings", json=rows, headers=auth(key))
    assert response.status_code == 200, response.text


async def row_id(client: httpx.AsyncClient, reference: str) -> str:
    rows = (await client.get("/admin/api/mappings", params={"limit": 500}, headers=ADMIN)).json()["mappings"]
    found: str = next(r["id"] for r in rows if r["resellerReference"] == reference)
    return found


async def staff_row(client: httpx.AsyncClient, mapping_id: str) -> dict[str, Any]:
    body: dict[str, Any] = (await client.get(f"/admin/api/mappings/{mapping_id}", headers=ADMIN)).json()
    return body


def errors_of(page: str) -> dict[str, str]:
    found = re.findall(r'<p class="field-error" id="(\w+)-error">(.*?)</p>', page)
    return {field: html.unescape(message) for field, message in found}


def selected(page: str, field: str) -> str | None:
    select = re.search(rf'<select id="{field}".*?</select>', page, re.S)
    assert select is not None, f"no {field} list"
    found = re.search(r'<option value="([^"]*)" selected>', select.group(0))
    return found.group(1) if found else None


async def test_without_rows_the_inbox_says_how_resellers_upload_them(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await upload(client, [], key=KEY_A)  # reseller A's rows, removed
    page = await client.get("/admin/mappings")
    assert page.status_code == 200
    assert '<a href="/admin/mappings" aria-current="page">Mappings</a>' in page.text
    text = text_of(page.text)
    assert "No mapping rows yet" in text
    assert "uploading them with PUT http://berth.test/octo/mappings" in text
    assert '"resellerReference": "LST-1"' in text
    assert "mapping row" not in text_of((await client.get("/admin")).text)  # nothing waits


async def test_every_connections_rows_waiting_first_filtered(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    dashboard = text_of((await client.get("/admin")).text)
    assert "2 mapping rows wait for you : map them to a product" in dashboard

    page = await client.get("/admin/mappings")
    assert page.status_code == 200
    assert "Mappings 2 waiting" in text_of(page.text)
    rows = rows_of(page.text, "mappings")
    assert [r.split()[0] for r in rows] == [
        "RA-MUSEUM",
        "RA-KAYAK-SUNSET",
        "RA-THAMES-DAY",
        "RA-THAMES-EVENING-ADULT",
    ]
    assert "WAITING" in rows[0] and "product only" in rows[0] and "Map" in rows[0]
    assert "MAPPED" in rows[3] and EVENING_ADULT in rows[3] and "option, unit" in rows[3]
    assert all("Reseller A" in r for r in rows)
    assert all("none" in r for r in rows)  # reseller A's rows were mapped without notifying anyone

    waiting = rows_of((await client.get("/admin/mappings?show=pending")).text, "mappings")
    assert [r.split()[0] for r in waiting] == ["RA-MUSEUM", "RA-KAYAK-SUNSET"]

    reseller_b = await connection_id(client, "Reseller B")
    empty = await client.get(f"/admin/mappings?connection={reseller_b}")
    assert "Reseller B has uploaded no rows" in text_of(empty.text)
    await upload(client, [{"resellerReference": "B-1", "resellerProduct": "Kayaks"}])
    only_b = await client.get(f"/admin/mappings?connection={reseller_b}")
    assert [r.split()[0] for r in rows_of(only_b.text, "mappings")] == ["B-1"]
    assert f'<option value="{reseller_b}" selected>Reseller B</option>' in only_b.text

    for reference in ("RA-MUSEUM", "RA-KAYAK-SUNSET"):
        patched = await client.patch(
            f"/admin/api/mappings/{await row_id(client, reference)}",
            json={
                "productId": "sunset-kayak",
                **({"optionId": "DEFAULT"} if reference != "RA-MUSEUM" else {}),
            },
            headers=ADMIN,
        )
        assert patched.status_code == 200, patched.text
    reseller_a = await connection_id(client, "Reseller A")
    done = text_of((await client.get(f"/admin/mappings?show=pending&connection={reseller_a}")).text)
    assert "Nothing waits for you Every row of Reseller A is mapped (4 in all)." in done


async def test_the_inbox_paginates_waiting_rows_first(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await upload(client, [{"resellerReference": f"B-{n:02}"} for n in range(30)])
    first = await client.get("/admin/mappings")
    rows = rows_of(first.text, "mappings")
    assert len(rows) == 25 and all("WAITING" in r for r in rows)
    assert "Page 1 of 2" in text_of(first.text)
    second = await client.get("/admin/mappings?page=2")
    references = [r.split()[0] for r in rows_of(second.text, "mappings")]
    # 32 waiting (30 of B, 2 of reseller A's), then the 2 mapped ones.
    assert len(references) == 9
    assert references[-2:] == ["RA-THAMES-DAY", "RA-THAMES-EVENING-ADULT"]
    assert all("WAITING" in r for r in rows_of(second.text, "mappings")[:7])
    beyond = await client.get("/admin/mappings?page=9")
    assert "No rows on this page" in text_of(beyond.text)
    pending_only = await client.get("/admin/mappings?show=pending&page=2")
    assert len(rows_of(pending_only.text, "mappings")) == 7


async def test_complete_a_row_and_the_reseller_is_notified(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    async with receiver() as target:
        await upload(
            client,
            [{"resellerReference": "LST-1", "resellerProduct": "Evening cruise", "unitRequired": True,
              "webhookUrl": target.url}],
        )  # fmt: skip
        mapping_id = await row_id(client, "LST-1")
        inbox = rows_of((await client.get("/admin/mappings")).text, "mappings")
        listed = next(r for r in inbox if r.startswith("LST-1"))
        assert listed.startswith("LST-1 Evening cruise Reseller B") and "WAITING" in listed

        form = await client.get(f"/admin/mappings/{mapping_id}")
        assert form.status_code == 200
        text = text_of(form.text)
        assert "Mapping LST-1 · Reseller B WAITING" in text
        assert "Save and notify the reseller" in text
        assert "None yet. When you map this row" in text
        # Every choice is there, grouped, with values naming the whole path.
        assert '<optgroup label="Thames Sightseeing" data-parent="thames-sightseeing">' in form.text
        assert '<option value="thames-sightseeing/evening/adult">' in form.text
        assert 'data-narrowed-by="option"' in form.text

        done = await client.post(
            f"/admin/mappings/{mapping_id}",
            data={"csrf_token": csrf, "product": "thames-sightseeing", "option": "thames-sightseeing/evening",
                  "unit": "thames-sightseeing/evening/adult"},
        )  # fmt: skip
        assert done.status_code == 303
        assert done.headers["location"] == f"/admin/mappings/{mapping_id}"
        shown = await client.get(done.headers["location"])
        assert notice_of(shown.text) == (
            f"“LST-1” of Reseller B mapped to {EVENING_ADULT}. "
            f"Reseller B will be notified at {target.url}; the notification shows below."
        )
        assert "MAPPED" in text_of(shown.text)
        stored = await staff_row(client, mapping_id)
        assert (stored["productId"], stored["optionId"], stored["unitId"]) == (
            "thames-sightseeing",
            "evening",
            "adult",
        )
        (waiting,) = rows_of(shown.text, "notifications")
        assert "PENDING" in waiting and "not sent yet" in waiting

        await drain(office)
        (received,) = target.requests
        verify(SECRET_B, received)
        assert received.json["unitId"] == "adult" and received.json["optionId"] == "evening"

        page = await client.get(f"/admin/mappings/{mapping_id}")
        (sent,) = rows_of(page.text, "notifications")
        assert "DELIVERED" in sent and "answered 200" in sent
        delivery_id = (await staff_row(client, mapping_id))["notifications"][0]["id"]
        assert f'href="/admin/deliveries/{delivery_id}"' in page.text
        inbox_row = rows_of((await client.get("/admin/mappings")).text, "mappings")
        listed = next(r for r in inbox_row if r.startswith("LST-1"))
        assert "DELIVERED 1 attempt" in listed and "Change" in listed

        delivery = await client.get(f"/admin/deliveries/{delivery_id}")
        assert delivery.status_code == 200
        assert f'<a href="/admin/mappings/{mapping_id}">Mapping LST-1</a>' in delivery.text

        # The same choice again: nothing changes, nobody is notified again.
        again = await client.post(
            f"/admin/mappings/{mapping_id}",
            data={"csrf_token": csrf, "product": "thames-sightseeing", "option": "thames-sightseeing/evening",
                  "unit": "thames-sightseeing/evening/adult"},
        )  # fmt: skip
        notice = notice_of((await client.get(again.headers["location"])).text)
        assert notice is not None and "That was already its mapping: nothing changed" in notice
        await drain(office)
        assert len(target.requests) == 1


async def test_a_row_without_option_or_url_takes_a_product_only(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await upload(client, [{"resellerReference": "MUSEUM", "optionRequired": False}])
    mapping_id = await row_id(client, "MUSEUM")
    form = await client.get(f"/admin/mappings/{mapping_id}")
    assert 'id="option"' not in form.text and 'id="unit"' not in form.text
    assert "Save the mapping" in text_of(form.text)
    assert "None: the row has no webhookUrl" in text_of(form.text)
    # An option sent anyway (a stale form) is ignored: the row stands for the whole product.
    done = await client.post(
        f"/admin/mappings/{mapping_id}",
        data={"csrf_token": csrf, "product": "tower-of-stories", "option": "tower-of-stories/DEFAULT"},
    )
    assert done.status_code == 303
    notice = notice_of((await client.get(done.headers["location"])).text)
    assert notice == (
        "“MUSEUM” of Reseller B mapped to Tower Of Stories. The row has no webhookUrl, so "
        "Reseller B is not notified: it sees the mapping in GET /mappings."
    )
    stored = await staff_row(client, mapping_id)
    assert (stored["productId"], stored["optionId"], stored["notifications"]) == (
        "tower-of-stories",
        None,
        [],
    )


async def test_wrong_choices_are_shown_again_with_what_is_wrong(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await upload(
        client,
        [{"resellerReference": "BOTH", "unitRequired": True, "webhookUrl": "https://reseller-b.example/m"},
         {"resellerReference": "UNIT-ONLY", "optionRequired": False, "unitRequired": True}],
    )  # fmt: skip
    both = await row_id(client, "BOTH")

    async def post(mapping_id: str, **form: str) -> httpx.Response:
        return await client.post(f"/admin/mappings/{mapping_id}", data={"csrf_token": csrf, **form})

    nothing = await post(both)
    assert nothing.status_code == 400
    assert errors_of(nothing.text) == {
        "product": "Choose the product this listing sells.",
        "option": "Choose an option: this listing needs one (its optionRequired is true).",
        "unit": "Choose a unit: this listing needs one (its unitRequired is true).",
    }
    assert "The mapping was not saved: see below." in text_of(nothing.text)

    mismatched = await post(
        both,
        product="sunset-kayak",
        option="thames-sightseeing/evening",
        unit="thames-sightseeing/evening/adult",
    )
    assert mismatched.status_code == 400
    errors = errors_of(mismatched.text)
    assert errors["option"].startswith("“evening” is an option of Thames Sightseeing, not of")
    assert errors["unit"].startswith("“Adult” is a unit of Thames Sightseeing, not of")
    # What was picked stays picked, so it can be corrected.
    assert selected(mismatched.text, "product") == "sunset-kayak"
    assert selected(mismatched.text, "option") == "thames-sightseeing/evening"

    other_option = await post(
        both,
        product="thames-sightseeing",
        option="thames-sightseeing/evening",
        unit="thames-sightseeing/DEFAULT/adult",
    )
    assert other_option.status_code == 400
    assert errors_of(other_option.text) == {
        "unit": "“Adult” is a unit of the option “DEFAULT”, not of “evening”: choose one of its units."
    }

    unknown = await post(both, product="nope", option="nope/DEFAULT", unit="nope/DEFAULT/adult")
    assert unknown.status_code == 400
    assert (
        errors_of(unknown.text)["product"]
        == "'nope' is not a product of the catalogue: choose one from the list."
    )
    assert "That option is not in the catalogue any more" in errors_of(unknown.text)["option"]

    unit_only = await row_id(client, "UNIT-ONLY")
    wrong_unit = await post(unit_only, product="tower-of-stories", unit="thames-sightseeing/adult")
    assert wrong_unit.status_code == 400
    assert errors_of(wrong_unit.text)["unit"].startswith("“Adult” is a unit of Thames Sightseeing")
    right = await post(unit_only, product="tower-of-stories", unit="tower-of-stories/family")
    assert right.status_code == 303

    stored = await staff_row(client, both)
    assert stored["status"] == "PENDING" and stored["productId"] is None


async def test_mapping_forms_need_the_csrf_token_and_a_session(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    await upload(client, [{"resellerReference": "LST-1", "optionRequired": False}])
    mapping_id = await row_id(client, "LST-1")
    path = f"/admin/mappings/{mapping_id}"
    for token in ({}, {"csrf_token": "forged"}, {"csrf_token": csrf[:-1]}):
        refused = await client.post(path, data={"product": "tower-of-stories", **token})
        assert refused.status_code == 403
        assert "Nothing was changed" in text_of(refused.text)
    assert (await staff_row(client, mapping_id))["status"] == "PENDING"
    missing = await client.post(
        "/admin/mappings/nope", data={"csrf_token": csrf, "product": "tower-of-stories"}
    )
    assert missing.status_code == 404
    assert (await client.get("/admin/mappings/nope")).status_code == 404
    client.cookies.clear()
    stranger = await client.post(path, data={"csrf_token": csrf, "product": "tower-of-stories"})
    assert stranger.status_code == 303 and stranger.headers["location"].startswith("/admin/sign-in")
    for page in ("/admin/mappings", path):
        anonymous = await client.get(page)
        assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/admin/sign-in")
    await sign_in(client)
    assert (await staff_row(client, mapping_id))["status"] == "PENDING"
