"""A fake Stripe beside Berth for the demo and the tests: localstripe (a stateful Stripe server
with a Stripe.js stand-in and signed webhooks, a development dependency), run as a child process
on a loopback port, its webhooks sent to Berth.

`berth serve --demo` with no BERTH_STRIPE_SECRET_KEY starts one and stops it with the server;
the tests start one per module (`tests/stripe_helpers.py`). `python -m berth.fake_stripe --port N`
is the child itself: localstripe's server on 127.0.0.1 (its own command listens on every
interface), keeping its state in memory (its own command also writes every change to one file
shared by every localstripe of the machine)."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

SECRET_KEY = "sk_test_berth_localstripe"
PUBLISHABLE_KEY = "pk_test_berth_localstripe"
WEBHOOK_SECRET = "whsec_berth_localstripe"
WEBHOOK_PATH = "/payments/stripe/webhook"
START_SECONDS = 30.0
PARENT_CHECK_SECONDS = 0.5


def available() -> bool:
    """Whether localstripe is installed here (it is a development dependency)."""
    return importlib.util.find_spec("localstripe") is not None


@dataclass
class FakeStripe:
    """A running localstripe: its address and the settings that point Berth at it."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        return {
            "BERTH_STRIPE_SECRET_KEY": SECRET_KEY,
            "BERTH_STRIPE_PUBLISHABLE_KEY": PUBLISHABLE_KEY,
            "BERTH_STRIPE_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "BERTH_STRIPE_API_BASE": self.url,
        }

    def send_webhooks_to(self, berth_url: str) -> None:
        """Register Berth's webhook endpoint (localstripe's own `/_config` route)."""
        body = urllib.parse.urlencode(
            {"url": berth_url.rstrip("/") + WEBHOOK_PATH, "secret": WEBHOOK_SECRET}
        ).encode()
        request = urllib.request.Request(f"{self.url}/_config/webhooks/berth", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=5):
            pass

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(port: int, *, log: int | None = subprocess.DEVNULL) -> FakeStripe:
    """localstripe on 127.0.0.1:`port`, answering once this returns."""
    process = subprocess.Popen(
        [sys.executable, "-m", "berth.fake_stripe", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    fake = FakeStripe(port, process)
    deadline = time.monotonic() + START_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"localstripe stopped as it started (exit code {process.returncode})")
        try:
            with urllib.request.urlopen(f"{fake.url}/js.stripe.com/v3/", timeout=1):
                return fake
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                fake.stop()
                raise RuntimeError(
                    f"localstripe did not answer on port {port} within {START_SECONDS:.0f} s"
                ) from None
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    from aiohttp import web
    from localstripe import resources, server

    resources.Store.dump_to_disk = lambda self: None
    server.app.on_startup.append(_ending_with(os.getppid()))
    web.run_app(server.app, host="127.0.0.1", port=port, print=None, access_log=None)


def _ending_with(parent: int) -> Callable[[Any], Awaitable[None]]:
    """An aiohttp start-up hook that ends this process once `parent` is gone. A server stopped
    by a signal may never run the code that stops its fake Stripe (uvicorn raises SIGTERM again
    after its shutdown, and SIGKILL runs nothing), and a localstripe left behind would keep its
    port and memory for good. Its state is in memory only: nothing is lost by ending at once."""

    async def watch() -> None:
        while True:
            await asyncio.sleep(PARENT_CHECK_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    async def start(app: Any) -> None:
        app["parent_watch"] = asyncio.get_running_loop().create_task(watch())

    return start


if __name__ == "__main__":
    main()
