"""The gate's scanner (phone first): the departures to check in, today's first, and one
departure's scanner page, an installable web app that goes on scanning offline. Its script
calls the JSON routes here, which take the session cookie and its CSRF token in a header
(the admin API under /admin/api wants a bearer token a phone's browser does not hold)."""

from __future__ import annotations

import asyncio
import functools
import hmac
import struct
import zlib
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import quote, urlencode

import orjson
from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from berth.domain.catalog import Product
from berth.domain.checkin import Departure, check_nonce
from berth.domain.errors import NotFound, Unauthorized
from berth.domain.staff import Role
from berth.http.admin.backoffice import DaySlots, coming_days
from berth.http.admin.checkin import ScanBody, UndoBody, departure_parties
from berth.http.admin.pages.dates import of_product, of_supplier
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import PAGE_HEADERS, page
from berth.http.admin.pages.session import Staff, current_staff, staff
from berth.http.admin.pages.static import FILES, static_url
from berth.http.responses import json_response
from berth.views.checkin import scan_json, undo_json

router = APIRouter(route_class=PageRoute)
api = APIRouter()
SCOPE = "/admin/checkin"
ICON_SIZES = (192, 512)
CSRF_HEADER = "x-csrf-token"
# The scanner's decoder is WebAssembly, which a page may compile only with 'wasm-unsafe-eval'
# (it allows no JavaScript eval); every other back-office page keeps the plain policy.
SCANNER_POLICY = PAGE_HEADERS["Content-Security-Policy"] + "; script-src 'self' 'wasm-unsafe-eval'"
# The scanner's icon: a ticket in a gate's green, drawn here rather than shipped as an image.
ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 96 96"><rect width="96" height="96" rx="18" '
    'fill="#1d7a46"/><path d="M22 30h52v12a6 6 0 0 0 0 12v12H22V54a6 6 0 0 0 0-12z" fill="#fff"/>'
    '<path d="M38 48l7 7 13-14" stroke="#1d7a46" stroke-width="6" fill="none" stroke-linecap="round" '
    'stroke-linejoin="round"/></svg>'
)


def scanner_path(product_id: str, option_id: str, availability_id: str) -> str:
    return (
        f"{SCOPE}/{quote(product_id, safe='')}/{quote(option_id, safe='')}/{quote(availability_id, safe='')}"
    )


async def _gate_staff(request: Request, needed: Role) -> Staff:
    """The signed-in member of staff calling the scanner's JSON routes: UNAUTHORIZED when the
    session is gone (the page then drops what it kept), the CSRF header on every POST, the role."""
    found = await current_staff(request)
    if found is None or (found.member is not None and found.member.must_change_password):
        raise Unauthorized("Sign in to the back office again to go on scanning")
    if request.method == "POST":
        sent = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(sent.encode(), found.csrf.encode()):
            raise Unauthorized("The scanner's session has changed: reload the page")
    found.actor.require(needed, f"{request.method} {request.url.path}")
    return found


async def gate_viewer(request: Request) -> Staff:
    return await _gate_staff(request, Role.VIEWER)


async def gate_operator(request: Request) -> Staff:
    return await _gate_staff(request, Role.OPERATOR)


def picked_day(text: str, today: date) -> date:
    """The day `YYYY-MM-DD` names (in years a zone's rules reach); `today` for anything else."""
    try:
        picked = date.fromisoformat(text.strip())
    except ValueError:
        return today
    return picked if 1970 <= picked.year <= 2999 else today


def departures_path(product: Product | None, day: date) -> str:
    query = {"product": product.id, "date": day.isoformat()} if product else {"date": day.isoformat()}
    return f"{SCOPE}?{urlencode(query)}"


@dataclass(frozen=True)
class Day:
    """A day of the departure list: `title` says which (`Today`, or its date), `when` as a
    sentence ends (`today`, `on Mon 30 Nov 2026`)."""

    title: str
    when: str
    on: date
    slots: DaySlots


@router.get("/checkin")
async def departures(
    request: Request,
    product: str = Query(default="", max_length=200),
    day: str = Query(default="", alias="date", max_length=10),
    me: Staff = Depends(staff),
) -> Response:
    """Today's and tomorrow's departures first; a product and any date to pick."""
    catalog = me.catalog.catalog
    chosen = catalog.product(product) if product else None
    local = of_product(chosen) if chosen else of_supplier(catalog)
    today = me.services.clock().astimezone(local.tz).date()
    first = picked_day(day, today)
    products = [chosen] if chosen else None
    # Today's list takes each product's own today; a picked date is that date everywhere.
    found = await coming_days(
        me.services, catalog, products=products, first=None if first == today else first
    )
    names = {today: "Today", today + timedelta(days=1): "Tomorrow", today - timedelta(days=1): "Yesterday"}
    shown = []
    for listed in found:
        on = first + timedelta(days=listed.offset)
        title = names.get(on, local.day(on))
        shown.append(Day(title, title.lower() if on in names else f"on {title}", on, listed))
    return page(
        request, "checkin_departures.html", me, section="checkin", days=shown, scanner=scanner_path,
        local=local, chosen=chosen, first=first, today=today,
        earlier=departures_path(chosen, first - timedelta(days=1)),
        later=departures_path(chosen, first + timedelta(days=1)),
        this_day=departures_path(chosen, today),
    )  # fmt: skip


