"""A real `berth serve` process on a free loopback port, for the browser tests, and a real
webhook receiver on loopback running in a thread of its own next to the (synchronous) browser."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.receivers import Receiver, receiver


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
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                output = process.stdout.read().decode() if process.stdout else ""
                raise AssertionError(f"berth serve did not start:\n{output}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


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
