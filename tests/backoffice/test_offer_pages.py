"""The Offers page of the back office (issue 51): the list (code or automatic, discount, sale window,
travel dates, channels, live uses of the limit), the YAML editor with the help of every key (each
example a valid offer), a check that saves nothing, saving (refused on a stale version, or with
every problem listed beside the form and the typed text kept), restoring a version; viewers read."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import yaml

from berth.container import Services
from berth.domain.offers import Discount, Offer, OfferText, Target, parse_offers
from berth.domain.staff import Role
from berth.http.admin.pages.offer_help import EXAMPLE, KeyHelp, offer_keys
from tests.backoffice.helpers import csrf_of, notice_of, text_of
from tests.backoffice.test_staff_pages import member, signed_in
from tests.conftest import ADMIN, KEY_A

PATH = "/admin/offers"
OFFERS = """\
offers:
  - id: harbour-ten
    code: HARBOUR10
    texts: {en-GB: {title: Harbour 10}}
    discount: {percent: 10}
    appliesTo: [{product: thames-sightseeing, units: [adult]}]
    saleUntil: 2026-06-30T22:59:00Z
    travelFrom: 2026-06-01
    travelUntil: 2026-09-30
    weekdays: [SAT, SUN]
    maxUses: 500
    maxUsesPerEmail: 2
    channels: [SHOP, {reseller_a}]
  - id: family
    texts: {en-GB: {title: Family deal}}
    discount: {amounts: {EUR: 500, GBP: 400}, per: BOOKING}
    minUnits: 4
    active: false
