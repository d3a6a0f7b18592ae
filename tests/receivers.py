"""Real HTTP receivers on loopback for delivery tests: each answers with the statuses it is
told to, in order, and records every request it got."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn
from starlette.types import Receive, Scope, Send


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class Receiver:
    statuses: deque[int] = field(default_factory=deque)
    default_status: int = 200
    extra_headers: dict[str, str] = field(default_factory=dict)
    requests: list[Received] = field(default_factory=list)
    url: str = ""
    delay: float = 0.0  # seconds to take before answering
    overlapping: list[str] = field(default_factory=list)  # message ids received while one was open
    _open: dict[str, int] = field(default_factory=dict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        message = headers.get("webhook-id", "")
        self._open[message] = self._open.get(message, 0) + 1
        if self._open[message] > 1:
            self.overlapping.append(message)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self._open[message] -= 1
        self.requests.append(Received(scope["path"], headers, body))
        status = self.statuses.popleft() if self.statuses else self.default_status
        extra = [(k.encode(), v.encode()) for k, v in self.extra_headers.items()]
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain"), *extra],
            }
        )
        await send({"type": "http.response.body", "body": f"answered {status}".encode()})

    def payloads(self) -> list[Any]:
        return [r.json for r in self.requests]

    @property
    def in_flight(self) -> int:
        """Requests received and not yet answered."""
        return sum(self._open.values())


@contextlib.asynccontextmanager
async def receiver(*statuses: int, default_status: int = 200, path: str = "/hook") -> AsyncIterator[Receiver]:
    """A receiver listening on a free loopback port for the duration of the block."""
    app = Receiver(statuses=deque(statuses), default_status=default_status)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    app.url = f"http://127.0.0.1:{port}{path}"
    try:
        yield app
    finally:
        server.should_exit = True
        await task


@dataclass
class StallingReceiver:
    """A raw TCP receiver that misbehaves in the way `mode` says:

    - "silent": accepts the connection, reads the request and never answers;
    - "trickle-headers": sends a status line, then one header byte every 0.1 s, forever;
    - "trickle-body": sends complete 200 headers, then one body byte every 0.1 s, forever;
    - "answer": answers 200 at once (a receiver that got better).

    `given_up` counts the connections the sender closed while this receiver was still stalling;
    `on_give_up` runs at that moment."""

    mode: str
    url: str = ""
    requests: int = 0
    given_up: int = 0
    on_give_up: Callable[[], None] | None = None
    _handlers: set[asyncio.Task[Any]] = field(default_factory=set)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            await reader.readexactly(_content_length(head))
            self.requests += 1
            if self.mode == "answer":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                await writer.drain()
                return
            if self.mode == "silent":
                await reader.read()  # b"" once the sender closes its end
            else:
                headers_end = b"" if self.mode == "trickle-headers" else b"Content-Length: 100000\r\n\r\n"
                writer.write(b"HTTP/1.1 200 OK\r\n" + headers_end)
                while not reader.at_eof():
                    await writer.drain()
                    await asyncio.sleep(0.1)
                    writer.write(b"x")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the sender closed while this receiver was writing
        finally:
            writer.close()
            self._handlers.discard(task)
        self.given_up += 1
        if self.on_give_up is not None:
            self.on_give_up()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


@contextlib.asynccontextmanager
async def stalling_receiver(mode: str, path: str = "/hook") -> AsyncIterator[StallingReceiver]:
    app = StallingReceiver(mode)
    server = await asyncio.start_server(app.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    app.url = f"http://127.0.0.1:{port}{path}"
    try:
        yield app
    finally:
        server.close()
        for task in list(app._handlers):
            task.cancel()
        await asyncio.gather(*app._handlers, return_exceptions=True)
        await server.wait_closed()
