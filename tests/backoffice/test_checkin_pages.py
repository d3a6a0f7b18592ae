"""The gate scanner's pages and the JSON routes its script calls: the session cookie with its
CSRF token in a header, UNAUTHORIZED once the session is gone, and what makes it an
installable web app."""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from berth.container import Services
from tests.backoffice.helpers import text_of
from tests.bookings_helpers import SLOT
from tests.checkin_helpers import GATE, nonce, party

SCANNER = f"/admin/checkin/thames-sightseeing/DEFAULT/{quote(SLOT, safe='')}"


async def test_the_departures_and_the_scanner_page(client: httpx.AsyncClient, csrf: str) -> None:
    listed = await client.get("/admin/checkin")
    assert listed.status_code == 200
    assert "Pick the departure you are admitting guests to" in text_of(listed.text)
    scanner = await client.get(SCANNER)
    assert scanner.status_code == 200
    assert f'data-csrf="{csrf}"' in scanner.text and 'data-may-admit="yes"' in scanner.text
    assert '<link rel="manifest" href="/admin/checkin/app.webmanifest">' in scanner.text
    assert "/admin/static/zxing.js?v=" in scanner.text
    decoder = re.search(r'data-decoder="(/admin/static/zxing_reader\.wasm\?v=[0-9a-f]+)"', scanner.text)
    assert decoder is not None
    wasm = await client.get(decoder.group(1))
    assert wasm.headers["content-type"] == "application/wasm" and wasm.content.startswith(b"\0asm")
    # Only the scanner may compile WebAssembly; no page may eval JavaScript.
    assert "script-src 'self' 'wasm-unsafe-eval'" in scanner.headers["content-security-policy"]
    assert "wasm-unsafe-eval" not in listed.headers["content-security-policy"]
    assert "unsafe-eval'" not in scanner.headers["content-security-policy"].replace("'wasm-unsafe-eval'", "")
    assert 'data-zone="Europe/London"' in scanner.text  # the departure's clock, for the times shown
    assert (
        '<a class="gate-back" href="/admin/checkin?product=thames-sightseeing&amp;date=2026-06-02">'
        in scanner.text
    )
    missing = await client.get("/admin/checkin/thames-sightseeing/DEFAULT/2026-06-02T11:11:00+01:00")
    assert missing.status_code == 404 and "Not found" in missing.text


async def test_the_departure_list_has_a_product_filter_and_any_date(
    client: httpx.AsyncClient, csrf: str
) -> None:
    """Today first, then tomorrow; a product and a date to pick (the clock: 1 Jun 2026, 09:00 BST)."""
    listed = await client.get("/admin/checkin")
    assert '<input id="gate-date" name="date" type="date" value="2026-06-01">' in listed.text
    assert '<option value="">All products</option>' in listed.text
    assert '<option value="sunset-kayak">' in listed.text
    text = text_of(listed.text)
    assert text.index("Today Mon 1 Jun 2026") < text.index("Tomorrow Tue 2 Jun 2026")
    assert (
        "/admin/checkin/tower-of-stories/" in listed.text
        and "/admin/checkin/thames-sightseeing/" in listed.text
    )

    cruise = await client.get(
        "/admin/checkin", params={"product": "thames-sightseeing", "date": "2026-09-15"}
    )
    assert '<option value="thames-sightseeing" selected>' in cruise.text
    assert "/admin/checkin/tower-of-stories/" not in cruise.text
    text = text_of(cruise.text)
    assert (
        "Tue 15 Sep 2026" in text and "Wed 16 Sep 2026" in text and "Today" not in text.split("Day after")[1]
    )
    assert "/admin/checkin/thames-sightseeing/DEFAULT/2026-09-15T10%3A00%3A00%2B01%3A00" in cruise.text
    assert 'href="/admin/checkin?product=thames-sightseeing&amp;date=2026-09-14" rel="prev"' in cruise.text
    assert 'href="/admin/checkin?product=thames-sightseeing&amp;date=2026-09-16" rel="next"' in cruise.text
    assert 'href="/admin/checkin?product=thames-sightseeing&amp;date=2026-06-01">Today</a>' in cruise.text

    for nonsense in ("tomorrow", "0001-01-01", "2026-02-30"):
        odd = await client.get("/admin/checkin", params={"date": nonsense, "product": "nope"})
        assert odd.status_code == 200
        assert 'type="date" value="2026-06-01"' in odd.text and "Today Mon 1 Jun 2026" in text_of(odd.text)


async def test_the_scanner_scans_with_its_session(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booking = await party(client)
    # The day before the departure (the clock's 1 June): staff admit anyway.
    body = {"code": booking["supplierReference"], "nonce": nonce(), "departure": GATE, "device": "pier"}
    body["admitAnotherDay"] = True
    forged = await client.post("/admin/checkin/scan", json=body)
    assert forged.json()["error"] == "UNAUTHORIZED"
    headers = {"X-CSRF-Token": csrf}
    looked = await client.post("/admin/checkin/lookup", json=body, headers=headers)
    assert looked.json()["result"] == "VALID" and looked.json()["booking"]["status"] == "CONFIRMED"
    admitted = await client.post("/admin/checkin/scan", json=body, headers=headers)
    assert admitted.status_code == 200, admitted.text
    assert admitted.json()["result"] == "ADMITTED"
    kept = (await client.get("/admin/checkin/departure", params=GATE)).json()
    assert (kept["admitted"], kept["expected"]) == (2, 2)
    undone = await client.post("/admin/checkin/undo", json={"nonce": body["nonce"]}, headers=headers)
    assert undone.json()["booking"]["status"] == "CONFIRMED"
    bad = await client.post("/admin/checkin/scan", json={**body, "code": " "}, headers=headers)
    assert bad.status_code == 400 and bad.json()["error"] == "BAD_REQUEST"

    signed_out = await client.post("/admin/sign-out", data={"csrf_token": csrf})
    assert signed_out.headers["clear-site-data"] == '"cache", "storage"'
    gone = await client.post("/admin/checkin/scan", json={**body, "nonce": nonce()}, headers=headers)
    assert gone.json()["error"] == "UNAUTHORIZED" and "Sign in" in gone.json()["errorMessage"]
    assert (await client.get("/admin/checkin/departure", params=GATE)).json()["error"] == "UNAUTHORIZED"


async def test_the_scanner_installs_and_works_offline(client: httpx.AsyncClient, csrf: str) -> None:
    manifest = (await client.get("/admin/checkin/app.webmanifest")).json()
    assert manifest["start_url"] == manifest["scope"] == "/admin/checkin" and manifest["icons"]
    assert [i["sizes"] for i in manifest["icons"]] == ["192x192", "512x512", "any"]
    png = await client.get(manifest["icons"][0]["src"])
    assert png.headers["content-type"] == "image/png" and png.content.startswith(b"\x89PNG\r\n\x1a\n")
    assert (await client.get(manifest["icons"][2]["src"])).headers["content-type"] == "image/svg+xml"
    missing = await client.get("/admin/checkin/icon-100.png")
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"
    worker = await client.get("/admin/checkin/sw.js")
    assert worker.headers["service-worker-allowed"] == "/admin/checkin"
    assert worker.text.startswith('const SHELL = ["/admin/static/backoffice.css?v=')
    assert "/admin/static/zxing.js?v=" in worker.text and 'addEventListener("fetch"' in worker.text
    assert "/admin/static/zxing_reader.wasm?v=" in worker.text  # the camera reads offline too
