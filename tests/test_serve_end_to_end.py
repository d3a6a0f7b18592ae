"""`berth serve --demo` as a real process on a real port, the way the README starts it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("serve")
    port = _free_port()
    env = {
        **os.environ,
        "BERTH_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'berth.db'}",
        "BERTH_LOG_LEVEL": "WARNING",
    }
    env.pop("BERTH_ADMIN_TOKEN", None)
    berth = Path(sys.executable).with_name("berth")
    process = subprocess.Popen(
        [str(berth), "serve", "--demo", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
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
                output = process.communicate(timeout=15)[0].decode() if process.stdout else ""
                raise AssertionError(f"berth serve did not start:\n{output}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_demo_server_answers_resellers_and_admin(server: str) -> None:
    plain = httpx.get(server + "/octo/products", headers={"Authorization": "Bearer demo-reseller-a"})
    assert plain.status_code == 200
    assert "title" not in plain.json()[0] and "defaultCurrency" not in plain.json()[0]
    rich = httpx.get(
        server + "/octo/products",
        headers={"Authorization": "Bearer demo-reseller-a", "Octo-Capabilities": "octo/content,octo/pricing"},
    )
    assert rich.json()[0]["title"] == "Thames Sightseeing Cruise"
    assert rich.json()[0]["options"][0]["units"][0]["pricingFrom"][0]["currency"] == "EUR"
    assert httpx.get(
        server + "/octo/supplier", headers={"Authorization": "Bearer demo-reseller-b"}
    ).is_success
    admin = httpx.get(server + "/admin/api/connections", headers={"Authorization": "Bearer demo-admin"})
    assert [c["name"] for c in admin.json()] == [
        "Demo reseller A",
        "Demo reseller B",
        "Harbourside box office",
        "Web shop",
    ]


def test_an_oversized_body_is_refused_over_a_real_socket(server: str) -> None:
    """uvicorn gets the answer before the body is read: the client sees BAD_REQUEST, not a
    reset connection, and the server goes on serving."""
    headers = {"Authorization": "Bearer demo-reseller-a", "Content-Type": "application/json"}
    response = httpx.post(server + "/octo/bookings", content=b" " * (3 * 1024 * 1024), headers=headers)
    assert response.status_code == 400
    assert response.json() == {
        "error": "BAD_REQUEST",
        "errorMessage": "The request body is larger than the limit of 1048576 bytes",
    }

    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            yield b" " * 65536

    streamed = httpx.post(server + "/octo/bookings", content=chunks(), headers=headers)
    assert streamed.status_code == 400 and "larger than the limit" in streamed.json()["errorMessage"]
    assert httpx.get(server + "/octo/supplier", headers=headers).status_code == 200