"""


async def _reseller_a(services: Services) -> str:
    found = await services.connections.authenticate(KEY_A)
    assert found is not None
    return found[0].id


def _form(csrf: str, text: str, action: str = "save", base_version: int = 0) -> dict[str, str]:
    return {"csrf_token": csrf, "base_version": str(base_version), "document": text, "action": action}


async def test_the_page_lists_nothing_yet_and_is_in_the_menu(client: httpx.AsyncClient, csrf: str) -> None:
    shown = await client.get(PATH)
    assert shown.status_code == 200
    assert '<a href="/admin/offers" aria-current="page">Offers</a>' in shown.text
    text = text_of(shown.text)
    assert "Never saved: no offers." in text and "No offers yet." in text
    assert "offers: []" in shown.text and "Save as version 1" in text
    for key in offer_keys():
        assert f"<dt><code>{key.key}</code>" in shown.text
    assert "SHOP : the web shop" in text and "Reseller A" in text  # the channels' ids


async def test_check_then_save_then_list_then_restore(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    document = OFFERS.replace("{reseller_a}", await _reseller_a(office))
    checked = await client.post(PATH, data=_form(csrf, document, "check"))
    assert checked.status_code == 200, text_of(checked.text)
    assert "The offers read well: 2 offers" in text_of(checked.text)
    assert "HARBOUR10" in checked.text and (await office.offers.versions()) == []  # nothing saved
    assert 'data-warn-unsaved="typed"' in checked.text  # what was typed is still unsaved

    saved = await client.post(PATH, data=_form(csrf, document))
    assert saved.status_code == 303 and saved.headers["location"] == PATH
    after = await client.get(PATH)
    assert notice_of(after.text) == "Offers saved as version 1."
    text = text_of(after.text)
    assert (
        "HARBOUR10 harbour-ten Harbour 10 10 % until 30 Jun 2026 23:59 BST"
        " 1 Jun 2026 - 30 Sep 2026, Sat Sun web shop, Reseller A yes 0 of 500; 2 per email"
    ) in text, text
    assert (
        "automatic family Family deal 5.00 EUR, 4.00 GBP per booking any time any date all no (kept, not sold) 0 (no limit)"
        in text
    )
    assert (
        "Version 1, saved 1 Jun 2026 09:00 BST by BERTH_ADMIN_TOKEN (admin): added harbour-ten, added family."
        in text
    )
    unchanged = await client.post(PATH, data=_form(csrf_of(after.text), document, base_version=1))
    assert unchanged.status_code == 303
    assert notice_of((await client.get(PATH)).text) == "Nothing changed: the offers stay at version 1."

    emptied = await client.post(PATH, data=_form(csrf, "offers: []\r\n", base_version=1))
    assert emptied.status_code == 303
    page = await client.get(PATH)
    assert "No offers yet." in text_of(page.text) and "Restore version 1 of the offers?" in page.text
    restored = await client.post(f"{PATH}/versions/1/restore", data={"csrf_token": csrf})
    assert restored.status_code == 303
    page = await client.get(PATH)
    assert notice_of(page.text) == "Version 1 restored as version 3."
    assert "HARBOUR10" in text_of(page.text) and "restored version 1" in text_of(page.text)
    audit = text_of((await client.get("/admin/audit")).text)
    assert "Saved a new version of Offers" in audit and "offers.save" in audit
    missing = await client.post(f"{PATH}/versions/9/restore", data={"csrf_token": csrf})
    assert missing.status_code == 404 and "The offers have no version 9" in text_of(missing.text)


async def test_a_refused_save_lists_every_problem_beside_the_typed_text(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    bad = "offers:\n  - {id: a, code: x, texts: {en-GB: {title: A}}, discount: {percent: 200}}\n"
    refused = await client.post(PATH, data=_form(csrf, bad))
    assert refused.status_code == 400
    text = text_of(refused.text)
    assert "Nothing was saved: 2 problems to fix." in text
    assert "offers.0.code: String should have at least 3 characters" in text
    assert "offers.0.discount.percent: Input should be less than or equal to 100" in text
    assert 'aria-invalid="true" aria-describedby="problems">offers:\n  - {id: a, code: x' in refused.text
    unknown = (
        "offers:\n  - {id: a, texts: {en: {title: A}}, discount: {percent: 5}, appliesTo: [{product: nope}]}"
    )
    for action in ("check", "save"):
        named = await client.post(PATH, data=_form(csrf, unknown, action))
        assert named.status_code == 400 and "product 'nope' is not in the catalogue" in text_of(named.text)
    unreadable = await client.post(PATH, data=_form(csrf, "offers: [\n"))
    assert unreadable.status_code == 400 and "line 2" in text_of(unreadable.text)
    assert (await office.offers.versions()) == []

    # Someone else saves through the API while the page is open on version 0.
    assert (await client.put("/admin/api/offers", content=b"offers: []", headers=ADMIN)).status_code == 200
    mine = "offers:\n  - {id: mine, texts: {en: {title: Mine}}, discount: {percent: 5}}\n"
    stale = await client.post(PATH, data=_form(csrf, mine))
    assert stale.status_code == 409
    assert "saved by someone else since version 0 (the current one is 1)" in text_of(stale.text)
    assert "id: mine" in stale.text and "Save as version 1" in text_of(stale.text)  # kept, on its base
    missing_base = await client.post(PATH, data={"csrf_token": csrf, "document": mine, "action": "save"})
    assert missing_base.status_code == 400 and "which version" in text_of(missing_base.text)
    assert len(await office.offers.versions()) == 1


async def test_viewers_read_the_offers_and_cannot_change_them(
    client: httpx.AsyncClient, office: Services
) -> None:
    document = OFFERS.replace("{reseller_a}", await _reseller_a(office))
    assert (
        await client.put("/admin/api/offers", content=document.encode(), headers=ADMIN)
    ).status_code == 200
    await member(office, "viewer@example.com", Role.VIEWER)
    token = await signed_in(client, "viewer@example.com")
    page = await client.get(PATH)
    text = text_of(page.text)
    assert page.status_code == 200 and "does not allow changing offers" in text and "HARBOUR10" in text
    assert "<textarea" not in page.text and "Restore" not in text
    for path in (PATH, f"{PATH}/versions/1/restore"):
        refused = await client.post(path, data=_form(token, "offers: []"))
        assert refused.status_code == 403, path
    assert len(await office.offers.versions()) == 1


# --- the help ------------------------------------------------------------------------------------

BASE = {"id": "example", "texts": {"en": {"title": "Example"}}, "discount": {"percent": 10}}


def _keys(model: Any) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def test_the_help_describes_every_key() -> None:
    described = {k.key for k in offer_keys()} | {inner for k in offer_keys() for inner in k.also}
    for model in (Offer, Discount, Target, OfferText):
        assert _keys(model) - described == set(), model.__name__


@pytest.mark.parametrize("key", offer_keys(), ids=lambda k: k.key)
def test_each_example_of_the_help_is_a_valid_offer(key: KeyHelp) -> None:
    example = yaml.safe_load(key.example)
    assert set(example) >= {key.key}
    parse_offers({"offers": [{**BASE, **example}]})


def test_the_whole_example_is_a_valid_document() -> None:
    assert len(parse_offers(yaml.safe_load(EXAMPLE)).offers) == 2
