"""Nets above the retail and contract validity in the back office (issue 47, findings 4 and 9):
the contract form's preview lists every net of its price list above the retail it applies to
and its save is refused naming the entry until the row accepts it; the catalogue editor's
preview lists every contract whose net a change puts above the new retail and refuses the save
until staff tick that those are sold at the retail; a contract ending before it starts is
refused naming both dates."""

from __future__ import annotations

import httpx

from berth.container import Services
from tests.backoffice.helpers import notice_of, text_of
from tests.backoffice.test_catalog_editor import editing, form_of, replaced, send, with_action
from tests.backoffice.test_contract_pages import _connection_id, _form
from tests.test_contracts import put_contract

__all__ = ["editing"]  # the catalogue editor's fixture, used here

ABOVE = (
    "rate.netPrices[0].net: EUR 99.99 is above the retail EUR 25.00 of thames-sightseeing / DEFAULT / adult"
)


async def test_the_contract_form_lists_nets_above_the_retail_and_saves_them_only_accepted(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    cid = await _connection_id(office)
    path = f"/admin/connections/{cid}/contract"
    high = {"np_net": ["9999", ""], "np_option": ["DEFAULT", ""]}
    preview = await client.post(path, data=_form(csrf, "preview", **high))
    assert preview.status_code == 200, text_of(preview.text)
    text = text_of(preview.text)
    assert f"1 net of the price list stands above the retail it applies to: {ABOVE}" in text
    assert "Saving is refused until each is lowered, or its loss accepted" in text

    refused = await client.post(path, data=_form(csrf, "save", **high))
    assert refused.status_code == 400
    assert ABOVE + ": lower the net, or set allowAboveRetail: true" in text_of(refused.text)
    assert (await office.contracts.get(cid)).contract_version == 0

    accepted = await client.post(path, data=_form(csrf, "save", **high, np_allowAboveRetail=["true", ""]))
    assert accepted.status_code == 303, text_of(accepted.text)
    entry = (await office.contracts.get(cid)).contract.rate.net_prices[0]
    assert (entry.net, entry.allow_above_retail) == (9999, True)
    shown = await client.get(path)
    assert 'id="above-retail"' not in shown.text  # accepted: nothing to warn about
    assert '<option value="true" selected>accept</option>' in shown.text


async def test_a_contract_form_ending_before_it_starts_names_both_dates(
    client: httpx.AsyncClient, office: Services, csrf: str
) -> None:
    cid = await _connection_id(office)
    refused = await client.post(
        f"/admin/connections/{cid}/contract",
        data=_form(csrf, "save", valid_from="2026-12-31", valid_until="2026-01-01"),
    )
    assert refused.status_code == 400, refused.text
    assert "validUntil: 2026-01-01 is before validFrom 2026-12-31" in text_of(refused.text)
    assert (await office.contracts.get(cid)).contract_version == 0


async def test_the_catalogue_editor_lists_contracts_a_lower_retail_puts_above_it_and_saves_by_choice(
    client: httpx.AsyncClient, editing: Services
) -> None:
    listed = {"product": "thames-sightseeing", "option": "DEFAULT", "unit": "adult", "currency": "EUR"}
    saved = await put_contract(
        client, editing, "demo-reseller-b", {"rate": {"netPrices": [{**listed, "net": 1875}]}}
    )
    assert saved.status_code == 200, saved.text
    before = (await editing.catalog.snapshot()).version
    path = "/admin/catalog/thames-sightseeing/edit"
    fields = form_of((await client.get(path)).text)
    retail = next(n for n, v in fields if n.endswith(".prices.0.retail") and v == "25.00")
    halved = replaced(replaced(fields, retail, "12.50"), retail.replace(".retail", ".net"), "10.00")
    halved = replaced(halved, retail.replace(".retail", ".tax.rate"), "20")
    line = (
        "Reseller B: rate.netPrices[0].net: EUR 18.75 is above the retail EUR 12.50 of "
        "thames-sightseeing / DEFAULT / adult"
    )

    preview = await send(client, path, with_action(halved, "preview"))
    assert preview.status_code == 200, text_of(preview.text)[:3000]
    shown = text_of(preview.text)
    assert "Contract nets this puts above the retail they apply to (1): saved only if you choose" in shown
    assert line in shown

    refused = await send(client, path, with_action(halved, "save"))
    assert refused.status_code == 409, text_of(refused.text)[:3000]
    text = text_of(refused.text)
    assert "Not saved: these contracts' nets would stand above the retail they apply to." in text
    assert line in text and 'name="cap_nets"' in refused.text
    assert (await editing.catalog.snapshot()).version == before

    capped = await send(client, path, with_action([*halved, ("cap_nets", "1")], "save"))
    assert capped.status_code == 303, text_of(capped.text)[:3000]
    assert notice_of((await client.get(capped.headers["location"])).text) == (
        f"Saved as catalogue version {before + 1}."
    )
    contract_page = await client.get(f"/admin/connections/{saved.json()['connectionId']}/contract")
    assert (
        f"1 net of the price list stands above the retail it applies to: {line[len('Reseller B: ') :]}"
        in (text_of(contract_page.text))
    )
    assert "They are sold at the retail (no commission)" in text_of(contract_page.text)
