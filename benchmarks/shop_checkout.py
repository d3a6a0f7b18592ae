"""The shop-checkout route (issue 48): whole checkouts in the web shop, paid by card against a
real localstripe, and the same Stripe calls made to a localstripe alone: that route's ceiling.

A checkout is what a guest's browser sends from the booking form on, one request after the
other (a new browser session and client address each time, `X-Forwarded-For` through the
trusted loopback proxy, so the shop's hold limits per address do not throttle the load):

1. `form`: GET the booking form of a departure for two adults (its CSRF token and hold id);
2. `hold`: POST it, the places held (303 to the checkout);
3. `details`: GET the guest's details form;
4. `contact`: POST the contact and the terms accepted (303 to the payment page);
5. `pay`: GET the payment page: Berth starts the payment at Stripe (a customer, a
   PaymentIntent for the booking's stored price, a SetupIntent for the card);
6. `card`: the card given to Stripe (`stripe.confirmCardSetup`, as localstripe's Stripe.js
   stand-in sends it, with the publishable key): the one step that does not reach Berth;
7. `charge`: POST to charge the card: Berth charges it, reads the payment back from Stripe and
   confirms the booking (JSON: where to go next, the confirmation page);
8. `done`: GET the confirmation page.

A checkout counts when every step answered as a browser expects it; it is timed from the first
step's start to the last step's answer. Localstripe delivers its webhooks (`customer.created`,
`payment_intent.succeeded`) to Berth a second later, and Berth reads the payment once more for
the second; that work shares the machine with the checkouts that follow.

**Localstripe alone** (`shop-checkout-stripe`): the Stripe calls of one checkout, in Berth's
order and with its parameters, from the bench straight to a second localstripe whose webhooks
go to a sink in the bench's process: customer, PaymentIntent and SetupIntent created, the card
given, the PaymentIntent read, the SetupIntent read, the PaymentIntent updated with the card and
confirmed, then read twice (Berth's settle, and its answer to the webhook). localstripe is one
Python process that scans its whole store on several of these calls, so its rate falls as it
fills: each round, on either side, begins with its localstripe's store emptied.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web
from loadgen import WrkResult
from mixed import percentile
from servers import BenchError, free_port

SHOP_CHECKOUT = "shop-checkout"
STRIPE_ALONE = "shop-checkout-stripe"  # the ceiling's row
PRODUCT = "thames-sightseeing"
OPTION = "DEFAULT"
UNIT = "adult"
PARTY = 2
FIRST_DAY, LAST_DAY = 2, 61  # departures the checkouts spread over, days ahead
GUESTS = 8  # checkouts in flight at once, on either side
MIN_ROUND_SECONDS = 10  # a round lasts at least this long, so that its p99 rests on a few hundred
# localstripe sends each webhook a second after its event; Berth answers it within this long.
WEBHOOK_SECONDS = 3.0
CARD = {"number": "4242424242424242", "exp_month": "12", "exp_year": "2034", "cvc": "123"}
GUEST = {"firstName": "Bench", "lastName": "Mark", "emailAddress": "bench@example.com"}
STEPS = ("form", "hold", "details", "contact", "pay", "card", "charge", "done")
RESELLER = {"Authorization": "Bearer demo-reseller-a"}

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_HOLD = re.compile(r'name="hold" value="([^"]+)"')
_SETUP = re.compile(r'data-setup="([^"]+)"')
_KEY = re.compile(r'data-key="([^"]+)"')


@dataclass(frozen=True)
class CheckoutPlan:
    departures: tuple[str, ...]  # availability ids of the product's option with room for the party


async def plan(base_url: str) -> CheckoutPlan:
    """The departures of the demo cruise from FIRST_DAY to LAST_DAY days ahead with room for
    the party (asked as demo reseller A: the shop sells the same catalogue)."""
    window = {
        "productId": PRODUCT,
        "optionId": OPTION,
        "localDateStart": (dt.date.today() + dt.timedelta(days=FIRST_DAY)).isoformat(),
        "localDateEnd": (dt.date.today() + dt.timedelta(days=LAST_DAY)).isoformat(),
        "units": [{"id": UNIT, "quantity": PARTY}],
    }
    async with (
        aiohttp.ClientSession(base_url, headers=RESELLER) as session,
        session.post("/octo/availability", json=window) as answer,
    ):
        if answer.status != 200:
            raise BenchError(
                f"POST /octo/availability answered {answer.status}: {(await answer.text())[:300]}"
            )
        slots = await answer.json()
    departures = tuple(slot["id"] for slot in slots if slot.get("available"))
    if not departures:
        raise BenchError(
            f"{PRODUCT} has no departure with room for {PARTY} in days {FIRST_DAY} to {LAST_DAY}"
        )
    return CheckoutPlan(departures)


class StepFailed(Exception):
    """A step did not answer as the guest's browser expects: `key` counts it (`hold 409`)."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"{key}: {detail}")
        self.key = key


