"""The direct dispatch of the hot routes (berth.http.hot_routes) answers exactly as FastAPI's
routing does: the same requests, good and bad, go to an app with it and one without it, on the
same database, and the answers (status, headers, body) must match."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from berth.app import create_app
from berth.container import Services
from berth.http.hot_routes import parse_body
from berth.http.octo.bookings import CONFIRM
from berth.http.octo.catalog import PRODUCT, SUPPLIER
from berth.http.octo.requests import AvailabilityBody, ReserveBody
from berth.http.octo.table import FAST_ROUTES
from berth.settings import Settings
from tests.bookings_helpers import GUEST, SLOT, TOUR, reservation
from tests.conftest import KEY_A, KEY_B, auth

JSON = "application/json"
ALL_CAPABILITIES = "octo/content, octo/pricing, octo/resources, octo/rentals, vendor/mappings, octo/packages"
UNSTABLE_HEADERS = {"date", "x-request-id"}
BIKES = {"productId": "city-bike-hire", "optionId": "DEFAULT"}
BIKE_DAYS = {**BIKES, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-03"}


@pytest.fixture
async def both(stocked: Services) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    hot = httpx.ASGITransport(app=create_app(services=stocked), raise_app_exceptions=False)
    plain = httpx.ASGITransport(
        app=create_app(services=stocked, hot_routes=False), raise_app_exceptions=False
    )
    async with (
        httpx.AsyncClient(transport=hot, base_url="http://berth.test") as hot_client,
        httpx.AsyncClient(transport=plain, base_url="http://berth.test") as plain_client,
    ):
        yield hot_client, plain_client


def _headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k not in UNSTABLE_HEADERS}


async def same_answer(
    clients: tuple[httpx.AsyncClient, httpx.AsyncClient],
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    content_type: str | None = JSON,
    capabilities: str | None = None,
    key: str = KEY_A,
    language: str | None = None,
) -> httpx.Response:
    headers = auth(key, capabilities=capabilities)
    if language is not None:
        headers["Accept-Language"] = language
    if content_type is not None:
        headers["Content-Type"] = content_type
    hot, plain = [await client.request(method, path, content=body, headers=headers) for client in clients]
    assert (hot.status_code, _headers(hot), hot.content) == (
        plain.status_code,
        _headers(plain),
        plain.content,
    )
    return hot


def encoded(data: Any) -> bytes:
    return orjson.dumps(data)


def find(method: str, path: str) -> tuple[object, dict[str, str]] | None:
    return FAST_ROUTES.find(method, path)


def test_find_matches_exactly_the_hot_routes() -> None:
    assert find("GET", "/octo/supplier") == (SUPPLIER, {})
    assert find("GET", "/octo/products/thames-sightseeing") == (PRODUCT, {"productId": "thames-sightseeing"})
    booking = str(uuid.uuid4())
    assert find("POST", f"/octo/bookings/{booking}/confirm") == (CONFIRM, {"uuid": booking})
    for method, path in [
        ("POST", "/octo/supplier"),
        ("GET", "/octo/products/a/b"),
        ("GET", "/octo/bookings"),
        ("POST", "/octo/bookings//confirm"),
        ("POST", "/octo/bookings/a/b/confirm"),
        ("POST", "/octo/bookings/x/cancel"),
        ("POST", "/octo/availability/batch"),
        ("HEAD", "/octo/products"),
    ]:
        assert find(method, path) is None, (method, path)


def test_every_fast_route_is_a_fastapi_route_of_the_same_declaration() -> None:
    """The fast dispatch and FastAPI serve the same declarations: each fast route is in the
    OpenAPI document FastAPI builds from its routes, with its method, summary and body, and the
    table's matcher finds it by its path."""
    paths = create_app(Settings(database_url="sqlite+aiosqlite:///:memory:")).openapi()["paths"]
    for declared in FAST_ROUTES.routes:
        operation = paths["/octo" + declared.path][declared.method.lower()]
        assert operation["summary"] == declared.summary
        assert ("requestBody" in operation) == (declared.body is not None)
        assert [p["name"] for p in operation.get("parameters", []) if p["in"] == "path"] == list(
            declared.parameters
        )
        values = {name: f"{name}-1" for name in declared.parameters}
        example = "/octo" + declared.path.format(**values)
        assert FAST_ROUTES.find(declared.method, example) == (declared, values)


