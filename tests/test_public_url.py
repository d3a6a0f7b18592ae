"""Where Berth says resellers reach it: the `berth serve` banner, `supplier.endpoint`, the back
office's pages and webhook payloads follow the address Berth listens on, unless
BERTH_PUBLIC_URL names another (then it wins everywhere)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from berth.container import Services
from berth.settings import Settings, listen_url
from tests.backoffice.helpers import csrf_of, text_of
from tests.backoffice.server import free_port, receiver_in_thread
from tests.conftest import auth
from tests.receivers import Received

RESELLER = {"Authorization": "Bearer demo-reseller-a"}


@dataclass
class Served:
    base: str  # where the test reaches the server
    process: subprocess.Popen[bytes]

    def output(self) -> str:
        """Everything the process printed, once it has stopped, with line wrapping undone."""
        assert self.process.stdout is not None
        return " ".join(self.process.stdout.read().decode().split())


@contextmanager
def serve(tmp_path: Path, port: int, environment: dict[str, str]) -> Iterator[Served]:
    """`berth serve --demo --port PORT` with no BERTH_PUBLIC_URL unless `environment` sets one."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("BERTH_PUBLIC_URL", "BERTH_ADMIN_TOKEN", "BERTH_LISTEN_URL")
    }
    env |= {
        "BERTH_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'berth.db'}",
        "BERTH_LOG_LEVEL": "WARNING",
        **environment,
    }
    berth = Path(sys.executable).with_name("berth")
    process = subprocess.Popen(
        [str(berth), "serve", "--demo", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    served = Served(f"http://127.0.0.1:{port}", process)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(served.base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"berth serve did not start:\n{served.output()}")
            time.sleep(0.1)
        yield served
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=15)


def back_office_text(base: str, path: str) -> str:
    """A back office page as staff read it, signed in with the demo's admin token."""
    with httpx.Client(base_url=base) as browser:
        form = browser.get("/admin/sign-in")
        signed_in = browser.post(
            "/admin/sign-in",
            data={"password": "demo-admin", "csrf_token": csrf_of(form.text), "next": "/admin"},
        )
        assert signed_in.status_code == 303, signed_in.text
        page = browser.get(path)
        assert page.status_code == 200, page.text
        return text_of(page.text)


def first_payload(base: str, target_url: str, requests: list[Received]) -> dict[str, Any]:
    """Subscribe to availability_update, hold a cruise place, and wait for the delivery (made by
    the background worker: no request is at hand to say how Berth was reached)."""
    subscribed = httpx.post(
        base + "/octo/webhooks", json={"event": "availability_update", "url": target_url}, headers=RESELLER
    )
    assert subscribed.status_code == 200, subscribed.text
    query = {"productId": "thames-sightseeing", "optionId": "DEFAULT", "localDateStart": "2099-06-01"}
    query["localDateEnd"] = "2099-06-07"
    slot = next(s for s in httpx.post(base + "/octo/availability", json=query, headers=RESELLER).json())
    body = {
        "productId": "thames-sightseeing",
        "optionId": "DEFAULT",
        "availabilityId": slot["id"],
        "unitItems": [{"unitId": "adult"}],
    }
    held = httpx.post(base + "/octo/bookings", json=body, headers=RESELLER)
    assert held.status_code == 200, held.text
    deadline = time.monotonic() + 20
    while not requests:
        if time.monotonic() > deadline:
            raise AssertionError("no webhook delivery arrived")
        time.sleep(0.05)
    payload: dict[str, Any] = json.loads(requests[0].body)
    return payload


WEBHOOKS = {"BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}


def test_without_a_public_url_berth_names_the_port_it_serves_on(tmp_path: Path) -> None:
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/octo"
    with serve(tmp_path, port, WEBHOOKS) as served, receiver_in_thread() as target:
        supplier = httpx.get(served.base + "/octo/supplier", headers=RESELLER).json()
        assert supplier["endpoint"] == endpoint
        assert f"POST {endpoint}/webhooks" in back_office_text(served.base, "/admin/webhooks")
        assert f"connects to {endpoint} " in back_office_text(served.base, "/admin/connections")
        assert f"PUT {endpoint}/mappings" in back_office_text(served.base, "/admin/mappings")
        assert first_payload(served.base, target.url, target.requests)["supplier"]["endpoint"] == endpoint
    assert f"Berth serving the OCTO API at {endpoint} " in served.output()


def test_a_public_url_wins_everywhere(tmp_path: Path) -> None:
    public = "http://tours.example:9000/berth"
    environment = {"BERTH_PUBLIC_URL": public + "/", **WEBHOOKS}
    with serve(tmp_path, free_port(), environment) as served, receiver_in_thread() as target:
        supplier = httpx.get(served.base + "/octo/supplier", headers=RESELLER).json()
        assert supplier["endpoint"] == public + "/octo"
        assert f"POST {public}/octo/webhooks" in back_office_text(served.base, "/admin/webhooks")
        assert first_payload(served.base, target.url, target.requests)["supplier"]["endpoint"] == (
            public + "/octo"
        )
    assert f"Berth serving the OCTO API at {public}/octo " in served.output()


async def test_without_a_public_url_an_answer_names_the_address_its_request_came_in_on(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """E.g. `berth serve --host 0.0.0.0`: each reseller is told the address it used itself."""
    for base in ("http://berth.test", "http://10.1.2.3:8300", "http://[::1]:8301"):
        supplier = (await client.get(base + "/octo/supplier", headers=auth())).json()
        assert supplier["endpoint"] == base + "/octo"


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        ("127.0.0.1", 8201, "http://127.0.0.1:8201"),
        ("localhost", 8300, "http://localhost:8300"),
        ("::1", 8300, "http://[::1]:8300"),
        ("0.0.0.0", 8300, f"http://{socket.gethostname()}:8300"),
        ("::", 8300, f"http://{socket.gethostname()}:8300"),
        ("", 8300, f"http://{socket.gethostname()}:8300"),
    ],
)
def test_the_listen_url_of_a_host_and_port(host: str, port: int, expected: str) -> None:
    assert listen_url(host, port) == expected


def test_the_public_url_wins_over_the_request_and_the_listen_url() -> None:
    settings = Settings(public_url="https://tours.example/", listen_url="http://127.0.0.1:8300")
    assert settings.octo_endpoint("http://berth.test/") == "https://tours.example/octo"
    assert settings.octo_endpoint() == "https://tours.example/octo"
    unset = Settings(listen_url="http://127.0.0.1:8300")
    assert unset.octo_endpoint("http://berth.test/") == "http://berth.test/octo"
    assert unset.octo_endpoint() == "http://127.0.0.1:8300/octo"
