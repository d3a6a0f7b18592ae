"""Builds the services from settings: the composition shared by the HTTP app and the CLI."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from berth.delivery.fanout import WebhookFanout
from berth.delivery.worker import DeliveryWorker
from berth.services.availability import AvailabilityService
from berth.services.bookings import BookingService
from berth.services.catalog import CatalogService
from berth.services.clock import Clock, system_clock
from berth.services.connections import ConnectionService
from berth.services.limits import RateLimiter, seconds_of
from berth.services.mappings import MappingService
from berth.services.orders import OrderService
from berth.services.packages import PackageService
from berth.services.resources import ResourceService
from berth.services.webhooks import WebhookService
from berth.settings import Settings
from berth.store.database import Database


@dataclass
class Services:
    settings: Settings
    database: Database
    catalog: CatalogService
    connections: ConnectionService
    availability: AvailabilityService
    bookings: BookingService
    orders: OrderService
    resources: ResourceService
    webhooks: WebhookService
    mappings: MappingService
    fanout: WebhookFanout
    delivery: DeliveryWorker
    packages: PackageService
    rate_limiter: RateLimiter
    # Requests stopped at their deadline that are still unwinding (rolling back) in the
    # background; closing waits for them before it closes the database.
    unwinding: set[asyncio.Task[None]] = field(default_factory=set)

    async def close(self) -> None:
        if self.unwinding:
            await asyncio.wait(set(self.unwinding), timeout=40)
        await self.delivery.close()
        await self.database.dispose()


def build_services(settings: Settings, clock: Clock = system_clock) -> Services:
    database = Database(
        settings.database_url,
        ping_idle_seconds=settings.database_ping_idle_seconds,
        pool_size=settings.database_pool_size,
        max_overflow=settings.database_max_overflow,
    )
    box = settings.secret_box()
    catalog = CatalogService(database, clock)
    availability = AvailabilityService(database, settings, clock)
    fanout = WebhookFanout(database, settings, clock, catalog, availability)
    catalog.observer = fanout
    resources = ResourceService(database, settings, clock)
    bookings = BookingService(database, settings, clock, catalog, fanout, resources)
    orders = OrderService(database, settings, clock, bookings, fanout)
    bookings.orders = orders
    return Services(
        settings=settings,
        database=database,
        catalog=catalog,
        connections=ConnectionService(database, clock, box, settings.auth_cache_seconds),
        availability=availability,
        bookings=bookings,
        orders=orders,
        resources=resources,
        webhooks=WebhookService(database, settings, clock, box),
        mappings=MappingService(database, settings, clock, fanout),
        fanout=fanout,
        delivery=DeliveryWorker(database, settings, clock, fanout, box=box),
        packages=PackageService(database, clock, bookings),
        rate_limiter=RateLimiter(settings, seconds_of(clock)),
    )
