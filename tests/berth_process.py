"""The real `berth` command as a subprocess, and `berth serve` on a real loopback port."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

BERTH = Path(sys.executable).with_name("berth")
PORTS = range(8300, 8400)  # the range these tests may serve on


def berth_environment(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `berth` process: this one's, with no admin token unless `extra`
    sets one."""
    env = {**os.environ, "BERTH_DATABASE_URL": database_url, "BERTH_LOG_LEVEL": "WARNING"}
    env.pop("BERTH_ADMIN_TOKEN", None)
    return {**env, **extra}


def berth(
    *args: str, database_url: str, timeout: float = 60, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """Run `berth ARGS` against `database_url`; its output is captured, never a terminal."""
    return subprocess.run(
        [str(BERTH), *args],
        env=berth_environment(database_url, **extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def free_port() -> int:
    for port in random.sample(PORTS, len(PORTS)):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in {PORTS}")


@contextmanager
def berth_serve(database_url: str, *args: str, log: Path | None = None, **extra_env: str) -> Iterator[str]:
    """`berth serve ARGS` on a free port of PORTS until the block ends, with these extra
    `BERTH_*` settings; yields the base URL. Its output goes to `log` when given (a server
    that logs much would fill a pipe nobody reads)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_file = log.open("wb") if log is not None else None
    process = subprocess.Popen(
        [str(BERTH), "serve", "--port", str(port), *args],
        env=berth_environment(database_url, BERTH_PUBLIC_URL=base, **extra_env),
        stdout=log_file or subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.terminate()  # before reading: a server still running never ends its output
                said = process.communicate(timeout=15)[0] if process.stdout else b""
                raise AssertionError(f"berth serve did not start:\n{said.decode()}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)
        if log_file is not None:
            log_file.close()