@dataclass
class CheckoutRound:
    """One round of checkouts (or of localstripe alone): each one's time, each step's times, the
    failures by kind with a few examples, and the bookings paid (their uuids, for the check)."""

    seconds: float = 0.0
    checkouts_ms: list[float] = field(default_factory=list)
    steps_ms: dict[str, list[float]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    socket_errors: int = 0
    paid: list[str] = field(default_factory=list)

    def fail(self, key: str, detail: str) -> None:
        self.failures[key] = self.failures.get(key, 0) + 1
        if len(self.examples) < 5:
            self.examples.append(f"{key}: {detail[:300]}")

    def result(self) -> WrkResult:
        """As the table reads a wrk round: requests are whole checkouts, non-2xx the failed ones."""
        count = len(self.checkouts_ms)
        return WrkResult(
            requests=count,
            duration_s=self.seconds,
            requests_per_s=count / self.seconds if self.seconds > 0 else 0.0,
            latency_ms={share: percentile(self.checkouts_ms, value)
                        for share, value in (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))},
            non_2xx=sum(self.failures.values()),
            socket_errors={"errors": self.socket_errors} if self.socket_errors else {},
            statuses=dict(self.failures),
            collected=list(self.paid),
        )  # fmt: skip

    def step_summary(self) -> dict[str, dict[str, float]]:
        """p50 and p99 of each step, in ms."""
        return {
            step: {"p50": round(percentile(times, 0.5), 2), "p99": round(percentile(times, 0.99), 2)}
            for step, times in self.steps_ms.items()
        }


def _address(number: int) -> str:
    """A client address of its own for each checkout (10.0.0.0/8)."""
    return f"10.{(number >> 16) & 255}.{(number >> 8) & 255}.{number & 255}"


async def _timed(tally: CheckoutRound, step: str, request: Any) -> tuple[int, str, dict[str, str]]:
    """Send `request` (a ClientSession request context), read the whole answer, time it."""
    started = time.perf_counter()
    async with request as answer:
        text = await answer.text()
        status, headers = answer.status, {key.lower(): value for key, value in answer.headers.items()}
    tally.steps_ms.setdefault(step, []).append((time.perf_counter() - started) * 1000)
    return status, text, headers


def _found(pattern: re.Pattern[str], text: str, step: str) -> str:
    match = pattern.search(text)
    if match is None:
        raise StepFailed(f"{step} unexpected page", f"{pattern.pattern} not in {text[:200]!r}")
    return match.group(1)


def _expect(step: str, status: int, wanted: int, text: str) -> None:
    if status != wanted:
        raise StepFailed(f"{step} {status}", text[:300])


