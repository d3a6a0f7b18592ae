"""Paying for a held booking by card. The page mounts Stripe's card element from Stripe.js (the
one script Berth does not serve: no card number reaches Berth), gives the card to Stripe, then
asks Berth to charge it; Berth reads the payment's outcome from Stripe itself (the payments
service) and confirms the booking only for a captured payment of its price. 3-D Secure is
Stripe.js's own step between the two. The amount is the booking's, never the browser's."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.container import Services
from berth.domain.bookings import BookingStatus
from berth.domain.errors import OctoError
from berth.http.context import current_services
from berth.http.responses import json_response
from berth.http.shop.checkout import PAID, booking_context, checkout_url, held_until, required_details
from berth.http.shop.errors import ShopRoute
from berth.http.shop.rendering import headers, page, redirect, shop_words
from berth.http.shop.session import Guest, guest, guest_form
from berth.read_models.bookings import BookingDetails
from berth.services.payments import Checkout, PaymentsOff, Settlement, SettlementState
from berth.services.shop import Shop
from berth.translations import N_, Words

router = APIRouter(route_class=ShopRoute, include_in_schema=False)

NOT_STARTED = N_(
    "The payment could not be started just now, and nothing was charged. Your places stay held: "
    "please try again in a moment."
)
NO_CARDS = N_("Card payments are not available at the moment, so this booking cannot be paid online.")
DECLINED = N_(
    "The payment did not go through, and nothing was charged. Your places are still held: try again or use another card."
)
PROCESSING = N_("Your payment is being confirmed. This page updates by itself.")
STRIPE_LOCALES = {"en": "en", "de": "de"}


def _details_complete(details: BookingDetails) -> bool:
    contact = details.booking.contact
    return all(contact.has(f) for f in required_details(details))


def _card(checkout: Checkout) -> dict[str, Any]:
    """What the page's script needs of a card payment (none of it a secret of Berth's: the
    client secrets let the browser give a card for this payment only)."""
    return {
        "key": checkout.publishable_key,
        "setup": checkout.setup_client_secret,
        "amount": checkout.amount,
        "currency": checkout.currency,
    }


async def _held(svc: Services, me: Guest, uuid: str) -> tuple[Shop, BookingDetails]:
    shop = await svc.shop.shop()
    return shop, await svc.shop.held(shop, uuid, me.session_hash)


async def _onward(svc: Services, shop: Shop, me: Guest, uuid: str) -> tuple[BookingDetails, str | None]:
    """The booking read again, and the page for its guest once it can no longer be paid (None
    while it is held): its confirmation when it was paid meanwhile (a webhook, the sweep,
    another tab, a page loaded again after 3-D Secure); else, once a payment Stripe took
    meanwhile is settled, the payment's page (refunded in full, or still settling) or the
    page that says the booking ended."""
    details = await svc.shop.held(shop, uuid, me.session_hash)
    status = details.booking.status
    if status is BookingStatus.ON_HOLD:
        return details, None
    if status in PAID:
        return details, checkout_url(details, "done")
    try:
        settled = (await svc.payments.settle(shop.catalog, details.booking.id)).state
    except OctoError:
        settled = SettlementState.UNPAID
    if settled is SettlementState.CONFIRMED:  # paid, then cancelled: its page says so
        return details, checkout_url(details, "done")
    if settled in (SettlementState.REFUNDED, SettlementState.PENDING):
        return details, checkout_url(details, "paid")
    return details, checkout_url(details)  # the hold ended or was cancelled: its page says so


@router.get("/shop/checkout/{uuid}/pay")
async def pay_page(
    uuid: str, request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    words = shop_words(me, shop.snapshot.languages)
    details, onward = await _onward(svc, shop, me, uuid)
    if onward is not None:
        return redirect(onward, me)
    if not _details_complete(details):
        return redirect(checkout_url(details), me)
    unpaid = {"card": None, "held_until": held_until(details, words), "stripe_locale": ""}
    context = {**booking_context(details, words, me.at), **unpaid, "supplier": shop.catalog.supplier}
    try:
        checkout = await svc.payments.checkout(shop.catalog, details.booking.id)
    except PaymentsOff:
        return page(request, me, "pay.html", words=words, status_code=503, problem=words(NO_CARDS), **context)
    except OctoError:
        details, onward = await _onward(svc, shop, me, uuid)  # paid or ended meanwhile?
        if onward is not None:
            return redirect(onward, me)
        return page(
            request, me, "pay.html", words=words, status_code=503, problem=words(NOT_STARTED), **context
        )
    details = await svc.shop.held(shop, uuid, me.session_hash)  # its hold made long enough to pay
    return page(
        request, me, "pay.html", words=words, stripe_js_url=checkout.stripe_js_url,
        **booking_context(details, words, me.at), card=_card(checkout), held_until=held_until(details, words), problem=None,
        stripe_locale=STRIPE_LOCALES.get(me.language, "auto"), supplier=shop.catalog.supplier,
    )  # fmt: skip


def _json(request: Request, data: dict[str, Any], status_code: int = 200) -> Response:
    return json_response(data, status_code=status_code, headers=headers(request))


def _answer(settlement: Settlement, details: BookingDetails, words: Words) -> dict[str, Any]:
    """What the page's script does next after a payment step, in the guest's words."""
    state = settlement.state
    if state is SettlementState.CONFIRMED:
        return {"next": checkout_url(details, "done")}
    if state is SettlementState.ACTION_REQUIRED and settlement.client_secret:
        return {"action": settlement.client_secret}
    if state is SettlementState.FAILED:
        return {"problem": words(DECLINED)}
    return {"next": checkout_url(details, "paid")}  # pending, or refunded: the waiting page says


@router.post("/shop/checkout/{uuid}/card")
async def new_card(
    uuid: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    """A fresh card payment after one that did not go through (JSON, for the page's script)."""
    shop, details = await _held(svc, me, uuid)
    words = shop_words(me, shop.snapshot.languages)
    if details.booking.status is BookingStatus.ON_HOLD:
        try:
            return _json(request, _card(await svc.payments.checkout(shop.catalog, details.booking.id)))
        except OctoError:
            pass
    details, onward = await _onward(svc, shop, me, uuid)  # paid or ended meanwhile (another tab)?
    if onward is not None:
        return _json(request, {"next": onward})
    return _json(
        request, {"problem": words(NOT_STARTED), "next": checkout_url(details, "pay")}, status_code=503
    )


async def _after(
    svc: Services, shop: Shop, me: Guest, details: BookingDetails, settlement: Settlement, words: Words
) -> dict[str, Any]:
    """What the page's script does after a payment step; one that neither confirmed the booking
    nor asks for 3-D Secure looks again: a booking paid, cancelled or ended meanwhile sends the
    guest on (never "your places are still held")."""
    if settlement.state not in (SettlementState.CONFIRMED, SettlementState.ACTION_REQUIRED):
        details, onward = await _onward(svc, shop, me, details.booking.uuid)
        if onward is not None:
            return {"next": onward}
    return _answer(settlement, details, words)


@router.post("/shop/checkout/{uuid}/charge")
async def charge(
    uuid: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    """Charge the card the guest gave Stripe (JSON, for the page's script)."""
    shop, details = await _held(svc, me, uuid)
    words = shop_words(me, shop.snapshot.languages)
    try:
        settlement = await svc.payments.pay(shop.catalog, details.booking.id)
    except OctoError:
        details, onward = await _onward(svc, shop, me, uuid)
        if onward is not None:
            return _json(request, {"next": onward})
        return _json(request, {"problem": words(NOT_STARTED)}, status_code=503)
    return _json(request, await _after(svc, shop, me, details, settlement, words))


@router.post("/shop/checkout/{uuid}/settle")
async def settle(
    uuid: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    """After 3-D Secure: how the payment stands, read from Stripe (JSON, for the script)."""
    shop, details = await _held(svc, me, uuid)
    words = shop_words(me, shop.snapshot.languages)
    try:
        settlement = await svc.payments.settle(shop.catalog, details.booking.id)
    except OctoError:
        return _json(request, {"next": checkout_url(details, "paid")})
    return _json(request, await _after(svc, shop, me, details, settlement, words))


@router.get("/shop/checkout/{uuid}/paid")
async def paid(
    uuid: str, request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    """Where the guest lands after the card step when it is not settled at once (and where a
    guest who reloads comes back): the payment is read from Stripe again; while it is still
    being processed the page looks again by itself."""
    shop, details = await _held(svc, me, uuid)
    words = shop_words(me, shop.snapshot.languages)
    try:
        settlement = await svc.payments.settle(shop.catalog, details.booking.id)
    except OctoError:
        settlement = Settlement(SettlementState.PENDING, "")
    if settlement.state is SettlementState.CONFIRMED:
        return redirect(checkout_url(details, "done"), me)
    if settlement.state in (SettlementState.ACTION_REQUIRED, SettlementState.FAILED, SettlementState.UNPAID):
        return redirect(checkout_url(details, "pay"), me)  # it says how the booking stands
    refunded = settlement.state is SettlementState.REFUNDED
    return page(
        request, me, "paying.html", words=words, status_code=200, **booking_context(details, words, me.at),
        refunded=refunded, message=words(PROCESSING), supplier=shop.catalog.supplier,
    )  # fmt: skip
