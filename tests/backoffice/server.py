"""A real `berth serve` process on a free loopback port, for the browser tests; the demo served
from a thread of this process on a clock the test sets (for pages that depend on the time of
day); and a real webhook receiver on loopback running in a thread of its own next to the
(synchronous) browser."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from berth.app import create_app
from berth.container import Services, build_services
from berth.demo.loader import DEMO_ADMIN_TOKEN, load_demo
from berth.settings import Settings
from berth.store.migrate import upgrade
from tests.conftest import Clock
from tests.receivers import Receiver, receiver

# What a server on a test clock serves: the demo, or a test's own catalogue.
Load = Callable[[Services], Awaitable[object]]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def berth_serve(database: Path, *, demo: bool, environment: dict[str, str] | None = None) -> Iterator[str]:
    """Serve a fresh SQLite database (with the demo and its admin token, or with no admin
    token at all), with these extra `BERTH_*` settings; yields the base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "BERTH_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        "BERTH_PUBLIC_URL": base,
        "BERTH_LOG_LEVEL": "WARNING",
        **(environment or {}),
    }
    env.pop("BERTH_ADMIN_TOKEN", None)
    berth = Path(sys.executable).with_name("berth")
    command = [str(berth), "serve", "--port", str(port), *(["--demo"] if demo else [])]
    if not demo:  # only the demo makes its database; a plain `berth serve` needs one made first
        subprocess.run([str(berth), "db", "upgrade"], env=env, capture_output=True, check=True, timeout=120)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120  # under load, starting takes over 30 s
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.terminate()  # before reading: a server still running never ends its output
                output = process.communicate(timeout=15)[0].decode() if process.stdout else ""
                raise AssertionError(f"berth serve did not start:\n{output}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


@contextmanager
def berth_on_clock(
    database: Path, clock: Clock, load: Load = load_demo, settings: dict[str, Any] | None = None
) -> Iterator[str]:
    """The application `berth serve --demo` runs, on a fresh SQLite database, served over HTTP
    from a thread of its own with its event loop, reading the time from `clock` (which the test
    may move on); yields the base URL. `load`: what it serves instead of the demo; `settings`:
    more of its settings (card payments through a fake Stripe, say)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    served = Settings(
        database_url=f"sqlite+aiosqlite:///{database}",
        public_url=base,
        admin_token=DEMO_ADMIN_TOKEN,
        log_level="WARNING",
        rate_limit_per_minute=0,
        run_worker=False,
        **(settings or {}),
    )
    loop = asyncio.new_event_loop()
    started = threading.Event()
    failed: list[BaseException] = []
    stop = asyncio.Event()

    async def serve() -> None:
        services = build_services(served, clock)
        try:
            await upgrade(services.database, served.secret_box())
            await load(services)
            config = uvicorn.Config(
                create_app(services=services), host="127.0.0.1", port=port, log_level="error"
            )
            server = uvicorn.Server(config)
            task = asyncio.create_task(server.serve())
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
            started.set()
            await stop.wait()
            server.should_exit = True
            await task
        except BaseException as exc:
            failed.append(exc)
            started.set()
        finally:
            await services.close()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        if not started.wait(30) or failed:
            raise AssertionError(f"Berth did not start: {failed}")
        yield base
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(15)
        loop.close()


@contextmanager
def receiver_in_thread(*statuses: int, default_status: int = 200) -> Iterator[Receiver]:
    """`tests.receivers.receiver` on its own event loop in a background thread: it answers with
    `statuses` in order, then `default_status`, and records every request."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    found: list[Receiver] = []
    stop = asyncio.Event()

    async def serve() -> None:
        async with receiver(*statuses, default_status=default_status) as target:
            found.append(target)
            started.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        if not started.wait(10) or not found:
            raise AssertionError("the webhook receiver did not start")
        yield found[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()
