"""YAML anchors and aliases are refused wherever Berth reads YAML (issue 47): an alias is
composed as a node shared by each use and was built out as a copy at each one, so a body of
a few hundred bytes (ten levels of ten aliases) stalled a process for seconds and ended in
MemoryError, and a "billion laughs" grew one past 3.8 GB. Now the first anchor or alias stops
the reading, before anything is built: 400 BAD_REQUEST saying why, nothing saved."""

from __future__ import annotations

import httpx
import pytest

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.domain.catalog.document import ALIASES_REFUSED, CatalogFileError, parse_catalog, read_yaml, to_yaml
from tests.conftest import ADMIN, KEY_B
from tests.test_contracts import connection_id


def nested_aliases(levels: int, uses: int) -> str:
    """`levels` lists of `uses` aliases of the list before: uses**levels values built out."""
    lines = [f"a0: &a0 [{', '.join(['x'] * uses)}]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * uses)}]")
    return "\n".join(lines) + "\n"


TEN_BY_TEN = nested_aliases(10, 10)  # 10**10 strings once built
BILLION_LAUGHS = 'lol: &lol "lol"\n' + nested_aliases(9, 10).replace("[x", "[*lol").replace(", x", ", *lol")
# An anchor nobody refers to, and a merge key (`<<`, an alias too).
ANCHOR_ONLY = "supplier: &s {id: acme, name: Acme}\n"
MERGE_KEY = "base: &base {places: 2}\nallotments: [{<<: *base, product: p, releaseHours: 1}]\n"


def test_the_bodies_are_small() -> None:
    assert len(TEN_BY_TEN.encode()) < 600 and len(BILLION_LAUGHS.encode()) < 600


@pytest.mark.parametrize("text", [TEN_BY_TEN, BILLION_LAUGHS, ANCHOR_ONLY, MERGE_KEY])
def test_the_first_anchor_or_alias_is_a_problem_before_anything_is_built(text: str) -> None:
    for read in (read_yaml, lambda t: parse_catalog(t, CATALOG_RULES)):
        with pytest.raises(CatalogFileError) as raised:
            read(text)
        [problem] = raised.value.problems
        assert problem.message == ALIASES_REFUSED
        assert problem.line == 1


async def test_put_contract_and_put_catalogue_answer_400_and_save_nothing(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    cid = await connection_id(bookable, KEY_B)
    contract_path = f"/admin/api/connections/{cid}/contract"
    contract_before = (await client.get(contract_path, headers=ADMIN)).json()
    catalogue_before = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    for body in (TEN_BY_TEN, BILLION_LAUGHS, MERGE_KEY):
        contract = await client.put(contract_path, content=body.encode(), headers=ADMIN)
        assert contract.status_code == 400, contract.text
        assert contract.json()["error"] == "BAD_REQUEST"
        assert ALIASES_REFUSED in contract.json()["errorMessage"]
        catalogue = await client.put("/admin/api/catalog", content=body.encode(), headers=ADMIN)
        assert catalogue.status_code == 400, catalogue.text
        assert catalogue.json()["error"] == "BAD_REQUEST"
        assert [p["message"] for p in catalogue.json()["problems"]] == [ALIASES_REFUSED]
    assert (await client.get(contract_path, headers=ADMIN)).json() == contract_before
    assert (await client.get("/admin/api/catalog", headers=ADMIN)).text == catalogue_before


def test_what_berth_writes_has_no_aliases_and_reads_back() -> None:
    """A list or mapping used twice in a document is written out twice (PyYAML's own dumper
    wrote `&id001` / `*id001`, which Berth would now refuse to read back)."""
    shared = {"startTimes": ["10:00"], "capacity": 12}
    document = {"options": [{"schedules": [shared]}, {"schedules": [shared]}]}
    text = to_yaml(document)
    assert "&" not in text and "*" not in text
    assert read_yaml(text) == document