def test_parse_body_takes_only_the_plain_road() -> None:
    scope = {"headers": [(b"content-type", b"application/json; charset=utf-8")]}
    body = parse_body(AvailabilityBody, scope, encoded({**TOUR, "localDate": "2026-06-02"}))
    assert isinstance(body, AvailabilityBody) and body.localDate is not None
    assert parse_body(AvailabilityBody, scope, b"") is None
    assert parse_body(AvailabilityBody, scope, b"{") is None
    assert parse_body(AvailabilityBody, scope, b'{"productId": NaN}') is None
    assert parse_body(AvailabilityBody, scope, b'{"localDate": "2026-13-01"}') is None
    assert parse_body(ReserveBody, scope, b"[]") is None
    for content_type in (b"text/plain", b"application/vnd.berth+json", b"application/jsonx"):
        other = {"headers": [(b"content-type", content_type)]}
        assert parse_body(AvailabilityBody, other, b"{}") is None
    assert parse_body(AvailabilityBody, {"headers": []}, b"{}") is None


async def test_catalogue_routes(both: tuple[httpx.AsyncClient, httpx.AsyncClient]) -> None:
    for capabilities in (None, "octo/content", "octo/content, octo/pricing", ALL_CAPABILITIES, "nonsense"):
        for language in ("de", "en", "xx"):
            for path in ("/octo/supplier", "/octo/products", "/octo/products/thames-sightseeing"):
                response = await same_answer(
                    both,
                    "GET",
                    path,
                    content_type=None,
                    capabilities=capabilities,
                    language=language,
                )
                assert response.status_code == 200
    for product_id in ("no-such-product", "%20x", "thames-sightseeing%2Fx", "ü"):
        response = await same_answer(both, "GET", f"/octo/products/{product_id}", content_type=None)
        assert response.status_code in (400, 404)
    # a trailing slash is served as the route without it
    await same_answer(both, "GET", "/octo/products/", content_type=None)


AVAILABILITY_BODIES: list[tuple[bytes, str | None]] = [
    (encoded({**TOUR, "localDate": "2026-06-02"}), JSON),
    (encoded({**TOUR, "localDateStart": "2026-06-02", "localDateEnd": "2026-06-09"}), JSON),
    (encoded(BIKE_DAYS), JSON),
    (encoded({**BIKE_DAYS, "rentalDurationId": "3-days"}), JSON),
    (encoded({**BIKE_DAYS, "rentalDurationId": "fortnight"}), JSON),
    (encoded({**TOUR, "availabilityIds": [SLOT], "units": [{"id": "adult", "quantity": 2}]}), JSON),
    (encoded({**TOUR, "localDate": "2026-06-02", "unknownField": 1}), "application/json; charset=utf-8"),
    (encoded({**TOUR, "localDate": "2026-06-02"}), "Application/JSON"),
    (encoded({**TOUR, "localDate": "2026-06-02"}), "application/vnd.reseller+json"),
    (encoded({**TOUR, "localDate": "2026-06-02"}), "text/plain"),
    (encoded({**TOUR, "localDate": "2026-06-02"}), None),
    (encoded({**TOUR, "localDate": "2026-13-02"}), JSON),
    (encoded({**TOUR, "localDate": 20260602}), JSON),
    (encoded({"productId": "nope", "optionId": "DEFAULT", "localDate": "2026-06-02"}), JSON),
    (encoded({**TOUR}), JSON),
    (encoded({**TOUR, "units": [{"id": "adult", "quantity": -1}], "localDate": "2026-06-02"}), JSON),
    (
        b'{"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDate": "2026-06-02", "x": NaN}',
        JSON,
    ),
    (b'{"productId": 123456789012345678901234567890}', JSON),
    (b'{"productId": "\\ud800"}', JSON),
    (b"\xef\xbb\xbf{}", JSON),
    (b"{", JSON),
    (b"[]", JSON),
    (b"null", JSON),
    (b"", JSON),
    (("[" * 5000 + "]" * 5000).encode(), JSON),
]


@pytest.mark.parametrize("path", ["/octo/availability", "/octo/availability/calendar"])
async def test_availability_routes(both: tuple[httpx.AsyncClient, httpx.AsyncClient], path: str) -> None:
    statuses = set()
    for body, content_type in AVAILABILITY_BODIES:
        for capabilities in (None, ALL_CAPABILITIES):
            response = await same_answer(
                both, "POST", path, body=body, content_type=content_type, capabilities=capabilities
            )
            statuses.add(response.status_code)
    assert statuses == {200, 400}


