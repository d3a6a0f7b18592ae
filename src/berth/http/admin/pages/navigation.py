"""The back office's sections, in menu order. A new section (the mappings inbox, say) is a
module of routes in this package plus one entry here."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.staff import Role


@dataclass(frozen=True)
class Section:
    id: str
    label: str
    path: str
    role: Role = Role.VIEWER  # shown to the roles that may open it


NAVIGATION = (
    Section("dashboard", "Dashboard", "/admin"),
    Section("bookings", "Bookings", "/admin/bookings"),
    Section("payments", "Payments", "/admin/payments"),
    Section("departures", "Departures", "/admin/departures"),
    Section("catalog", "Catalogue", "/admin/catalog"),
    Section("offers", "Offers", "/admin/offers"),
    Section("gifts", "Gifts", "/admin/gifts"),
    Section("mappings", "Mappings", "/admin/mappings"),
    Section("webhooks", "Webhooks", "/admin/webhooks"),
    Section("connections", "Connections", "/admin/connections"),
    Section("audit", "Audit", "/admin/audit"),
    Section("staff", "Staff", "/admin/staff", Role.ADMIN),
    Section("outbox", "Outbox", "/admin/outbox"),
    Section("checkin", "Check-in", "/admin/checkin"),
)
