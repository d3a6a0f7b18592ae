""" "Manage my booking": the page a shop booking's receipt links (a 256-bit token, never an id a
reseller or another guest could guess). It shows the booking and its tickets, lets the guest
change their details, and cancel inside the product's cancellation window with a full refund
to their card."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.container import Services
from berth.delivery.mail.compose import mail_address
from berth.domain.bookings import BookingStatus, Contact
from berth.domain.errors import OctoError
from berth.domain.shop_party import CONTACT_FIELDS, Problem, contact_problems, required_contact
from berth.http.context import current_services
from berth.http.shop.checkout import PAID, booking_context, contact_fields, ticket_links
from berth.http.shop.errors import ShopRoute
from berth.http.shop.rendering import page, redirect, shop_words
from berth.http.shop.session import Guest, guest, guest_form
from berth.http.shop.views import free_cancellation_until
from berth.http.shop.wording import problem_text
from berth.read_models.bookings import BookingDetails
from berth.services.shop import Shop
from berth.translations import N_

router = APIRouter(route_class=ShopRoute, include_in_schema=False)

SAVED = N_("Your details are saved.")
CANCELLED = N_(
    "Your booking is cancelled. The full price is refunded to your card; it can take a few days to show."
)
NOT_CHANGED = N_("Your details could not be changed online any more. Please contact us.")
NOT_CANCELLED = N_("This booking can no longer be cancelled online. Please contact us.")
CONFIRM_CANCEL = N_("Tick the box to confirm that you want to cancel.")
NOTICES = {"saved": SAVED, "cancelled": CANCELLED}


async def _manage_page(
    request: Request, me: Guest, shop: Shop, details: BookingDetails, token: str, *, status_code: int = 200,
    values: dict[str, str] | None = None, problems: list[Problem] | None = None, refusal: str | None = None,
) -> Response:  # fmt: skip
    words = shop_words(me, shop.snapshot.languages)
    booking = details.booking
    required = required_contact(details.option, [item.unit_id for item in booking.unit_items])
    values = (
        values
        if values is not None
        else {f.value: booking.contact.get(f.value) or "" for f in CONTACT_FIELDS}
    )
    errors: dict[str, list[str]] = {}
    for problem in problems or ():
        errors.setdefault(problem.at, []).append(problem_text(words, problem, lambda key: key))
    fields = contact_fields(words, required, values)
    notice = NOTICES.get(request.query_params.get("done", ""))
    return page(
        request, me, "manage.html", words=words, status_code=status_code, **booking_context(details, words, me.at),
        token=token, tickets=ticket_links(details, words) if booking.status in PAID else [],
        fields=fields, errors=errors, refusal=refusal, notice=words(notice) if notice else None,
        cancel_until=free_cancellation_until(words, details, me.at), live=booking.status in PAID,
        supplier=shop.catalog.supplier,
    )  # fmt: skip


@router.get("/shop/manage/{token}")
async def manage(
    token: str, request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    details = await svc.shop.by_link(shop, token)
    return await _manage_page(request, me, shop, details, token)


@router.post("/shop/manage/{token}/contact")
async def change_contact(
    token: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    details = await svc.shop.by_link(shop, token)
    form = await request.form()
    values = {f.value: str(form.get(f.value, "")).strip() for f in CONTACT_FIELDS}
    email, _ = mail_address(values["emailAddress"]) if values["emailAddress"] else (None, None)
    units = [item.unit_id for item in details.booking.unit_items]
    problems = contact_problems(details.option, units, values, email_ok=email is not None, accepted=True)
    if problems:
        return await _manage_page(
            request, me, shop, details, token, status_code=400, values=values, problems=problems
        )
    words = shop_words(me, shop.snapshot.languages)
    if details.booking.status not in PAID:
        return await _manage_page(
            request, me, shop, details, token, status_code=409, refusal=words(NOT_CHANGED)
        )
    kept = details.booking.contact
    contact = Contact(values={k: v for k, v in values.items() if v}, locales=kept.locales or (me.language,),
                      allow_marketing=kept.allow_marketing)  # fmt: skip
    try:
        await svc.shop.set_contact(shop, details, contact)
    except OctoError:
        return await _manage_page(
            request, me, shop, details, token, status_code=409, refusal=words(NOT_CHANGED)
        )
    return redirect(f"/shop/manage/{token}?done=saved", me)


@router.post("/shop/manage/{token}/cancel")
async def cancel(
    token: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    details = await svc.shop.by_link(shop, token)
    words = shop_words(me, shop.snapshot.languages)
    form = await request.form()
    if details.booking.status is BookingStatus.CANCELLED:
        return redirect(f"/shop/manage/{token}?done=cancelled", me)
    if form.get("confirm") != "yes":
        return await _manage_page(
            request, me, shop, details, token, status_code=400, refusal=words(CONFIRM_CANCEL)
        )
    if not details.cancellable or details.booking.status not in PAID:
        return await _manage_page(
            request, me, shop, details, token, status_code=409, refusal=words(NOT_CANCELLED)
        )
    try:
        await svc.payments.cancel(
            shop.catalog, details.booking.id, refund=None, reason="cancelled by the guest on their booking's page",
            actor=None,
        )  # fmt: skip
    except OctoError:
        return await _manage_page(
            request, me, shop, details, token, status_code=409, refusal=words(NOT_CANCELLED)
        )
    return redirect(f"/shop/manage/{token}?done=cancelled", me)
