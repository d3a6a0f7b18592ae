"""Free heap pages go back to the system (glibc's malloc_trim), and the loop that does it stops
with the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from berth.background import heap_trimmer, return_freed_memory


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def test_the_heap_pages_a_burst_freed_are_handed_back() -> None:
    trim = heap_trimmer()
    if trim is None:
        pytest.skip("the C library has no malloc_trim (not glibc)")
    trim(0)
    burst = [bytearray(2000) for _ in range(20_000)]  # 40 MB in blocks malloc keeps in its heap
    kept = burst[::100]
    del burst
    before = _rss_kib()
    assert trim(0) == 1, "malloc_trim released nothing"
    assert _rss_kib() < before - 10_000, (before, _rss_kib())
    assert len(kept) == 200


async def test_the_loop_ends_when_the_server_stops() -> None:
    stop = asyncio.Event()
    loop = asyncio.create_task(return_freed_memory(stop))
    await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(loop, timeout=2)
