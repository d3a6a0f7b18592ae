"""What the fuzzer found, pinned as plain regression tests (tests/test_fuzz.py finds them only
with the right generated input)."""

from __future__ import annotations

import httpx

from berth.container import Services
from tests.bookings_helpers import reservation
from tests.conftest import ADMIN, auth


async def test_lax_input_is_refused(client: httpx.AsyncClient, bookable: Services) -> None:
    for response in (
        await client.get("/octo/bookings", params={"localDate": "0"}, headers=auth()),
        await client.get("/admin/api/bookings", params={"localDateStart": "20260601"}, headers=ADMIN),
        await client.post("/octo/orders", json={"contact": {"allowMarketing": 0}}, headers=auth()),
        await client.post("/octo/bookings", json=reservation(expirationMinutes="30"), headers=auth()),
        await client.post(
            "/octo/webhooks",
            json={"event": "booking_update", "url": "https://h.example/a", "retryOnError": "yes"},
            headers=auth(),
        ),
        await client.post("/admin/api/webhooks/x/redeliver", params={"since": "0.5"}, headers=ADMIN),
        await client.get("/admin/api/deliveries", params={"offset": str(2**63)}, headers=ADMIN),
    ):
        assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", response.text
    response = await client.get("/octo/bookings", params={"localDate": "soon"}, headers=auth())
    assert response.json()["errorMessage"] == "localDate: must be a date, YYYY-MM-DD"


async def test_a_wrong_method_names_every_allowed_one(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await client.request("OPTIONS", "/octo/bookings", headers=auth())
    assert response.status_code == 405 and response.headers["Allow"] == "GET, POST"
    response = await client.put("/octo/bookings/0", headers=auth())
    assert response.headers["Allow"] == "DELETE, GET, PATCH"


async def test_the_document_declares_what_is_answered(client: httpx.AsyncClient, bookable: Services) -> None:
    document = (await client.get("/openapi.json")).json()
    operations = [(path, op) for path, ops in document["paths"].items() for op in ops.values()]
    assert not any("422" in op["responses"] for _, op in operations)
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert all("429" in op["responses"] for path, op in operations if path.startswith("/octo/"))
    assert all("404" in op["responses"] for path, op in operations if path.startswith("/admin/api/"))
