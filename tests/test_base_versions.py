"""`baseVersion` (issue 47, finding 10): the version a saved document was made from is a whole
number from 0 to 2,147,483,647 (the database's version numbers); anything else is answered
400 BAD_REQUEST naming `baseVersion`, and nothing is saved. `99999999999999999999` answered
500 on a contract save (its 409 body could not hold the number). A base past the current
version is no version the document could have been made from: 400 too, as the catalogue's.
Version numbers in a path keep their decided answer: a number that names no version is 404."""

from __future__ import annotations

import httpx
import orjson
import pytest

from berth.container import Services
from tests.conftest import ADMIN, KEY_B
from tests.test_contracts import connection_id

NOT_VERSIONS = ["99999999999999999999", "2147483648", "-1", "1.5", "abc", ""]


@pytest.mark.parametrize("base", NOT_VERSIONS)
async def test_a_base_version_that_is_no_version_number_is_a_400(
    client: httpx.AsyncClient, bookable: Services, base: str
) -> None:
    cid = await connection_id(bookable, KEY_B)
    contract_path = f"/admin/api/connections/{cid}/contract"
    contract_before = (await client.get(contract_path, headers=ADMIN)).json()
    catalogue_before = await client.get("/admin/api/catalog", headers=ADMIN)
    saves = (
        await client.put(
            contract_path, content=orjson.dumps({"notes": "x"}), params={"baseVersion": base}, headers=ADMIN
        ),
        await client.put(
            "/admin/api/catalog",
            content=catalogue_before.content,
            params={"baseVersion": base},
            headers=ADMIN,
        ),
    )
    for answer in saves:
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "BAD_REQUEST"
        assert answer.json()["errorMessage"].startswith("baseVersion"), answer.text
    assert (await client.get(contract_path, headers=ADMIN)).json() == contract_before
    catalogue_after = await client.get("/admin/api/catalog", headers=ADMIN)
    assert catalogue_after.headers["Catalog-Version"] == catalogue_before.headers["Catalog-Version"]


async def test_a_base_version_past_the_current_one_is_a_400_and_a_stale_one_a_409(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    cid = await connection_id(bookable, KEY_B)
    path = f"/admin/api/connections/{cid}/contract"
    for _ in range(2):
        assert (await client.put(path, content=b"notes: x", headers=ADMIN)).status_code == 200
    ahead = await client.put(path, content=b"notes: y", params={"baseVersion": 3}, headers=ADMIN)
    assert ahead.status_code == 400 and ahead.json()["error"] == "BAD_REQUEST", ahead.text
    assert ahead.json()["errorMessage"] == (
        "baseVersion 3 is not a version of this contract (the current one is 2); nothing was saved"
    )
    stale = await client.put(path, content=b"notes: y", params={"baseVersion": 1}, headers=ADMIN)
    assert stale.status_code == 409, stale.text
    assert (stale.json()["baseVersion"], stale.json()["currentVersion"]) == (1, 2)
    assert (await client.get(path, headers=ADMIN)).json()["version"] == 2


async def test_twenty_digit_versions_in_paths_name_no_version(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    cid = await connection_id(bookable, KEY_B)
    huge = "99999999999999999999"
    for answer in (
        await client.post(f"/admin/api/connections/{cid}/contract/versions/{huge}/restore", headers=ADMIN),
        await client.get(f"/admin/api/catalog/versions/{huge}", headers=ADMIN),
        await client.post(f"/admin/api/catalog/versions/{huge}/restore", headers=ADMIN),
    ):
        assert answer.status_code == 404 and answer.json()["error"] == "NOT_FOUND", answer.text
    listed = await client.get("/admin/api/catalog/versions", params={"before": huge}, headers=ADMIN)
    assert listed.status_code == 200, listed.text
