"""The bench's shop routes (issue 48: benchmarks/routes.py, benchmarks/shop_checkout.py) run
against a real `berth serve --demo` whose card payments go to a real localstripe: each shop and
back-office page's setup finds its page, a short round of whole checkouts pays and confirms
every booking it counts (as the route's own check reads the database), and the same Stripe
calls made to a localstripe alone complete. Speed is the bench's business: nothing is timed."""

from __future__ import annotations

import asyncio
import importlib
import sys
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from berth import fake_stripe
from berth.fake_stripe import FakeStripe
from tests.berth_process import berth_serve, reserved_port
from tests.databases import backend_name
from tests.stripe_helpers import localstripe

__all__ = ["localstripe"]

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
PAGES = ("shop-product", "shop-calendar", "shop-day", "backoffice-product", "backoffice-departures")


def _bench_module(name: str) -> ModuleType:
    """A module of benchmarks/, imported as run.py imports it (its siblings by their own names)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


routes = _bench_module("routes")
shop_checkout = _bench_module("shop_checkout")


@pytest.fixture
def alone() -> Iterator[FakeStripe]:
    """A second localstripe, for the ceiling's calls."""
    with reserved_port() as port:
        fake = fake_stripe.start(port)
        try:
            yield fake
        finally:
            fake.stop()


@pytest.fixture
def served(database_url: str, localstripe: FakeStripe, tmp_path: Path) -> Iterator[str]:
    """`berth serve --demo` paying through `localstripe`, as run.py starts it for shop-checkout."""
    with berth_serve(
        database_url, "--demo", log=tmp_path / "serve.log", **localstripe.environment(),
        BERTH_TRUSTED_PROXIES="127.0.0.1",
    ) as base:  # fmt: skip
        localstripe.send_webhooks_to(base)
        yield base


async def test_the_shop_and_back_office_pages_are_found(
    served: str, database_url: str, tmp_path: Path
) -> None:
    async with httpx.AsyncClient(base_url=served, timeout=30) as client:
        context = routes.BenchContext(backend_name(), served, database_url, tmp_path, client)
        measured = {route.name: route for route in routes.ROUTES}
        for name in PAGES:
            prepared = await measured[name].setup(context)
            page = await client.get(prepared.path, headers=dict(prepared.headers))
            assert page.status_code == 200, (name, page.text[:300])
            assert page.headers["content-type"].startswith("text/html")
        assert set(routes.SHOP_BESIDE_BACKOFFICE) | set(routes.SHOP_BESIDE_BACKOFFICE.values()) == set(PAGES)


async def test_whole_checkouts_are_paid_and_confirmed(
    served: str, database_url: str, localstripe: FakeStripe, tmp_path: Path
) -> None:
    plan = await shop_checkout.plan(served)
    tally = await shop_checkout.run_checkouts(served, localstripe.url, plan, guests=2, seconds=1, first=1)
    assert tally.failures == {} and tally.socket_errors == 0, tally.examples
    assert tally.paid and len(tally.paid) == len(tally.checkouts_ms)
    assert set(tally.steps_ms) == set(shop_checkout.STEPS)
    result = tally.result()
    assert result.requests == len(tally.paid) and result.non_2xx == 0

    await asyncio.sleep(shop_checkout.WEBHOOK_SECONDS)  # the webhooks of the last ones answered
    check = next(route.check for route in routes.ROUTES if route.name == shop_checkout.SHOP_CHECKOUT)
    async with httpx.AsyncClient(base_url=served, timeout=30) as client:
        context = routes.BenchContext(backend_name(), served, database_url, tmp_path, client)
        run = routes.RouteRun(requests=len(tally.paid), statuses={}, collected=tally.paid)
        assert await check(context, run) == []

        # A booking held and never paid (a reseller's hold) is what the check is there to find.
        day = (date.today() + timedelta(days=5)).isoformat()
        tour = {"productId": "thames-sightseeing", "optionId": "DEFAULT"}
        slots = await context.reseller_post("/octo/availability", {**tour, "localDate": day})
        held = await context.reseller_post(
            "/octo/bookings",
            {
                "uuid": str(uuid.uuid4()),
                **tour,
                "availabilityId": slots[0]["id"],
                "unitItems": [{"unitId": "adult"}],
            },
        )
        unpaid = routes.RouteRun(requests=1, statuses={}, collected=[*tally.paid, held["uuid"]])
        assert await check(context, unpaid) == [
            f"booking {held['uuid']} is ON_HOLD, not CONFIRMED",
            f"booking {held['uuid']} has 0 captured payments, not one",
        ]


async def test_the_stripe_calls_alone_complete(alone: FakeStripe) -> None:
    async with shop_checkout.webhook_sink() as sink:
        await shop_checkout.send_webhooks(alone.url, "sink", sink, fake_stripe.WEBHOOK_SECRET)
        tally = await shop_checkout.run_stripe_alone(
            alone.url, fake_stripe.SECRET_KEY, fake_stripe.PUBLISHABLE_KEY, guests=2, seconds=1
        )
    assert tally.failures == {} and tally.socket_errors == 0, tally.examples
    assert tally.checkouts_ms and tally.result().requests == len(tally.checkouts_ms)
    assert "webhook read" in tally.steps_ms and "card" in tally.steps_ms
