"""The demo's fake Stripe (localstripe beside Berth) never outlives the process that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.berth_process import reserved_port

STARTER = """
import sys, time
from berth import fake_stripe
fake = fake_stripe.start(int(sys.argv[1]))
print(fake.process.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child that ended but was not reaped yet (its parent was killed: init reaps it) is gone too.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ")[-1][0] != "Z"


def test_a_fake_stripe_ends_when_the_process_that_started_it_is_killed() -> None:
    with reserved_port() as port:
        starter = subprocess.Popen(
            [sys.executable, "-c", STARTER, str(port)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert starter.stdout is not None
            child = int(starter.stdout.readline())
            assert _alive(child)
            starter.send_signal(signal.SIGKILL)  # as a server killed, or one whose `finally` never ran
            starter.wait(timeout=10)
            deadline = time.monotonic() + 30
            while _alive(child) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not _alive(child), "localstripe outlived the process that started it"
        finally:
            starter.kill()
            starter.wait()
