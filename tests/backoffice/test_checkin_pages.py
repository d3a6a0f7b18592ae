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
    missing = await client.get("/admin/checkin/thames-sightseeing/DEFAULT/2026-06-02T11:11:00+01:00")
    assert missing.status_code == 404 and "Not found" in missing.text


async def test_the_scanner_scans_with_its_session(
    client: httpx.AsyncClient, csrf: str, office: Services
) -> None:
    booking = await party(client)
    body = {"code": booking["supplierReference"], "nonce": nonce(), "departure": GATE, "device": "pier"}
    forged = await client.post("/admin/checkin/scan", json=body)
    assert forged.json()["error"] == "UNAUTHORIZED"
    headers = {"X-CSRF-Token": csrf}
    looked = await client.post("/admin/checkin/lookup", json=body, headers=headers)
    assert looked.json()["result"] == "ADMITTED" and looked.json()["booking"]["status"] == "CONFIRMED"
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
