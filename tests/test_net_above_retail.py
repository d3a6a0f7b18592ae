"""A contract's net never stands above the retail unseen (issue 47, finding 4), through the admin
API: a contract that lists one is refused naming the entry unless the entry accepts it; a
catalogue save that puts one there is listed by its dry run and refused until staff choose to
sell it at the retail (`capNets`); a sale that meets such a net is sold at the retail; a sale
stored before at a net above retail reads at the retail; and a statement shows a negative
commission only where the contract accepts it. Clock: 2026-06-01T08:00Z.

The scenario of the finding: staff halve the cruise's adult ticket (25.00 -> 12.50 EUR) while
reseller B's price list buys it at 18.75."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select, update

from berth.container import Services
from berth.domain.catalog.document import catalog_to_yaml
from berth.store.tables import bookings
from tests.bookings_helpers import confirm, reservation, reserve
from tests.builders import catalog
from tests.conftest import ADMIN, KEY_B, auth
from tests.test_contracts import connection_id, put_contract
from tests.test_sale_keeps_its_price import halved_products

PRICED = "octo/pricing"
JUNE = "2026-06"


def _list_at(net: int, **entry: Any) -> dict[str, Any]:
    """Reseller B's contract: a price list buying the cruise's adult ticket at `net`."""
    listed = {"product": "thames-sightseeing", "option": "DEFAULT", "unit": "adult", "currency": "EUR"}
    return {"rate": {"netPrices": [{**listed, "net": net, **entry}]}}


def _halved_catalogue() -> str:
    return catalog_to_yaml(catalog(*halved_products()))


async def _sell_two_adults(client: httpx.AsyncClient) -> dict[str, Any]:
    booking = await reserve(
        client, reservation(("adult", "adult"), currency="EUR"), key=KEY_B, **{"Octo-Capabilities": PRICED}
    )
    assert (await confirm(client, booking["uuid"], key=KEY_B)).status_code == 200
    return booking


async def _statement_total(client: httpx.AsyncClient, services: Services) -> dict[str, Any]:
    cid = await connection_id(services, KEY_B)
    response = await client.get(f"/admin/api/connections/{cid}/statements/{JUNE}", headers=ADMIN)
    assert response.status_code == 200, response.text
    totals: list[dict[str, Any]] = response.json()["totals"]
    assert len(totals) == 1
    return totals[0]


async def test_a_contract_net_above_the_retail_is_refused_unless_the_entry_accepts_it(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    refused = await put_contract(client, bookable, KEY_B, _list_at(9999))
    assert refused.status_code == 400, refused.text
    assert refused.json()["problems"] == [
        "rate.netPrices[0].net: EUR 99.99 is above the retail EUR 25.00 of thames-sightseeing / DEFAULT / "
        "adult: lower the net, or set allowAboveRetail: true on the entry to sell at a loss to this reseller"
    ]
    cid = await connection_id(bookable, KEY_B)
    assert (await client.get(f"/admin/api/connections/{cid}/contract", headers=ADMIN)).json()["version"] == 0
    accepted = await put_contract(client, bookable, KEY_B, _list_at(9999, allowAboveRetail=True))
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["contract"]["rate"]["netPrices"][0]["allowAboveRetail"] is True
    booking = await _sell_two_adults(client)
    assert (booking["pricing"]["retail"], booking["pricing"]["net"]) == (5000, 19998)
    # Accepted: the statement shows the loss staff agreed to.
    total = await _statement_total(client, bookable)
    assert (total["retail"], total["net"], total["commission"]) == (5000, 19998, -14998)


async def test_a_catalogue_that_puts_a_net_above_the_retail_is_listed_refused_then_capped(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    assert (await put_contract(client, bookable, KEY_B, _list_at(1875))).status_code == 200
    version = (await bookable.catalog.snapshot()).version
    listed = {
        "connectionId": await connection_id(bookable, KEY_B),
        "connectionName": "Reseller B",
        "entry": "rate.netPrices[0]",
        "productId": "thames-sightseeing",
        "optionId": "DEFAULT",
        "unitId": "adult",
        "currency": "EUR",
        "currencyPrecision": 2,
        "net": 1875,
        "retail": 1250,
        "message": "Reseller B: rate.netPrices[0].net: EUR 18.75 is above the retail EUR 12.50 of "
        "thames-sightseeing / DEFAULT / adult",
    }
    preview = await client.put(
        "/admin/api/catalog", content=_halved_catalogue(), params={"dryRun": "true"}, headers=ADMIN
    )
    assert preview.status_code == 200, preview.text
    assert preview.json()["netsAboveRetail"] == [listed]

    refused = await client.put("/admin/api/catalog", content=_halved_catalogue(), headers=ADMIN)
    assert refused.status_code == 400, refused.text
    assert refused.json()["netsAboveRetail"] == [listed]
    assert refused.json()["errorMessage"] == (
        "The catalogue would put 1 contract net(s) above the retail they apply to (Reseller B: "
        "rate.netPrices[0].net: EUR 18.75 is above the retail EUR 12.50 of thames-sightseeing / DEFAULT / "
        "adult); nothing was imported (netsAboveRetail lists them; capNets=true sells them at the retail)"
    )
    assert (await bookable.catalog.snapshot()).version == version

    capped = await client.put(
        "/admin/api/catalog", content=_halved_catalogue(), params={"capNets": "true"}, headers=ADMIN
    )
    assert capped.status_code == 200, capped.text
    assert capped.json()["imported"] is True and capped.json()["netsAboveRetail"] == [listed]
    # The sale meets the net above retail: sold at the retail, no commission.
    booking = await _sell_two_adults(client)
    assert (booking["pricing"]["retail"], booking["pricing"]["net"]) == (2500, 2500)
    total = await _statement_total(client, bookable)
    assert (total["retail"], total["net"], total["commission"]) == (2500, 2500, 0)
    # The contract is saved again only once the entry is lowered or accepted.
    again = await put_contract(client, bookable, KEY_B, _list_at(1875))
    assert again.status_code == 400 and "rate.netPrices[0].net: EUR 18.75" in again.json()["errorMessage"]
    assert (await put_contract(client, bookable, KEY_B, _list_at(1000))).status_code == 200
    # A later catalogue save does not ask again about a net already above the retail.
    assert (
        await client.put("/admin/api/catalog", content=_halved_catalogue(), headers=ADMIN)
    ).status_code == 200


async def test_a_sale_stored_at_a_net_above_the_retail_reads_at_the_retail(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """A sale made before Berth refused such nets (its lines stored with a net above retail and
    no acceptance) counts at the retail on every answer and on the statement."""
    assert (await put_contract(client, bookable, KEY_B, _list_at(1875))).status_code == 200
    booking = await _sell_two_adults(client)
    async with bookable.database.transaction(write=True) as conn:
        lines = await conn.scalar(select(bookings.c.price_lines).where(bookings.c.uuid == booking["uuid"]))
        legacy = [{**line, "net": 3750} for line in lines]
        await conn.execute(
            update(bookings).where(bookings.c.uuid == booking["uuid"]).values(price_lines=legacy)
        )
    read = await client.get(f"/octo/bookings/{booking['uuid']}", headers=auth(KEY_B, PRICED))
    assert read.status_code == 200, read.text
    assert (read.json()["pricing"]["retail"], read.json()["pricing"]["net"]) == (5000, 5000)
    total = await _statement_total(client, bookable)
    assert (total["retail"], total["net"], total["commission"]) == (5000, 5000, 0)