async def checkout(
    session: aiohttp.ClientSession, base_url: str, stripe_url: str, departure: str, address: str,
    tally: CheckoutRound,
) -> str:  # fmt: skip
    """One whole checkout by a new guest at `address`; the booking's uuid once it is confirmed."""
    session.cookie_jar.clear()
    origin = {"Origin": base_url, "X-Forwarded-For": address}
    party = {"option": OPTION, f"unit-{UNIT}": str(PARTY), "slot": departure}
    book = f"{base_url}/shop/{PRODUCT}/book"
    status, text, _ = await _timed(tally, "form", session.get(book, params=party, headers=origin))
    _expect("form", status, 200, text)
    csrf = _found(_CSRF, text, "form")
    form = {**party, "csrf": csrf, "hold": _found(_HOLD, text, "form")}
    status, text, headers = await _timed(
        tally, "hold", session.post(book, data=form, headers=origin, allow_redirects=False)
    )
    _expect("hold", status, 303, text)
    checkout_url = base_url + headers.get("location", "")
    status, text, _ = await _timed(tally, "details", session.get(checkout_url, headers=origin))
    _expect("details", status, 200, text)
    contact = {**GUEST, "terms": "yes", "csrf": csrf}
    status, text, headers = await _timed(
        tally, "contact", session.post(checkout_url, data=contact, headers=origin, allow_redirects=False)
    )
    _expect("contact", status, 303, text)
    status, text, _ = await _timed(
        tally, "pay", session.get(base_url + headers.get("location", ""), headers=origin)
    )
    _expect("pay", status, 200, text)
    setup, key = _found(_SETUP, text, "pay"), _found(_KEY, text, "pay")
    await _give_card(session, stripe_url, setup, key, tally)
    status, text, _ = await _timed(
        tally, "charge",
        session.post(f"{checkout_url}/charge", data={"csrf": csrf}, headers={**origin, "Accept": "application/json"}),
    )  # fmt: skip
    _expect("charge", status, 200, text)
    following = json.loads(text).get("next", "")
    if not following.endswith("/done"):
        raise StepFailed("charge not confirmed", text)
    status, text, _ = await _timed(tally, "done", session.get(base_url + following, headers=origin))
    _expect("done", status, 200, text)
    return checkout_url.rsplit("/", 1)[-1]


async def _give_card(
    session: aiohttp.ClientSession, stripe_url: str, setup_secret: str, key: str, tally: CheckoutRound
) -> None:
    """`stripe.confirmCardSetup(setup_secret, {payment_method: {card}})`, as localstripe's
    Stripe.js stand-in sends it."""
    setup = setup_secret.split("_secret_")[0]
    body = {
        "key": key,
        "use_stripe_sdk": True,
        "client_secret": setup_secret,
        "payment_method_data": {"type": "card", "card": CARD, "billing_details": {"name": "Bench Mark"}},
    }
    status, text, _ = await _timed(
        tally, "card", session.post(f"{stripe_url}/v1/setup_intents/{setup}/confirm", json=body)
    )
    _expect("card", status, 200, text)
    if json.loads(text).get("status") != "succeeded":
        raise StepFailed("card not accepted", text)


async def _rounds_of(
    guests: int,
    seconds: float,
    one: Callable[[aiohttp.ClientSession, int], Awaitable[str]],
    tally: CheckoutRound,
) -> None:
    """`guests` loops of `one(session, number)` until `seconds` have passed (the last ones
    finish); the round's time runs from the start to the last answer."""
    deadline = time.monotonic() + seconds
    numbers = itertools.count(1)
    started = time.monotonic()
    finished = started

    async def guest() -> None:
        nonlocal finished
        jar = aiohttp.CookieJar(unsafe=True)  # the shop's cookies come from 127.0.0.1
        async with aiohttp.ClientSession(cookie_jar=jar, timeout=aiohttp.ClientTimeout(total=30)) as session:
            while time.monotonic() < deadline:
                number = next(numbers)
                begun = time.perf_counter()
                try:
                    paid = await one(session, number)
                except StepFailed as exc:
                    tally.fail(exc.key, str(exc))
                    continue
                except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                    tally.socket_errors += 1
                    tally.fail(type(exc).__name__, str(exc))
                    continue
                tally.checkouts_ms.append((time.perf_counter() - begun) * 1000)
                if paid:
                    tally.paid.append(paid)
                finished = time.monotonic()

    await asyncio.gather(*(guest() for _ in range(guests)))
    tally.seconds = finished - started


async def run_checkouts(
    base_url: str, stripe_url: str, checkout_plan: CheckoutPlan, *, guests: int, seconds: float, first: int
) -> CheckoutRound:
    """A round of whole checkouts against Berth; `first` numbers its client addresses."""
    tally = CheckoutRound()
    departures = checkout_plan.departures

    async def one(session: aiohttp.ClientSession, number: int) -> str:
        departure = departures[(first + number) % len(departures)]
        return await checkout(session, base_url, stripe_url, departure, _address(first + number), tally)

    await flush(stripe_url)
    await _rounds_of(guests, seconds, one, tally)
    return tally


