"""Authentication, connection isolation and the OCTO error body on every failure path."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from berth.container import Services
from berth.domain.staff import COMMAND_LINE
from tests.bookings_helpers import reservation, reserve
from tests.conftest import ADMIN, auth


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "Send your API key in the header 'Authorization: Bearer <API key>'"),
        ({"Authorization": "Basic abc"}, "The Authorization header must be 'Bearer <API key>'"),
        ({"Authorization": "Bearer"}, "The Authorization header must be 'Bearer <API key>'"),
        ({"Authorization": "Bearer not-a-key"}, "The API key is not valid or has been revoked"),
    ],
)
async def test_missing_or_bad_key(
    client: httpx.AsyncClient, bookable: Services, headers: dict[str, str], message: str
) -> None:
    for path in ("/octo/supplier", "/octo/products", "/octo/products/thames-sightseeing", "/octo/nowhere"):
        response = await client.get(path, headers={**headers, "Octo-Capabilities": "octo/pricing"})
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {"error": "UNAUTHORIZED", "errorMessage": message}
        assert response.headers["Octo-Capabilities"] == "octo/pricing"


async def test_revoked_key_stops_at_once(client: httpx.AsyncClient, bookable: Services) -> None:
    connection, key, _ = await bookable.connections.create("Short-lived reseller", actor=COMMAND_LINE)
    assert (await client.get("/octo/supplier", headers=auth(key))).status_code == 200
    await bookable.connections.revoke(connection.id, actor=COMMAND_LINE)
    response = await client.get("/octo/supplier", headers=auth(key))
    assert response.status_code == 400
    assert response.json()["error"] == "UNAUTHORIZED"


async def test_keys_are_stored_hashed(bookable: Services) -> None:
    from sqlalchemy import select

    from berth.store.tables import connections

    _, key, _ = await bookable.connections.create("Hash check", actor=COMMAND_LINE)
    async with bookable.database.transaction(write=False) as conn:
        stored = [tuple(row) for row in await conn.execute(select(connections))]
    assert stored and not any(key in str(value) for row in stored for value in row)


async def test_each_key_resolves_to_its_own_connection(client: httpx.AsyncClient, bookable: Services) -> None:
    """The mechanism every later isolation rule stands on: a key maps to exactly one
    connection, and the request context carries that connection and no other."""
    from fastapi import Depends

    from berth.http.context import OctoRequest, octo_request

    app: FastAPI = client._transport.app  # type: ignore[attr-defined]

    @app.get("/octo/_whoami")
    async def whoami(octo: OctoRequest = Depends(octo_request)) -> dict[str, str]:
        return {"name": octo.connection.name}

    a = await client.get("/octo/_whoami", headers=auth("demo-reseller-a"))
    b = await client.get("/octo/_whoami", headers=auth("demo-reseller-b"))
    assert a.json() == {"name": "Reseller A"}
    assert b.json() == {"name": "Reseller B"}


async def test_unknown_route_and_method(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await client.get("/octo/no/such/route", headers=auth())
    assert response.status_code == 404
    assert response.json() == {
        "error": "NOT_FOUND",
        "errorMessage": "There is no route GET /octo/no/such/route",
    }
    response = await client.delete("/octo/supplier", headers=auth())
    assert response.status_code == 405
    assert response.json()["error"] == "BAD_REQUEST"
    response = await client.get("/nothing-here")
    assert response.status_code == 404 and response.json()["error"] == "NOT_FOUND"


async def test_admin_requires_token(client: httpx.AsyncClient, bookable: Services) -> None:
    assert (await client.get("/admin/api/connections")).json()["error"] == "UNAUTHORIZED"
    wrong = await client.get("/admin/api/connections", headers={"Authorization": "Bearer demo-reseller-a"})
    assert wrong.status_code == 400 and wrong.json()["error"] == "UNAUTHORIZED"
    assert (await client.get("/admin/api/connections", headers=ADMIN)).status_code == 200


async def test_admin_disabled_without_token(bookable: Services) -> None:
    from berth.app import create_app

    bookable.settings.admin_token = None
    transport = httpx.ASGITransport(app=create_app(services=bookable))
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as http:
        response = await http.get("/admin/api/connections", headers=ADMIN)
    assert response.json()["error"] == "FORBIDDEN"


async def test_malformed_json_and_wrong_types(client: httpx.AsyncClient, bookable: Services) -> None:
    headers = {**ADMIN, "Content-Type": "application/json"}
    response = await client.post("/admin/api/connections", content=b'{"name": ', headers=headers)
    assert response.status_code == 400
    assert response.json()["error"] == "BAD_REQUEST"
    assert response.json()["errorMessage"].startswith("The request body is not valid JSON")
    response = await client.post("/admin/api/connections", json={"name": 42}, headers=ADMIN)
    assert response.json() == {"error": "BAD_REQUEST", "errorMessage": "name: must be a string"}
    response = await client.post("/admin/api/connections", json={}, headers=ADMIN)
    assert response.json() == {"error": "BAD_REQUEST", "errorMessage": "name is required"}
    response = await client.post("/admin/api/connections", json={"name": "x", "colour": 1}, headers=ADMIN)
    assert response.json() == {"error": "BAD_REQUEST", "errorMessage": "colour is not a known field"}
    response = await client.post("/admin/api/connections", headers=ADMIN)
    assert response.json() == {"error": "BAD_REQUEST", "errorMessage": "The request body is required"}
    assert [c["name"] for c in (await client.get("/admin/api/connections", headers=ADMIN)).json()] == [
        "Reseller A",
        "Reseller B",
    ]  # nothing was added


async def test_auth_is_checked_before_the_body(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await client.post(
        "/admin/api/connections", content=b"{broken", headers={"Content-Type": "application/json"}
    )
    assert response.json()["error"] == "UNAUTHORIZED"


async def test_admin_connections_lifecycle(client: httpx.AsyncClient, bookable: Services) -> None:
    created = (await client.post("/admin/api/connections", json={"name": "Tickets4U"}, headers=ADMIN)).json()
    key = created["apiKey"]
    assert key.startswith("berth_") and created["connection"]["keyHint"] == "…" + key[-4:]
    assert (await client.get("/octo/supplier", headers=auth(key))).status_code == 200
    duplicate = await client.post("/admin/api/connections", json={"name": "Tickets4U"}, headers=ADMIN)
    assert duplicate.json()["error"] == "BAD_REQUEST"
    revoked = await client.post(f"/admin/api/connections/{created['connection']['id']}/revoke", headers=ADMIN)
    assert revoked.json()["active"] is False
    assert (await client.get("/octo/supplier", headers=auth(key))).json()["error"] == "UNAUTHORIZED"
    missing = await client.post("/admin/api/connections/nope/revoke", headers=ADMIN)
    assert missing.status_code == 404 and missing.json()["error"] == "NOT_FOUND"


async def test_internal_errors_are_json(client: httpx.AsyncClient, bookable: Services) -> None:
    app: FastAPI = client._transport.app  # type: ignore[attr-defined]

    @app.get("/octo/_boom")
    async def boom() -> None:
        raise RuntimeError("kaboom")

    response = await client.get("/octo/_boom", headers=auth())
    assert response.status_code == 500
    assert response.json() == {
        "error": "INTERNAL_SERVER_ERROR",
        "errorMessage": "An unexpected error occurred; it has been logged",
    }


async def test_missing_ids_are_named_in_octo_terms(client: httpx.AsyncClient, bookable: Services) -> None:
    day = {"localDate": "2026-06-02"}
    cases = [
        ("/octo/availability", {"productId": "thames-sightseeing", **day}, "INVALID_OPTION_ID",
         "optionId is required: the id of one of the options of product 'thames-sightseeing' (DEFAULT, evening)"),
        ("/octo/availability", {"optionId": "DEFAULT", **day}, "INVALID_PRODUCT_ID",
         "productId is required: the id of one of the supplier's products (GET /products)"),
        ("/octo/bookings", {"productId": "thames-sightseeing", "unitItems": [{"unitId": "adult"}]},
         "INVALID_OPTION_ID",
         "optionId is required: the id of one of the options of product 'thames-sightseeing' (DEFAULT, evening)"),
    ]  # fmt: skip
    for path, body, code, message in cases:
        response = await client.post(path, json=body, headers=auth())
        assert response.status_code == 400
        assert response.json()["error"] == code
        assert response.json()["errorMessage"] == message
        assert "None" not in response.text


async def test_bodies_of_the_wrong_shape_say_what_is_expected(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    async def message(**request: object) -> str:
        response = await client.post("/octo/bookings", **request)  # type: ignore[arg-type]
        assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST"
        text = response.json()["errorMessage"]
        assert "Input should" not in text and "dictionary" not in text
        return str(text)

    json_body = b'{"productId": "thames-sightseeing", "optionId": "DEFAULT"}'
    assert await message(json=[{"productId": "thames-sightseeing"}], headers=auth()) == (
        "The request body must be a JSON object; an array was sent"
    )
    assert await message(content=json_body, headers=auth()) == (
        "The request body must be JSON sent with the header Content-Type: application/json"
    )
    assert await message(content=json_body, headers=auth(**{"Content-Type": "text/plain"})) == (
        "The request body must be JSON sent with the header Content-Type: application/json (text/plain was sent)"
    )
    wrong_types = {
        "productId": 5,
        "expirationMinutes": "x",
        "unitItems": [{"unitId": "adult"}, {"unitId": 3}],
    }
    assert await message(json=wrong_types, headers=auth()) == (
        "productId: must be a string; expirationMinutes: must be a whole number; "
        "unitItems[1].unitId: must be a string"
    )
    assert (
        await message(json={"unitItems": {"unitId": "adult"}}, headers=auth())
        == "unitItems: must be an array"
    )
    assert (
        await message(json={"notes": "x" * 1001}, headers=auth()) == "notes: must be at most 1000 characters"
    )
    batch = await client.post("/octo/availability/batch", json=[{"productId": 5}], headers=auth())
    assert batch.json()["errorMessage"] == "[0].productId: must be a string"


async def test_confirm_without_contact_follows_the_required_contact_fields_rule(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """One rule, one wording: a booking's confirm and an order's confirm name the same missing
    contact fields; a confirm without contact keeps the contact given at reservation."""
    guest = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}
    expected = {
        "error": "UNPROCESSABLE_ENTITY",
        "errorMessage": "Required contact fields are missing: contact.firstName, contact.lastName, "
        "contact.emailAddress",
    }
    bare = await reserve(client)
    assert (
        await client.post(f"/octo/bookings/{bare['uuid']}/confirm", json={}, headers=auth())
    ).json() == expected
    order = await client.post(
        "/octo/orders", json={"bookings": [reservation()]}, headers=auth(capabilities="octo/cart")
    )
    order_id = order.json()["id"]
    confirmed_order = await client.post(
        f"/octo/orders/{order_id}/confirm", json={}, headers=auth(capabilities="octo/cart")
    )
    # The order names the booking that failed, in the same words.
    assert confirmed_order.json()["error"] == expected["error"]
    assert expected["errorMessage"] in confirmed_order.json()["errorMessage"]
    with_contact = await reserve(client, reservation(contact=guest))
    response = await client.post(f"/octo/bookings/{with_contact['uuid']}/confirm", json={}, headers=auth())
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "CONFIRMED"
    assert {k: response.json()["contact"][k] for k in guest} == guest
