"""octo/webhooks is a capability like the others (issue 17): listed, echoed, kept on webhooks.
The /webhooks routes answer with or without it (docs/decisions.md)."""

from __future__ import annotations

import httpx

from berth.container import Services
from tests.conftest import auth

WEBHOOKS = "octo/webhooks"


async def test_listed_among_the_capabilities(client: httpx.AsyncClient, bookable: Services) -> None:
    listed = (await client.get("/octo/capabilities", headers=auth())).json()
    [entry] = [c for c in listed if c["id"] == WEBHOOKS]
    assert entry == {
        "id": WEBHOOKS,
        "revision": 1,
        "required": False,
        "dependencies": [],
        "docs": "https://docs.ventrata.com/capabilities/webhooks",
    }


async def test_echoed_in_the_answer_header(client: httpx.AsyncClient, bookable: Services) -> None:
    for method, path in (("GET", "/octo/webhooks"), ("GET", "/octo/products"), ("GET", "/octo/supplier")):
        response = await client.request(method, path, headers=auth(capabilities=WEBHOOKS))
        assert response.status_code == 200
        assert response.headers["Octo-Capabilities"] == WEBHOOKS
    both = await client.get("/octo/webhooks", headers=auth(capabilities=f"{WEBHOOKS}, octo/pricing"))
    assert both.headers["Octo-Capabilities"] == f"octo/pricing, {WEBHOOKS}"


async def test_kept_in_the_webhooks_capabilities(client: httpx.AsyncClient, bookable: Services) -> None:
    created = await client.post(
        "/octo/webhooks",
        json={"event": "booking_update", "url": "https://hooks.example/a"},
        headers=auth(capabilities=f"{WEBHOOKS}, octo/content"),
    )
    assert created.status_code == 200, created.text
    assert created.json()["capabilities"] == ["octo/content", WEBHOOKS]
    order = await client.post(
        "/octo/webhooks",
        json={"event": "order_update", "url": "https://hooks.example/o"},
        headers=auth(capabilities=WEBHOOKS),
    )
    assert order.json()["capabilities"] == ["octo/cart", WEBHOOKS]
    listed = (await client.get("/octo/webhooks", headers=auth())).json()
    assert {w["id"]: w["capabilities"] for w in listed} == {
        created.json()["id"]: ["octo/content", WEBHOOKS],
        order.json()["id"]: ["octo/cart", WEBHOOKS],
    }
    patched = await client.patch(
        f"/octo/webhooks/{created.json()['id']}", json={}, headers=auth(capabilities=WEBHOOKS)
    )
    assert patched.json()["capabilities"] == [WEBHOOKS]


async def test_routes_answer_without_the_capability(client: httpx.AsyncClient, bookable: Services) -> None:
    """Resellers that never send the header keep their webhooks (OCTO.md §1.5)."""
    created = await client.post(
        "/octo/webhooks", json={"event": "booking_update", "url": "https://hooks.example/a"}, headers=auth()
    )
    assert created.status_code == 200 and created.json()["capabilities"] == []
    assert created.headers["Octo-Capabilities"] == ""
    assert [w["id"] for w in (await client.get("/octo/webhooks", headers=auth())).json()] == [
        created.json()["id"]
    ]
