"""Stripe in states localstripe never takes, and Stripe out of reach, on real loopback servers.

- `StripeInFront`: an HTTP server in front of localstripe that passes every request on and
  answers what localstripe answers, but for refunds told to stand otherwise, as Stripe's refunds
  can (documented): `pending` for days, then `succeeded` or `failed` with a `failure_reason`
  (localstripe's refunds always succeed at once); or a refund Stripe refuses outright (an error
  answer instead of the refund); or a request carried out whose answer is lost on its way.
- `silent_server`: a server that takes connections and never answers (Stripe slow).

Berth is pointed at them with BERTH_STRIPE_API_BASE, as at Stripe itself."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from berth.fake_stripe import FakeStripe
from tests.berth_process import reserved_port

PASSED_ON = ("Authorization", "Content-Type", "Idempotency-Key", "Stripe-Version")


@dataclass
class StripeInFront:
    fake: FakeStripe
    url: str = ""
    # Refunds that stand otherwise than localstripe says, by id: the fields answered instead
    # (`status`, `failure_reason`).
    refunds: dict[str, dict[str, Any]] = field(default_factory=dict)
    # How the next refunds made stand ("pending"), or None: as localstripe says.
    new_refunds: str | None = None
    # An error Stripe answers the next refunds asked for instead (status, message), or None.
    refusal: tuple[int, str] | None = None
    made: list[str] = field(default_factory=list)  # the refunds made through it, in order
    # A request whose answer never comes back (`lose_answer`): the one of this number, counted
    # from the arming; `answer_lost` is set once Stripe has carried it out.
    losing: int | None = None
    losing_on: str = ""  # only requests whose path ends so are counted
    requests: int = 0
    answer_lost: asyncio.Event = field(default_factory=asyncio.Event)
    _gone: asyncio.Event = field(default_factory=asyncio.Event)  # the lost answer's caller is

    def lose_answer(self, request: int | None, on: str = "") -> asyncio.Event:
        """Count requests from now (those whose path ends with `on`); Stripe carries out the
        `request`-th, and its answer is never sent (the caller crashed while it was on its
        way). None: lose none (and let go of a connection whose answer was lost)."""
        self._gone.set()
        self.losing, self.losing_on, self.requests = request, on, 0
        self.answer_lost, self._gone = asyncio.Event(), asyncio.Event()
        return self.answer_lost

    def _as_they_stand(self, obj: dict[str, Any]) -> dict[str, Any]:
        if obj.get("object") == "refund" and obj.get("id") in self.refunds:
            return {**obj, **self.refunds[obj["id"]]}
        if obj.get("object") == "list":
            return {**obj, "data": [self._as_they_stand(item) for item in obj["data"]]}
        return obj

    async def _pass_on(self, request: web.Request) -> web.Response:
        creating_refund = request.method == "POST" and request.path == "/v1/refunds"
        if creating_refund and self.refusal is not None:
            status, message = self.refusal
            error = {"error": {"type": "invalid_request_error", "message": message}}
            return web.json_response(error, status=status)
        headers = {name: request.headers[name] for name in PASSED_ON if name in request.headers}
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                request.method,
                f"{self.fake.url}{request.path_qs}",
                data=await request.read(),
                headers=headers,
            ) as answer,
        ):
            status, body = answer.status, await answer.json()
        if creating_refund and status == 200:
            self.made.append(body["id"])
            if self.new_refunds is not None:
                self.refunds[body["id"]] = {"status": self.new_refunds}
        self.requests += request.path.endswith(self.losing_on)
        if self.requests == self.losing:
            self.answer_lost.set()
            await self._gone.wait()
            raise ConnectionResetError("the answer is lost")
        return web.Response(
            status=status, body=json.dumps(self._as_they_stand(body)), content_type="application/json"
        )


@asynccontextmanager
async def stripe_in_front(fake: FakeStripe) -> AsyncIterator[StripeInFront]:
    front = StripeInFront(fake)
    app = web.Application()
    app.router.add_route("*", "/{path:.*}", front._pass_on)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    with reserved_port() as port:
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        front.url = f"http://127.0.0.1:{port}"
        try:
            yield front
        finally:
            front.lose_answer(None)
            await runner.cleanup()


@asynccontextmanager
async def silent_server() -> AsyncIterator[str]:
    """A server on loopback that takes each connection and never answers; its URL."""
    held: list[asyncio.StreamWriter] = []

    async def take(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # read nothing, answer nothing, keep it open

    with reserved_port() as port:
        server = await asyncio.start_server(take, "127.0.0.1", port)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.close()
            for writer in held:
                writer.close()
            await server.wait_closed()