# --- localstripe alone ---------------------------------------------------------------------


async def _stripe(
    session: aiohttp.ClientSession, tally: CheckoutRound, step: str, method: str, url: str, secret: str,
    data: dict[str, str] | None = None, idempotency: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One call of Stripe's API as the official library sends it (form-encoded, secret key)."""
    headers = {"Authorization": f"Bearer {secret}"}
    if idempotency is not None:
        headers["Idempotency-Key"] = idempotency
    status, text, _ = await _timed(tally, step, session.request(method, url, data=data, headers=headers))
    _expect(step, status, 200, text)
    answer: dict[str, Any] = json.loads(text)
    return answer


async def stripe_checkout(session: aiohttp.ClientSession, stripe_url: str, secret: str, key: str,
                          tally: CheckoutRound) -> str:  # fmt: skip
    """The Stripe calls of one checkout, in Berth's order, with its parameters."""
    ref = str(uuid.uuid4())
    meta = {"metadata[berth_payment]": ref, "metadata[berth_booking]": ref, "metadata[booking]": "BENCH"}
    v1 = f"{stripe_url}/v1"
    customer = await _stripe(session, tally, "customer", "POST", f"{v1}/customers", secret,
                             {"email": GUEST["emailAddress"], "name": "Bench Mark", **meta}, f"{ref}-customer")  # fmt: skip
    intent = await _stripe(session, tally, "payment", "POST", f"{v1}/payment_intents", secret, {
        "amount": "5000", "currency": "eur", "customer": customer["id"], "payment_method_types[0]": "card", **meta,
    }, f"{ref}-payment")  # fmt: skip
    setup = await _stripe(session, tally, "setup", "POST", f"{v1}/setup_intents", secret, {
        "customer": customer["id"], "usage": "on_session", "payment_method_types[0]": "card", **meta,
    }, f"{ref}-setup")  # fmt: skip
    await _give_card(session, stripe_url, setup["client_secret"], key, tally)
    payment = f"{v1}/payment_intents/{intent['id']}"
    await _stripe(session, tally, "read", "GET", payment, secret)
    given = await _stripe(session, tally, "read setup", "GET", f"{v1}/setup_intents/{setup['id']}", secret)
    await _stripe(
        session, tally, "update", "POST", payment, secret, {"payment_method": given["payment_method"]}
    )
    confirmed = await _stripe(session, tally, "confirm", "POST", f"{payment}/confirm", secret, {})
    if confirmed.get("status") != "succeeded":
        raise StepFailed("confirm not succeeded", json.dumps(confirmed)[:300])
    await _stripe(session, tally, "settle", "GET", payment, secret)
    await _stripe(session, tally, "webhook read", "GET", payment, secret)
    return ""


async def run_stripe_alone(
    stripe_url: str, secret: str, key: str, *, guests: int, seconds: float
) -> CheckoutRound:
    tally = CheckoutRound()

    async def one(session: aiohttp.ClientSession, number: int) -> str:
        return await stripe_checkout(session, stripe_url, secret, key, tally)

    await flush(stripe_url)
    await _rounds_of(guests, seconds, one, tally)
    return tally


async def flush(stripe_url: str) -> None:
    """Empty localstripe's store (its own `/_config` route)."""
    async with aiohttp.ClientSession() as session, session.delete(f"{stripe_url}/_config/data") as answer:
        if answer.status != 200:
            raise BenchError(
                f"localstripe did not empty its store: {answer.status} {(await answer.text())[:200]}"
            )


async def send_webhooks(stripe_url: str, name: str, url: str, secret: str) -> None:
    """Register a webhook endpoint with localstripe (its own `/_config` route)."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{stripe_url}/_config/webhooks/{name}", data={"url": url, "secret": secret}) as answer,
    ):
        if answer.status != 200:
            raise BenchError(f"localstripe refused the webhook endpoint: {answer.status}")


@contextlib.asynccontextmanager
async def webhook_sink() -> AsyncIterator[str]:
    """A webhook endpoint in the bench's process that answers 200 to everything; its URL."""

    async def answer(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(text="{}", content_type="application/json")

    app = web.Application()
    app.router.add_post("/{path:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/webhook"
    finally:
        await runner.cleanup()
