"""Builds the services from settings: the composition shared by the HTTP app and the CLI."""

from __future__ import annotations

from dataclasses import dataclass

from berth.services.availability import AvailabilityService
from berth.services.bookings import BookingService
from berth.services.catalog import CatalogService
from berth.services.clock import Clock, system_clock
from berth.services.connections import ConnectionService
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

    async def close(self) -> None:
        await self.database.dispose()


def build_services(settings: Settings, clock: Clock = system_clock) -> Services:
    database = Database(settings.database_url)
    return Services(
        settings=settings,
        database=database,
        catalog=CatalogService(database, clock),
        connections=ConnectionService(database, clock),
        availability=AvailabilityService(database, settings, clock),
        bookings=BookingService(database, settings, clock),
    )