@router.get("/checkin/{product_id}/{option_id}/{availability_id}")
async def scanner(
    product_id: str, option_id: str, availability_id: str, request: Request, me: Staff = Depends(staff)
) -> Response:
    slot = me.services.checkin.slot(me.catalog.catalog, Departure(product_id, option_id, availability_id))
    product = me.catalog.catalog.product(product_id)
    option = product.option(option_id) if product is not None else None
    assert product is not None and option is not None
    gate = {"productId": product.id, "optionId": option.id, "availabilityId": slot.id}
    answer = page(
        request, "checkin.html", me, section="checkin", product=product, option=option, slot=slot,
        gate=orjson.dumps(gate).decode(), may_admit=me.may(Role.OPERATOR),
        back=departures_path(product, slot.local_date),
    )  # fmt: skip
    answer.headers["Content-Security-Policy"] = SCANNER_POLICY
    return answer


@api.get("/checkin/departure")
async def departure(
    productId: str, optionId: str, availabilityId: str, me: Staff = Depends(gate_viewer)
) -> Response:
    return await departure_parties(me.services, Departure(productId, optionId, availabilityId))


@api.post("/checkin/scan")
async def scan(body: ScanBody, me: Staff = Depends(gate_operator)) -> Response:
    outcome = await me.services.checkin.scan(me.catalog.catalog, body.request(), actor=me.actor)
    return json_response(scan_json(outcome))


@api.post("/checkin/lookup")
async def lookup(body: ScanBody, me: Staff = Depends(gate_viewer)) -> Response:
    return json_response(scan_json(await me.services.checkin.lookup(me.catalog.catalog, body.request())))


@api.post("/checkin/undo")
async def undo(body: UndoBody, me: Staff = Depends(gate_operator)) -> Response:
    outcome = await me.services.checkin.undo(me.catalog.catalog, check_nonce(body.nonce), actor=me.actor)
    return json_response(undo_json(outcome))


@api.get("/checkin/app.webmanifest")
async def web_manifest() -> Response:
    manifest = {
        "name": "Berth gate check-in",
        "short_name": "Gate",
        "start_url": SCOPE,
        "scope": SCOPE,
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": "#1d7a46",
        "icons": [
            *({"src": f"{SCOPE}/icon-{n}.png", "sizes": f"{n}x{n}", "type": "image/png"} for n in ICON_SIZES),
            {"src": f"{SCOPE}/icon.svg", "sizes": "any", "type": "image/svg+xml"},
        ],
    }
    return Response(orjson.dumps(manifest), media_type="application/manifest+json")


@functools.cache
def icon_png(size: int) -> bytes:
    """The icon as a PNG of `size` pixels (what browsers want to offer installing the app):
    a white ticket with a notch each side on the gate's green."""
    green, white = b"\x1d\x7a\x46", b"\xff\xff\xff"
    notch = (size * 0.07) ** 2
    rows = []
    for y in range(size):
        row = bytearray(b"\x00")  # filter: none
        for x in range(size):
            inside = 0.2 * size <= x < 0.8 * size and 0.32 * size <= y < 0.68 * size
            middle = (y - size / 2) ** 2
            notched = (x - 0.2 * size) ** 2 + middle < notch or (x - 0.8 * size) ** 2 + middle < notch
            row += white if inside and not notched else green
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


@api.get("/checkin/icon-{size}.png")
async def icon_file(size: int) -> Response:
    if size not in ICON_SIZES:
        raise NotFound(f"There is no icon of {size} pixels")
    drawn = await asyncio.to_thread(icon_png, size)  # drawn once per process, off the event loop
    return Response(drawn, media_type="image/png", headers={"Cache-Control": "public, max-age=86400"})


@api.get("/checkin/icon.svg")
async def icon() -> Response:
    return Response(ICON, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"})


@api.get("/checkin/sw.js")
async def service_worker() -> Response:
    """The service worker, at the scanner's scope so it may serve the scanner's pages offline;
    it caches the files the page loads (their URLs carry their digests)."""
    shell = [
        static_url(name)
        for name in (
            "backoffice.css",
            "checkin.css",
            "checkin-rules.js",
            "checkin.js",
            "zxing.js",
            "zxing_reader.wasm",
        )
    ]
    script = f"const SHELL = {orjson.dumps(shell).decode()};\n" + FILES["checkin-sw.js"][0].decode()
    headers = {"Cache-Control": "no-cache", "Service-Worker-Allowed": SCOPE}
    return Response(script, media_type="text/javascript; charset=utf-8", headers=headers)
