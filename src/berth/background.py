"""Background work, run by `berth worker` and (unless switched off) inside `berth serve`:
sweeping expired holds, fanning out changes and delivering webhooks."""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from berth.container import Services

log = structlog.get_logger("berth.worker")


async def sweep_expired_holds(services: Services, stop: asyncio.Event) -> None:
    """Until `stop` is set: mark due holds EXPIRED every `expiry_sweep_seconds`. Reads never
    count an expired hold anyway; this makes the stored status catch up."""
    interval = services.settings.expiry_sweep_seconds
    while not stop.is_set():
        try:
            catalog = (await services.catalog.snapshot()).catalog
            expired = await services.orders.expire_due(catalog) + await services.expiry.expire_due()
            if expired:
                log.info("expired holds", count=expired)
        except Exception:  # a failed sweep is retried on the next tick; the loop must not die
            log.exception("expiry sweep failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


async def run_background(services: Services, stop: asyncio.Event) -> None:
    """Every background loop, until `stop` is set."""
    await asyncio.gather(sweep_expired_holds(services, stop), services.delivery.run(stop))
