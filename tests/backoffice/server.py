"""A real `berth serve` process on a free loopback port, for the browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def berth_serve(database: Path, *, demo: bool) -> Iterator[str]:
    """Serve a fresh SQLite database (with the demo and its admin token, or with no admin
    token at all); yields the base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "BERTH_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        "BERTH_PUBLIC_URL": base,
        "BERTH_LOG_LEVEL": "WARNING",
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
