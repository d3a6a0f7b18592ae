"""The outbox: guests' emails, newest first (the demo's mailbox when no SMTP server is set),
one message as the guest sees it, and sending a booking's receipt from its page."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import HTMLResponse, Response

from berth.domain.errors import NotFound, OctoError
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, operator_form, staff
from berth.store.mail_repo import STATUSES

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 50
# A message's HTML is shown in a sandboxed frame, from a response that may run nothing and
# load nothing: what a guest's name or the catalogue put in it can do no harm here.
MESSAGE_HTML_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
}


def _page_url(status: str, number: int) -> str:
    query = {"status": status} if status else {}
    if number > 1:
        query["page"] = str(number)
    return "/admin/outbox" + ("?" + urlencode(query) if query else "")


@router.get("/outbox")
async def outbox(
    request: Request,
    status: str = "",
    page_number: int = Query(default=1, ge=1, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    problem = f"{status!r} is not a message status." if status and status not in STATUSES else None
    found, total = await me.services.mail.outbox(
        None if problem else status or None, PAGE_SIZE, (page_number - 1) * PAGE_SIZE
    )
    return page(
        request,
        "outbox.html",
        me,
        section="outbox",
        messages=found,
        total=total,
        status=status,
        statuses=STATUSES,
        problem=problem,
        smtp=me.services.settings.smtp_url is not None,
        page_number=page_number,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        page_url=lambda number: _page_url(status, number),
    )


@router.get("/outbox/{message_id}")
async def message(message_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    found = await me.services.mail.message(message_id)
    return page(request, "message.html", me, section="outbox", message=found)


@router.get("/outbox/{message_id}/html")
async def message_html(message_id: str, me: Staff = Depends(staff)) -> Response:
    found = await me.services.mail.message(message_id)
    if found.written is None:
        raise NotFound(f"Message {message_id!r} is not written out yet")
    return HTMLResponse(found.written.html_body, headers=MESSAGE_HTML_HEADERS)


@router.post("/bookings/{booking_id}/receipt")
async def send_receipt(
    booking_id: str, to: str = Form(default="", max_length=254), me: Staff = Depends(operator_form)
) -> Response:
    back = f"/admin/bookings/{booking_id}"
    try:
        sent = await me.services.mail.send_receipt(booking_id, me.actor, to.strip() or None)
    except NotFound:
        raise
    except OctoError as exc:
        return redirect(back, me, Notice("error", f"No receipt sent: {exc.message}"))
    if sent.recipient is None:
        return redirect(back, me, Notice("error", f"No receipt sent: {sent.error}."))
    return redirect(back, me, Notice("success", f"Receipt queued for {sent.recipient}: “{sent.subject}”."))
