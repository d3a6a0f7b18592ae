"""The guides cover what the product has (issue 32): the reseller guide's capability table and
demo product list name every capability and every demo product, each capability has an example
the docs test runs; the operations guide lists every audit action the back office knows, and
every action the code records; the rate limit is worded alike wherever it is described."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from berth.capabilities import ids
from berth.demo.loader import demo_catalog_text
from berth.http.admin.pages.audit import ACTIONS
from berth.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "reseller-guide.md").read_text(encoding="utf-8")
OPERATIONS = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
CAPABILITIES = {value for name, value in vars(ids).items() if name.isupper() and name != "MAPPINGS_ALIAS"}


def table_rows(text: str, heading: str) -> list[str]:
    """The first cell of each row of the first table after `heading`."""
    after = text[text.index(heading) :]
    rows = re.findall(r"^\| (.+?) \|", after[after.index("\n| ") :].split("\n\n")[0], re.M)
    return rows[2:] if rows and rows[1].startswith("---") else rows[1:]


def test_the_capability_table_names_every_capability_with_a_run_example() -> None:
    table = table_rows(GUIDE, "| Capability | What it adds | Section |")
    assert {row.strip("`") for row in table if row.startswith("`")} == CAPABILITIES
    examples = "\n".join(re.findall(r"```sh\n(.*?)```", GUIDE, re.S))  # what tests/test_docs_examples.py runs
    assert [c for c in sorted(CAPABILITIES) if c not in examples] == []


def test_the_product_list_names_every_demo_product() -> None:
    products = [p["id"] for p in yaml.safe_load(demo_catalog_text())["products"]]
    listed = [row.strip("`") for row in table_rows(GUIDE, "| Product id | What it shows |")]
    assert listed == products
    words = {7: "seven", 8: "eight", 9: "nine", 10: "ten"}
    assert f"sells {words.get(len(products), len(products))} products" in GUIDE


def documented_actions() -> set[str]:
    paragraph = OPERATIONS[OPERATIONS.index("the action, its target and details. Actions:") :].split("\n\n")[
        0
    ]
    found: set[str] = set()
    for kind, verbs in re.findall(r"`([a-z_]+)\.([a-z_|]+)`", paragraph):
        found.update(f"{kind}.{verb}" for verb in verbs.split("|"))
    return found


def test_the_operations_guide_lists_every_audit_action() -> None:
    assert documented_actions() == set(ACTIONS)


def test_every_action_the_code_records_is_named() -> None:
    recorded: set[str] = set()
    for path in (ROOT / "src" / "berth").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if "audit_repo" not in source:  # only what writes the audit trail
            continue
        kinds = (
            "booking|payment|gift|mapping|connection|webhook|delivery|departure|allotment|catalog|offers|staff"
            "|checkin|guessing"
        )
        recorded.update(re.findall(rf"\"((?:{kinds})\.(?!html|yaml|csv|json)[a-z_]+)\"", source))
    assert recorded, "no audit action found in the code: the search above is wrong"
    assert recorded - set(ACTIONS) == set()


def test_the_rate_limit_is_worded_alike() -> None:
    default = Settings.model_fields["rate_limit_per_minute"].default
    settings_doc = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert "per connection, all processes together" in settings_doc
    limits_row = next(line for line in GUIDE.splitlines() if line.startswith("| Requests per connection"))
    assert (
        "all of the supplier's server processes together" in limits_row
        and f"{default} a minute" in limits_row
    )
    ops_row = next(
        line for line in OPERATIONS.splitlines() if "`BERTH_RATE_LIMIT_PER_MINUTE` requests" in line
    )
    assert "a minute from one connection, all processes together" in ops_row
    for text in (GUIDE, OPERATIONS, settings_doc):
        assert "per server process" not in text and "per process" not in text.replace("per process)", "")
