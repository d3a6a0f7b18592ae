"""Ticket documents at `/tickets/{token}.pdf` and `.pkpass`: no login, as guests open them from
an email. An unknown token answers 404 saying nothing; a ticket whose booking no longer stands,
410 and a short page in words, with no code to scan. Neither renders anything."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Depends
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from berth.container import Services
from berth.domain.bookings import BookingStatus
from berth.http.context import current_services
from berth.services.tickets import EndedTicket

router = APIRouter()

# Tickets are the guest's: kept out of shared caches and search engines.
HEADERS = {"Cache-Control": "private", "X-Robots-Tag": "noindex"}

WHY_ENDED = {
    BookingStatus.CANCELLED: "The booking was cancelled.",
    BookingStatus.EXPIRED: "The booking expired before it was confirmed.",
    BookingStatus.REJECTED: "The booking was declined by the supplier.",
}

ENDED_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ticket no longer valid</title></head>
<body style="font-family: sans-serif; max-width: 36em; margin: 3em auto; padding: 0 1em">
<h1>This ticket is no longer valid</h1>
<p>{why}</p>
<p>If you think this is a mistake, contact the company you booked with.</p>
</body></html>
"""


def ended_page(ticket: EndedTicket) -> HTMLResponse:
    why = (
        "This ticket was taken off its booking."
        if ticket.removed
        else WHY_ENDED.get(ticket.status, "The booking no longer stands.")
    )
    return HTMLResponse(ENDED_PAGE.format(why=escape(why)), status_code=410, headers=HEADERS)


@router.get(
    "/tickets/{name}",
    summary="A ticket document (PDF or Apple Wallet pass) by the token of its URL",
    responses={404: {"description": "No such ticket"}, 410: {"description": "The ticket no longer stands"}},
)
async def ticket_document(name: str, svc: Services = Depends(current_services)) -> Response:
    return await _document(name, svc)


@router.head("/tickets/{name}", include_in_schema=False)
async def ticket_document_head(name: str, svc: Services = Depends(current_services)) -> Response:
    """As GET answers (status, type, length, file name), without the body: a mail client or
    link checker that asks first does not get 405."""
    found = await _document(name, svc)
    return Response(status_code=found.status_code, headers=dict(found.headers))


async def _document(name: str, svc: Services) -> Response:
    token, _, suffix = name.rpartition(".")
    found = await svc.tickets.by_url(token, suffix)
    if found is None:
        return PlainTextResponse("Not found\n", status_code=404, headers=HEADERS)
    if isinstance(found, EndedTicket):
        return ended_page(found)
    return Response(
        found.content,
        media_type=found.media_type,
        headers={**HEADERS, "Content-Disposition": f'inline; filename="{found.filename}"'},
    )
