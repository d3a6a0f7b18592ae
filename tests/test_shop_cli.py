"""`berth shop open` as a subprocess: it makes the web shop's connection with its contract
(at retail, the supplier's own sale, paid by card) once; again, it changes nothing."""

from __future__ import annotations

import json
import re

import yaml

from tests.berth_process import berth


def test_shop_open_makes_the_shops_connection_once(database_url: str) -> None:
    assert berth("db", "upgrade", database_url=database_url).returncode == 0
    opened = berth("shop", "open", database_url=database_url, BERTH_PUBLIC_URL="https://book.example.com")
    assert opened.returncode == 0, opened.stderr
    said = " ".join(opened.stdout.split())
    assert "guests book at https://book.example.com/shop" in said
    found = re.search(r"connection Web shop \(([0-9a-f-]{36})\)", said)
    assert found is not None
    again = berth("shop", "open", "--name", "Another name", database_url=database_url)
    assert again.returncode == 0 and found.group(1) in " ".join(again.stdout.split())
    listed = json.loads(berth("connection", "list", "--json", database_url=database_url).stdout)
    assert [c["name"] for c in listed] == ["Web shop"]
    contract = yaml.safe_load(
        berth("connection", "contract", "show", found.group(1), database_url=database_url).stdout
    )
    assert contract["rate"] == {"commission": "0"} and contract["boxOffice"] is True  # a decimal, as written
    assert contract["takesPayment"] is True
