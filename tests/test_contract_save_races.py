"""Saves at once (issue 47, finding 14). Without `baseVersion` a save is made over whatever
version is current: ten at once all win, one after the other, as ten versions. With one, a save
based on a version another save replaced is refused 409 naming the base the client sent and the
version now current. On PostgreSQL, saves without a base were refused 409 naming a base version
the client never sent: each read the current version, and all but the first found it gone when
they wrote. The same holds for the catalogue. (Remove the lock of the connection's row in
`ContractService._save` and the PostgreSQL run fails: docs/decisions.md, issue 47.)"""

from __future__ import annotations

import asyncio

import httpx
import orjson

from berth.container import Services
from tests.conftest import ADMIN, KEY_B
from tests.test_contracts import connection_id

SAVES = 10


async def test_saves_without_a_base_all_win_and_with_one_only_the_first(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    path = f"/admin/api/connections/{await connection_id(bookable, KEY_B)}/contract"
    answers = await asyncio.gather(
        *(client.put(path, content=orjson.dumps({"notes": f"save {n}"}), headers=ADMIN) for n in range(SAVES))
    )
    assert [a.status_code for a in answers] == [200] * SAVES, [
        a.text for a in answers if a.status_code != 200
    ]
    assert sorted(a.json()["version"] for a in answers) == list(range(1, SAVES + 1))
    versions = (await client.get(f"{path}/versions", headers=ADMIN)).json()
    assert [v["version"] for v in versions] == list(range(SAVES, 0, -1))

    based = await asyncio.gather(
        *(
            client.put(path, content=orjson.dumps({"notes": f"based {n}"}), params={"baseVersion": SAVES}, headers=ADMIN)
            for n in range(SAVES)
        )
    )  # fmt: skip
    assert sorted(a.status_code for a in based) == [200] + [409] * (SAVES - 1)
    for refused in (a.json() for a in based if a.status_code == 409):
        assert (refused["error"], refused["baseVersion"], refused["currentVersion"]) == (
            "CONFLICT",
            SAVES,
            SAVES + 1,
        )
        assert refused["errorMessage"].startswith(f"The contract changed since version {SAVES}, ")
    assert (await client.get(path, headers=ADMIN)).json()["version"] == SAVES + 1


async def test_catalogue_saves_without_a_base_all_win(client: httpx.AsyncClient, bookable: Services) -> None:
    exported = await client.get("/admin/api/catalog", headers=ADMIN)
    first = int(exported.headers["Catalog-Version"])
    answers = await asyncio.gather(
        *(client.put("/admin/api/catalog", content=exported.content, headers=ADMIN) for _ in range(SAVES))
    )
    assert [a.status_code for a in answers] == [200] * SAVES, [
        a.text for a in answers if a.status_code != 200
    ]
    assert sorted(a.json()["version"] for a in answers) == list(range(first + 1, first + SAVES + 1))
    based = await asyncio.gather(
        *(
            client.put("/admin/api/catalog", content=exported.content, params={"baseVersion": first + SAVES}, headers=ADMIN)
            for _ in range(SAVES)
        )
    )  # fmt: skip
    assert sorted(a.status_code for a in based) == [200] + [409] * (SAVES - 1)
    for refused in (a.json() for a in based if a.status_code == 409):
        assert (refused["baseVersion"], refused["currentVersion"]) == (first + SAVES, first + SAVES + 1)
