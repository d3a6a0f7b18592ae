"""Dates over the whole range of `datetime.date`, on every route that takes a date, a range of
dates or a departure's id (issue 32): the answer is a page, a list or an OCTO error, never a
500. Dates outside the supported range are refused with BAD_REQUEST naming it."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.container import Services
from berth.domain.calendar import FIRST_DATE, LAST_DATE, RANGE_TEXT
from berth.domain.errors import BadRequest, OctoError
from berth.services.availability import AvailabilityQuery
from tests.backoffice.helpers import sign_in
from tests.conftest import ADMIN, auth

OPTIONS = (
    ("thames-sightseeing", "DEFAULT"),  # start times
    ("tower-of-stories", "DEFAULT"),  # opening hours
    ("city-bike-hire", "DEFAULT"),  # a rental
    ("harbour-city-pass", "DEFAULT"),  # a package
    ("harbour-cruise", "DEFAULT"),  # resources
)
CAPABILITIES = "octo/rentals, octo/packages, octo/resources, octo/pickups, octo/pricing, octo/cart"
# The edges of the calendar and of the supported range, more often than chance would try them.
EDGES = st.sampled_from(
    [date.min, date.max, date.min + timedelta(days=1), date.max - timedelta(days=1), FIRST_DATE, LAST_DATE,
     FIRST_DATE - timedelta(days=1), LAST_DATE + timedelta(days=1), date(2026, 6, 2)]
)  # fmt: skip
DATES = st.one_of(EDGES, st.dates())


def octo_error(response: httpx.Response, where: str) -> dict[str, Any] | None:
    """The OCTO error of a refusal (None for an answer); fails on a 500 or a refusal without one."""
    assert response.status_code < 500, (where, response.status_code, response.text)
    if response.status_code < 400 or response.headers.get("content-type", "").startswith("text/html"):
        return None
    body = response.json()
    assert isinstance(body, dict) and body.get("error") and body.get("errorMessage"), (where, body)
    return body


def outside(*days: date) -> bool:
    return any(not FIRST_DATE <= d <= LAST_DATE for d in days)


def departure(day: date) -> str:
    return f"{day.isoformat()}T10:00:00+01:00"


async def _requests(client: httpx.AsyncClient, a: date, b: date) -> list[tuple[str, httpx.Response, bool]]:
    """Every request naming `a` or `a`..`b`, and whether it names a date outside the range."""
    first, last = min(a, b), max(a, b)
    octo = auth(capabilities=CAPABILITIES)
    sent: list[tuple[str, httpx.Response, bool]] = []

    async def record(where: str, response: httpx.Response, days: tuple[date, ...]) -> None:
        sent.append((where, response, outside(*days)))

    for product_id, option_id in OPTIONS:
        ids = {"productId": product_id, "optionId": option_id}
        one = {**ids, "localDate": a.isoformat()}
        span = {**ids, "localDateStart": first.isoformat(), "localDateEnd": last.isoformat()}
        await record(
            f"availability {product_id}",
            await client.post("/octo/availability", json=one, headers=octo),
            (a,),
        )
        await record(
            f"availability range {product_id}",
            await client.post("/octo/availability", json=span, headers=octo),
            (first, last),
        )
        await record(
            f"calendar {product_id}",
            await client.post("/octo/availability/calendar", json=span, headers=octo),
            (first, last),
        )
        await record(
            f"availability batch {product_id}",
            await client.post("/octo/availability/batch", json=[one], headers=octo),
            (a,),
        )
        await record(
            f"calendar batch {product_id}",
            await client.post("/octo/availability/calendar/batch", json=[span], headers=octo),
            (first, last),
        )
        held = {"uuid": None, **ids, "availabilityId": departure(a), "unitItems": [{"unitId": "adult"}]}
        held.pop("uuid")
        sent.append(
            (f"reserve {product_id}", await client.post("/octo/bookings", json=held, headers=octo), False)
        )
        resources = {**ids, "availabilityId": departure(a)}
        sent.append(
            (
                f"resources {product_id}",
                await client.get("/octo/availability/resources", params=resources, headers=octo),
                False,
            )
        )
        path = f"/admin/api/departures/{product_id}/{option_id}/{departure(a)}"
        sent.append((f"departure {product_id}", await client.get(path, headers=ADMIN), False))
        sent.append(
            (f"manifest.csv {product_id}", await client.get(path + "/manifest.csv", headers=ADMIN), False)
        )
        sent.append(
            (
                f"manifest page {product_id}",
                await client.get(f"/admin/slots/{product_id}/{option_id}/{departure(a)}"),
                False,
            )
        )
        await record(
            f"departures {product_id}",
            await client.get("/admin/api/departures", params=one, headers=ADMIN),
            (a,),
        )
        await record(
            f"departures range {product_id}",
            await client.get("/admin/api/departures", params=span, headers=ADMIN),
            (first, last),
        )
    by_day = {"localDate": a.isoformat()}
    by_range = {"localDateStart": first.isoformat(), "localDateEnd": last.isoformat()}
    for path, headers in (
        ("/octo/bookings", auth()),
        ("/admin/api/bookings", ADMIN),
        ("/admin/api/bookings.csv", ADMIN),
    ):
        await record(path, await client.get(path, params=by_day, headers=headers), (a,))
        await record(path + " range", await client.get(path, params=by_range, headers=headers), (first, last))
    times = {"since": f"{first.isoformat()}T00:00:00Z", "until": f"{last.isoformat()}T23:59:59-12:00"}
    await record("audit", await client.get("/admin/api/audit", params=times, headers=ADMIN), (first, last))
    # The back office's pages answer a page (a notice for a date they refuse), never a 500.
    sent.append(("bookings page", await client.get("/admin/bookings", params={"date": a.isoformat()}), False))
    sent.append(
        ("bookings.csv page", await client.get("/admin/bookings.csv", params={"date": a.isoformat()}), False)
    )
    pages = {"from": first.isoformat(), "to": last.isoformat()}
    sent.append(("audit page", await client.get("/admin/audit", params=pages), False))
    return sent


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=DATES, b=DATES)
async def test_any_date_gets_an_answer_or_an_octo_error(
    client: httpx.AsyncClient, stocked: Services, a: date, b: date
) -> None:
    if "berth_session" not in client.cookies:
        await sign_in(client)
    for where, response, refused_for_range in await _requests(client, a, b):
        error = octo_error(response, where)
        if refused_for_range:
            assert error is not None and error["error"] == "BAD_REQUEST", (where, a, b, response.text)
            assert RANGE_TEXT in error["errorMessage"], (where, error)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=DATES, b=DATES)
async def test_the_services_take_any_date_or_raise_an_octo_error(stocked: Services, a: date, b: date) -> None:
    """The same, one layer down: what the back office and the command line call directly."""
    catalog = (await stocked.catalog.snapshot()).catalog
    first, last = min(a, b), max(a, b)
    for product_id, option_id in OPTIONS:
        calls = {
            "check": stocked.availability.check(
                catalog, AvailabilityQuery(product_id, option_id, local_date=a)
            ),
            "check range": stocked.availability.check(
                catalog, AvailabilityQuery(product_id, option_id, local_date_start=first, local_date_end=last)
            ),
            "calendar": stocked.availability.calendar(
                catalog, AvailabilityQuery(product_id, option_id, local_date_start=first, local_date_end=last)
            ),
            "departures": stocked.departures.find(catalog, product_id, option_id, first, last),
            "departure": stocked.departures.get(catalog, product_id, option_id, departure(a)),
        }
        for where, call in calls.items():
            try:
                await call
            except OctoError as refused:
                named = (a,) if where == "check" else (first, last)
                if outside(*named) and where != "departure":  # an unsupported departure is unknown
                    assert isinstance(refused, BadRequest) and RANGE_TEXT in refused.message, (where, refused)


def test_the_range_is_stated_once() -> None:
    assert f"{FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}" == RANGE_TEXT
