"""Work that would hold up the event loop for a noticeable time (rendering a document, parsing
or comparing a catalogue), run in one bounded pool of threads of the process.

A thread, not a process: the rendering is pure Python (reportlab), so it holds the GIL, but the
interpreter hands the GIL to the event loop's thread every few milliseconds, and the loop goes
on answering requests at a lower rate instead of not at all (measured in docs/decisions.md,
"Documents and imports off the event loop"); a process would cost a second interpreter with
reportlab loaded, a start-up and the copying of every statement. The bound keeps a burst of
documents from taking more of the GIL: beyond it, work waits its turn."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

THREADS = 2

_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(THREADS, thread_name_prefix="berth-offload")
    return _pool


async def off_loop(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`work(*args, **kwargs)` in the pool, awaited; in the caller's context (its log fields)."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, work, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), call)
