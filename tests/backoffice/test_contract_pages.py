"""A connection's contract in the back office (issue 37): the form saves what it shows (products
as a checklist, commission, the net price list as a table), a preview shows the reseller's net
before anything is saved, versions can be restored, and viewers only read."""

from __future__ import annotations

import httpx

from berth.container import Services
from berth.domain.staff import Role
from tests.backoffice.helpers import csrf_of, notice_of, text_of
from tests.backoffice.test_staff_pages import member, signed_in
from tests.conftest import KEY_B


async def _connection_id(services: Services) -> str:
    found = await services.connections.authenticate(KEY_B)
    assert found is not None
    return found[0].id


def _form(csrf: str, action: str, **extra: str | list[str]) -> dict[str, str | list[str]]:
    return {
        "csrf_token": csrf,
        "base_version": "0",
        "products": "LIST",
        "product": ["thames-sightseeing"],
        "commission": "20",
        "np_product": ["thames-sightseeing", ""],
        "np_option": ["", ""],
        "np_unit": ["adult", ""],
        "np_currency": ["EUR", ""],
        "np_net": ["1500", ""],
        "np_from": ["", ""],
        "np_until": ["", ""],
        "payment_terms": "PREPAID",
        "sales": "BOX_OFFICE",
        "notes": "Agreed in June",
        "preview": "thames-sightseeing",
        "action": action,
        **extra,
    }


async def test_the_contract_form_previews_then_saves_what_it_shows(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    cid = await _connection_id(office)
    path = f"/admin/connections/{cid}/contract"
    shown = await client.get(path)
    assert shown.status_code == 200 and "Every product" in text_of(shown.text)
    preview = await client.post(path, data=_form(csrf, "preview"))
    assert preview.status_code == 200
    text = text_of(preview.text)
    assert "Preview of unsaved changes" in text
    # adult: retail, the price list's net, the catalogue's; child: the commission's.
    assert "DEFAULT adult 25.00 EUR 15.00 EUR 20.00 EUR" in text
    assert "DEFAULT child 15.00 EUR 12.00 EUR 12.00 EUR" in text
    assert (await office.contracts.get(cid)).contract_version == 0  # a preview saves nothing
    saved = await client.post(path, data=_form(csrf, "save"))
    assert saved.status_code == 303
    after = await client.get(path)
    assert notice_of(after.text) == "Contract of Reseller B saved as version 1."
    contract = (await office.contracts.get(cid)).contract
    assert [g.product for g in contract.products] == ["thames-sightseeing"]  # type: ignore[union-attr]
    assert contract.rate.commission == 20 and contract.rate.net_prices[0].net == 1500
    assert contract.payment_terms.value == "PREPAID" and contract.notes == "Agreed in June"
    assert contract.box_office and "The supplier's own (box office): receipts show the price" in text_of(
        after.text
    )
    stale = await client.post(path, data=_form(csrf_of(after.text), "save"))
    assert stale.status_code == 400 and "changed since version 0" in text_of(stale.text)
    restore = await client.post(f"{path}/versions/1/restore", data={"csrf_token": csrf_of(after.text)})
    assert restore.status_code == 303
    assert (await office.contracts.get(cid)).contract_version == 2


async def test_a_bad_contract_form_names_the_field_and_saves_nothing(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    cid = await _connection_id(office)
    refused = await client.post(
        f"/admin/connections/{cid}/contract", data=_form(csrf, "save", commission="120")
    )
    assert refused.status_code == 400 and "rate.commission" in text_of(refused.text)
    assert (await office.contracts.get(cid)).contract_version == 0


async def test_viewers_read_the_contract_and_cannot_change_it(
    client: httpx.AsyncClient, office: Services
) -> None:
    cid = await _connection_id(office)
    await member(office, "viewer@example.com", Role.VIEWER)
    token = await signed_in(client, "viewer@example.com")
    page = await client.get(f"/admin/connections/{cid}/contract")
    assert page.status_code == 200 and "does not allow changing contracts" in text_of(page.text)
    refused = await client.post(f"/admin/connections/{cid}/contract", data=_form(token, "save"))
    assert refused.status_code == 403
    assert (await office.contracts.get(cid)).contract_version == 0
