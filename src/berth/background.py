"""Background work, run by `berth worker` and (unless switched off) inside `berth serve`:
sweeping expired holds, fanning out changes, delivering webhooks and sending guests' emails."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
from collections.abc import Callable

import structlog

from berth import __version__
from berth.container import Services
from berth.settings import Settings
from berth.store.faults import log_failure
from berth.store.urls import describe_database

log = structlog.get_logger("berth.worker")

TRIM_EVERY_SECONDS = 10.0


def log_start(process: str, settings: Settings) -> None:
    """One line as a process starts, in the configured log format: what it is and the settings
    that decide what it does (never a secret, only whether one is set)."""
    log.info(
        "berth started",
        process=process,
        version=__version__,
        pid=os.getpid(),
        database=describe_database(settings.database_url),
        public_url=settings.public_url,
        runs_worker=process == "worker" or settings.run_worker,
        secret_key_set=settings.secret_key is not None,
        rate_limit_per_minute=settings.rate_limit_per_minute,
        log_level=settings.log_level.upper(),
        log_format=settings.log_format,
    )


async def sweep_expired_holds(services: Services, stop: asyncio.Event) -> None:
    """Until `stop` is set: mark due holds EXPIRED every `expiry_sweep_seconds` (gift vouchers'
    holds and vouchers past their validity too), and record (and announce) the allotment blocks
    whose release time has come. Reads never count an expired hold or a block past its release
    anyway; this makes the stored state catch up."""
    interval = services.settings.expiry_sweep_seconds
    while not stop.is_set():
        try:
            catalog = (await services.catalog.snapshot()).catalog
            expired = await services.orders.expire_due(catalog) + await services.expiry.expire_due()
            if expired:
                log.info("expired holds", count=expired)
            gifts = await services.gifts.expire_due()
            if gifts:
                log.info("expired gifts", count=gifts)
            released = await services.allotments.release_due(catalog)
            if released:
                log.info("allotment blocks released", count=released)
        except Exception as exc:  # a failed sweep is retried on the next tick; the loop must not die
            log_failure(log, "expiry sweep failed", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


async def sweep_payments(services: Services, stop: asyncio.Event) -> None:
    """Until `stop` is set: every `payment_sweep_seconds`, settle card payments left half-way
    (a guest who closed the tab, a crash between the capture and the confirmation) and follow
    refunds the provider has not finished (`Payments.sweep`)."""
    if services.payments.provider is None:
        return
    while not stop.is_set():
        try:
            catalog = (await services.catalog.snapshot()).catalog
            looked_at = await services.payments.sweep(catalog)
            if looked_at:
                log.info("payments swept", count=looked_at)
        except Exception as exc:  # retried on the next tick; the loop must not die
            log_failure(log, "payments sweep failed", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=services.settings.payment_sweep_seconds)


async def run_background(services: Services, stop: asyncio.Event) -> None:
    """Every background loop, until `stop` is set."""
    await asyncio.gather(
        sweep_expired_holds(services, stop),
        services.delivery.run(stop),
        services.mailer.run(stop),
        sweep_payments(services, stop),
    )


def heap_trimmer() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None where the C library has none (musl, macOS)."""
    try:
        trim = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


async def return_freed_memory(stop: asyncio.Event) -> None:
    """Until `stop` is set: every TRIM_EVERY_SECONDS, hand the free pages of the C heap back to
    the system (`malloc_trim`, well under a millisecond). glibc keeps what a burst of requests
    freed for reuse: 6 MB of a bench worker's 141 MB after the seat-map reservations, memory the
    process no longer uses but the system counts as its own."""
    trim = heap_trimmer()
    if trim is None:
        return
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=TRIM_EVERY_SECONDS)
        trim(0)
