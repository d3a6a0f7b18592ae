"""Health, readiness, OpenAPI, logs and migrations."""

from __future__ import annotations

import httpx
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection, inspect

from berth.container import Services
from berth.store.tables import metadata


async def test_health_and_readiness(client: httpx.AsyncClient, services: Services) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ok"}


async def test_readiness_fails_without_database(tmp_path: object) -> None:
    from berth.app import create_app
    from berth.settings import Settings

    settings = Settings(database_url="postgresql://nobody@127.0.0.1:1/none", log_level="WARNING")
    transport = httpx.ASGITransport(app=create_app(settings))
    async with httpx.AsyncClient(transport=transport, base_url="http://berth.test") as http:
        response = await http.get("/readyz")
    assert response.status_code == 503 and response.json()["status"] == "unavailable"


async def test_request_id_is_echoed(client: httpx.AsyncClient, services: Services) -> None:
    response = await client.get("/healthz", headers={"X-Request-Id": "abc-123"})
    assert response.headers["X-Request-Id"] == "abc-123"
    assert len((await client.get("/healthz")).headers["X-Request-Id"]) == 32


async def test_openapi_describes_the_octo_routes(client: httpx.AsyncClient, services: Services) -> None:
    document = (await client.get("/openapi.json")).json()
    paths = document["paths"]
    for path in ("/octo/supplier", "/octo/products", "/octo/products/{productId}", "/octo/capabilities"):
        assert "get" in paths[path]
    product = document["components"]["schemas"]["ProductOut"]
    assert {"id", "options", "timeZone", "availabilityType"} <= set(product["required"])
    assert "HTTPBearer" in document["components"]["securitySchemes"]
    assert (await client.get("/docs")).status_code == 200


async def test_migrations_match_the_table_definitions(services: Services) -> None:
    def differences(conn: Connection) -> list[object]:
        context = MigrationContext.configure(conn)
        return list(compare_metadata(context, metadata))

    async with services.database.transaction(write=False) as conn:
        assert await conn.run_sync(differences) == []


def _predicate(where: object) -> str:
    return "".join(ch for ch in str(where).lower() if ch not in "() \n")


async def test_migrations_make_the_partial_indexes(services: Services) -> None:
    """compare_metadata does not compare an index's WHERE: the migrated bookings indexes must
    have the predicates of the table definitions."""
    dialect = services.database.dialect
    expected = {
        index.name: _predicate(where)
        for index in metadata.tables["bookings"].indexes
        if (where := index.dialect_options[dialect].get("where")) is not None
    }
    assert set(expected) == {
        "ix_bookings_rental_end",
        "ix_bookings_order_id",
        "ix_bookings_package_booking_id",
    }

    def predicates(conn: Connection) -> dict[str, str]:
        return {
            str(index["name"]): _predicate(index.get("dialect_options", {}).get(f"{dialect}_where"))
            for index in inspect(conn).get_indexes("bookings")
            if index["name"] in expected
        }

    async with services.database.transaction(write=False) as conn:
        assert await conn.run_sync(predicates) == expected