def _without_generated(data: Any) -> Any:
    generated = {"uuid", "id", "supplierReference", "bookingId", "orderId", "orderReference"}
    if isinstance(data, dict):
        return {k: "*" if k in generated else _without_generated(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_without_generated(item) for item in data]
    return data


async def test_reserve_and_confirm(both: tuple[httpx.AsyncClient, httpx.AsyncClient]) -> None:
    hot, _ = both
    for capabilities in (None, ALL_CAPABILITIES, "octo/cart"):
        headers = {**auth(capabilities=capabilities), "Octo-Env": "test"}
        fresh = [await client.post("/octo/bookings", json=reservation(), headers=headers) for client in both]
        assert [r.status_code for r in fresh] == [200, 200], fresh[0].text
        assert _without_generated(fresh[0].json()) == _without_generated(fresh[1].json())
        assert _headers(fresh[0]) == _headers(fresh[1])
        assert fresh[0].json()["testMode"] is True

    # the same uuid is the same booking, whichever road the retry takes
    body = encoded(reservation(("adult", "child")))
    first = await same_answer(both, "POST", "/octo/bookings", body=body)
    assert first.status_code == 200
    held = first.json()["uuid"]
    for bad in (
        reservation(units=("nobody",)),
        reservation(availability_id="2026-06-02T11:11:00+01:00"),
        {**reservation(), "uuid": "not-a-uuid"},
        {**reservation(), "unitItems": "adult"},
        {**reservation(), "productId": "no-such-product"},
        {},
    ):
        response = await same_answer(both, "POST", "/octo/bookings", body=encoded(bad))
        assert response.status_code == 400, response.text
    await same_answer(both, "POST", "/octo/bookings", body=body, content_type=None)
    await same_answer(both, "POST", "/octo/bookings", body=b"{", content_type=JSON)

    confirmation = encoded({"contact": GUEST, "resellerReference": "R-1"})
    for path in (f"/octo/bookings/{uuid.uuid4()}/confirm", "/octo/bookings/not-a-uuid/confirm"):
        response = await same_answer(both, "POST", path, body=confirmation)
        assert response.status_code == 400
    for bad_confirmation in (b"", b"{", encoded({"contact": "Ada"}), encoded({"resellerReference": 5})):
        await same_answer(both, "POST", f"/octo/bookings/{held}/confirm", body=bad_confirmation)
    done = await hot.post(
        f"/octo/bookings/{held}/confirm", content=confirmation, headers={**auth(), "Content-Type": JSON}
    )
    assert done.status_code == 200 and done.json()["status"] == "CONFIRMED"
    # confirming again answers the confirmed booking, on either road
    again = await same_answer(both, "POST", f"/octo/bookings/{held}/confirm", body=confirmation)
    assert again.json() == done.json()
    other_key = await same_answer(
        both, "POST", f"/octo/bookings/{held}/confirm", body=confirmation, key=KEY_B
    )
    assert other_key.status_code == 400


async def test_rentals_on_either_road(both: tuple[httpx.AsyncClient, httpx.AsyncClient]) -> None:
    """A rentalDurationId applies only with octo/rentals; without, the default duration (1 day)."""
    hot, _ = both
    body = {**BIKES, "availabilityId": "2026-06-02T09:00:00+01:00", "unitItems": [{"unitId": "bike"}],
            "rentalDurationId": "3-days"}  # fmt: skip
    for capabilities, due in (
        (None, "2026-06-03T09:00:00+01:00"),
        ("octo/rentals", "2026-06-05T09:00:00+01:00"),
    ):
        headers = {**auth(capabilities=capabilities), "Octo-Env": "test"}
        fresh = [
            await client.post("/octo/bookings", json={**body, "uuid": str(uuid.uuid4())}, headers=headers)
            for client in both
        ]
        assert [r.status_code for r in fresh] == [200, 200], fresh[0].text
        assert _without_generated(fresh[0].json()) == _without_generated(fresh[1].json())
        assert fresh[0].json()["availability"]["localDateTimeEnd"] == due
    held = await hot.post(
        "/octo/bookings", json={**body, "uuid": str(uuid.uuid4())}, headers=auth(capabilities="octo/rentals")
    )
    assert held.status_code == 200, held.text
    confirmation = encoded({"contact": GUEST, "rentalDurationId": "2-hours"})  # ignored: no octo/rentals
    path = f"/octo/bookings/{held.json()['uuid']}/confirm"
    done = await hot.post(path, content=confirmation, headers={**auth(), "Content-Type": JSON})
    assert done.json()["availability"]["localDateTimeEnd"] == "2026-06-05T09:00:00+01:00"
    again = await same_answer(both, "POST", path, body=confirmation)
    assert again.json() == done.json()
