"""The audit trail: what staff did, newest first, filtered by who, what it was done to, the
action and the days (in the supplier's time zone)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import date, datetime, time, timedelta
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from berth.domain.audit import AuditEntry, AuditFilter
from berth.domain.calendar import out_of_range, supported
from berth.http.admin.pages.dates import Local, of_supplier
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 50

# What each action did, in words; an action missing here shows as its name.
ACTIONS = {
    "booking.redeem": "Redeemed booking",
    "booking.accept": "Accepted booking",
    "booking.reject": "Rejected booking",
    "booking.cancel": "Cancelled booking",
    "booking.receipt": "Sent the guest a receipt of booking",
    "payment.refund": "Refunded a card payment of booking",
    "payment.desk": "Recorded a payment taken at the desk on booking",
    "gift.cancel": "Cancelled gift voucher",
    "checkin.admit": "Admitted at the gate: booking",
    "checkin.undo": "Took back an admission of booking",
    "mapping.complete": "Mapped listing",
    "connection.create": "Created connection",
    "connection.revoke": "Revoked connection",
    "connection.rotate_secret": "Rotated signing secret of",
    "webhook.redeliver": "Redelivered deliveries of webhook",
    "delivery.redeliver": "Redelivered delivery",
    "departure.close": "Closed departure",
    "departure.reopen": "Reopened departure",
    "departure.capacity": "Changed the capacity of departure",
    "departure.note": "Noted on departure",
    "departure.cancel": "Cancelled departure",
    "allotment.release": "Released early a block of",
    "catalog.import": "Imported the catalogue as",
    "catalog.edit": "Edited the catalogue:",
    "catalog.restore": "Restored an older catalogue as",
    "offers.save": "Saved a new version of",
    "staff.create": "Created staff account",
    "staff.token": "Issued an API token to",
    "staff.disable": "Disabled staff account",
    "staff.password": "Changed the password of",
    "guessing.lockout": "Locked out after wrong guesses:",
}


def target_path(entry: AuditEntry) -> str | None:
    """The back office page of what an entry was done to, where it has one."""
    target = entry.target
    if target.kind == "departure":  # berth.domain.audit.departure_target
        return "/admin/slots/" + "/".join(quote(part, safe="") for part in target.id.split("/", 2))
    pages = {
        "booking": f"/admin/bookings/{quote(target.id)}",
        "mapping": f"/admin/mappings/{quote(target.id)}",
        "webhook": f"/admin/webhooks/{quote(target.id)}",
        "delivery": f"/admin/deliveries/{quote(target.id)}",
        "connection": "/admin/connections",
        "catalog": "/admin/catalog",
        "offers": "/admin/offers",
        "catalog_version": f"/admin/catalog/history/{quote(target.id)}",
    }
    return pages.get(target.kind)


@dataclass(frozen=True)
class AuditSearch:
    """The filter form as sent: every field optional, blank meaning 'any'."""

    actor: str = ""
    target: str = ""
    action: str = ""
    since: str = ""  # first day, in the supplier's zone
    until: str = ""  # last day

    def to_filter(self, local: Local) -> AuditFilter | str:
        """The filter, or what is wrong with the form."""
        days: list[date | None] = []
        for label, text in (("From", self.since), ("To", self.until)):
            try:
                day = date.fromisoformat(text) if text else None
            except ValueError:
                return f"{label}: {text!r} is not a date like 2026-06-02."
            if day is not None and not supported(day):
                return out_of_range(label + ":", day) + "."
            days.append(day)
        first, last = days

        def start_of(day: date) -> datetime:
            return datetime.combine(day, time(), local.tz)

        return AuditFilter(
            actor=self.actor or None,
            target=self.target or None,
            action=self.action or None,
            since=start_of(first) if first else None,
            until=start_of(last + timedelta(days=1)) if last else None,
        )

    @property
    def active(self) -> bool:
        return any(asdict(self).values())

    def page_url(self, number: int) -> str:
        names = {"since": "from", "until": "to"}  # the form's field names
        query = {names.get(key, key): value for key, value in asdict(self).items() if value}
        if number > 1:
            query["page"] = str(number)
        return "/admin/audit" + ("?" + urlencode(query) if query else "")


@router.get("/audit")
async def audit(
    request: Request,
    actor: str = "",
    target: str = "",
    action: str = "",
    since: str = Query(default="", alias="from"),
    until: str = Query(default="", alias="to"),
    page_number: int = Query(default=1, ge=1, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    form = AuditSearch(actor.strip(), target.strip(), action.strip(), since.strip(), until.strip())
    local = of_supplier(me.catalog.catalog)
    where = form.to_filter(local)
    found: list[AuditEntry] = []
    total = 0
    if isinstance(where, AuditFilter):
        offset = (page_number - 1) * PAGE_SIZE
        found, total = await me.services.audit.search(where, PAGE_SIZE, offset)
    return page(
        request,
        "audit.html",
        me,
        section="audit",
        form=form,
        problem=where if isinstance(where, str) else None,
        entries=found,
        total=total,
        page_number=page_number,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        page_size=PAGE_SIZE,
        actions=ACTIONS,
        target_path=target_path,
        local=local,
    )
