"""Webhooks: every connection's webhooks with their pending and failed deliveries, one
webhook's deliveries (newest first, by status), one delivery with its payload, headers and
every attempt; redelivering one delivery, or everything a webhook got since a time."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

import orjson
from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import Response

from berth.domain.errors import NotFound
from berth.domain.webhooks import Webhook, WebhookEvent, parse_schedule
from berth.http.admin.backoffice import delivery_counts, delivery_subject, headers_sent, last_attempts
from berth.http.admin.pages.dates import Local, of_supplier
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, admin_form, staff
from berth.http.context import octo_endpoint
from berth.store.deliveries_repo import DELIVERED, FAILED, PENDING, SENDING, Delivery

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 25
STATUSES = (PENDING, SENDING, DELIVERED, FAILED)

# What makes Berth send each event, for the pages that explain an empty list.
EVENT_CAUSES = {
    WebhookEvent.BOOKING_UPDATE: "one of the connection's bookings is confirmed, changed, cancelled, "
    "expires, is redeemed, or accepted or rejected by you",
    WebhookEvent.ORDER_UPDATE: "one of the connection's orders changes",
    WebhookEvent.AVAILABILITY_UPDATE: "a departure's status, vacancies or capacity change",
    WebhookEvent.PRODUCT_UPDATE: "the catalogue changes",
}


@dataclass(frozen=True)
class WebhookRow:
    webhook: Webhook
    connection: str
    counts: Counter[str]

    @property
    def pending(self) -> int:
        """Waiting to go out: due, scheduled for a retry, or being sent right now."""
        return self.counts[PENDING] + self.counts[SENDING]

    @property
    def failed(self) -> int:
        return self.counts[FAILED]


def duration(seconds: float) -> str:
    """`about 3 days`, `1 hour`, `90 seconds`: a span as people say it."""
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= 1.5 * size or (seconds >= size and seconds % size == 0):
            count = round(seconds / size)
            about = "" if seconds == count * size else "about "
            return f"{about}{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"


def webhook_path(webhook_id: str, status: str = "", page_number: int = 1) -> str:
    query = {"status": status} if status else {}
    if page_number > 1:
        query["page"] = str(page_number)
    return f"/admin/webhooks/{webhook_id}" + ("?" + urlencode(query) if query else "")


async def _connection_names(me: Staff) -> dict[str, str]:
    return {c.id: c.name for c in await me.services.connections.list()}


@router.get("/webhooks")
async def webhooks(
    request: Request,
    connection: str = "",
    page_number: int = Query(default=1, ge=1, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    names = await _connection_names(me)
    everything = await me.services.webhooks.find()
    counts = await delivery_counts(me.services, statuses=(PENDING, SENDING, FAILED))
    shown = [w for w in everything if not connection or w.connection_id == connection]
    # By connection, then in the order they were made.
    shown.sort(
        key=lambda w: (names.get(w.connection_id, w.connection_id).casefold(), w.created_at, w.url, w.id)
    )
    rows = [
        WebhookRow(w, names.get(w.connection_id, w.connection_id), counts.get(w.id, Counter()))
        for w in shown[(page_number - 1) * PAGE_SIZE : page_number * PAGE_SIZE]
    ]

    def pager_url(number: int) -> str:
        query = {"connection": connection} if connection else {}
        if number > 1:
            query["page"] = str(number)
        return "/admin/webhooks" + ("?" + urlencode(query) if query else "")

    return page(
        request,
        "webhooks.html",
        me,
        section="webhooks",
        rows=rows,
        total=len(shown),
        everything=len(everything),
        pending=sum(c[PENDING] + c[SENDING] for c in counts.values()),
        failed=sum(c[FAILED] for c in counts.values()),
        connections=names,
        connection=connection,
        page_number=page_number,
        pages=max(1, math.ceil(len(shown) / PAGE_SIZE)),
        pager_url=pager_url,
        endpoint=octo_endpoint(request),
    )


@router.get("/webhooks/{webhook_id}")
async def webhook(
    webhook_id: str,
    request: Request,
    status: str = "",
    page_number: int = Query(default=1, ge=1, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    hook = await me.services.webhooks.webhook(webhook_id)
    schedule = parse_schedule(me.services.settings.retry_schedule)
    names = await _connection_names(me)
    counts = (await delivery_counts(me.services, webhook_id=hook.id)).get(hook.id, Counter())
    problem = None
    found: list[Delivery] = []
    total = 0
    if status and status not in STATUSES:
        problem = f"{status!r} is not a delivery status: choose one of {', '.join(STATUSES)}."
    else:
        found, total = await me.services.webhooks.deliveries(
            webhook_id=hook.id,
            status=status or None,
            limit=PAGE_SIZE,
            offset=(page_number - 1) * PAGE_SIZE,
        )
    return page(
        request,
        "webhook.html",
        me,
        section="webhooks",
        hook=hook,
        connection=names.get(hook.connection_id, hook.connection_id),
        cause=EVENT_CAUSES[hook.event],
        counts=counts,
        all_count=sum(counts.values()),
        statuses=STATUSES,
        status=status,
        problem=problem,
        deliveries=found,
        latest=await last_attempts(me.services, [d.id for d in found]),
        subjects={d.id: delivery_subject(d) for d in found},
        total=total,
        page_number=page_number,
        page_size=PAGE_SIZE,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        pager_url=lambda number: webhook_path(hook.id, status, number),
        status_url=lambda value: webhook_path(hook.id, value),
        retries=schedule,
        retry_span=duration(sum(schedule)),
        since=of_supplier(me.catalog.catalog).field(me.services.clock() - timedelta(days=1)),
        now=me.services.clock(),
    )


@router.post("/webhooks/{webhook_id}/redeliver")
async def redeliver_since(
    webhook_id: str, since: str = Form(default="", max_length=100), me: Staff = Depends(admin_form)
) -> Response:
    hook = await me.services.webhooks.webhook(webhook_id)
    back = webhook_path(hook.id)
    local = of_supplier(me.catalog.catalog)
    moment = local.read(since)  # wall-clock in the supplier's zone, as the form's label says
    if moment is None:
        text = f"Nothing was requeued: {since.strip()!r} is not a time like 2026-06-01T09:00 ({local.zone} time)."
        return redirect(back, me, Notice("error", text))
    count = await me.services.webhooks.redeliver_since(hook.id, moment, actor=me.actor)
    if count == 0:
        text = f"No delivery of this webhook was made since {local.moment(moment)}: nothing was requeued."
    else:
        text = (
            f"{count} deliver{'ies' if count != 1 else 'y'} made since {local.moment(moment)} requeued: "
            f"{'they go' if count != 1 else 'it goes'} to {hook.url} again now, "
            f"{'each ' if count != 1 else ''}with its original webhook-id."
        )
    return redirect(back, me, Notice("success", text))


@router.get("/deliveries/{delivery_id}")
async def delivery(delivery_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    found, attempts = await me.services.webhooks.delivery(delivery_id)
    names = await _connection_names(me)
    hook: Webhook | None = None
    if found.webhook_id is not None:
        try:
            hook = await me.services.webhooks.webhook(found.webhook_id)
        except NotFound:  # deleted by its reseller since
            hook = None
    return page(
        request,
        "delivery.html",
        me,
        section="webhooks",
        delivery=found,
        hook=hook,
        connection=names.get(found.connection_id, found.connection_id),
        subject=delivery_subject(found),
        attempts=list(reversed(attempts)),
        headers=headers_sent(found),
        payload=orjson.dumps(found.payload, option=orjson.OPT_INDENT_2).decode(),
    )


def _state(delivery: Delivery, local: Local) -> str:
    """What a delivery was doing, in words, for the notice of its redelivery."""
    attempts = f"{delivery.attempts} attempt{'s' if delivery.attempts != 1 else ''}"
    if delivery.status == FAILED:
        return f"it had failed after {attempts}"
    if delivery.status == DELIVERED:
        return "it had been delivered"
    if delivery.status == SENDING:
        return "it was being sent"
    if delivery.attempts:
        return f"it was waiting for a retry at {local.moment(delivery.next_attempt_at)} after {attempts}"
    return "it was waiting to be sent"


@router.post("/deliveries/{delivery_id}/redeliver")
async def redeliver(
    delivery_id: str, back: str = Form(default="delivery"), me: Staff = Depends(admin_form)
) -> Response:
    before, _ = await me.services.webhooks.delivery(delivery_id)
    after = await me.services.webhooks.redeliver(delivery_id, actor=me.actor)
    text = (
        f"Delivery {after.id} ({after.event} of {delivery_subject(after).label}) requeued; "
        f"{_state(before, of_supplier(me.catalog.catalog))}. It goes to {after.url} again now, with the same webhook-id."
    )
    path = f"/admin/deliveries/{after.id}"
    if back == "webhook" and after.webhook_id is not None:
        path = webhook_path(after.webhook_id)
    return redirect(path, me, Notice("success", text))
