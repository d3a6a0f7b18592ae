"""A held booking's way to confirmation: the guest's details and the terms, with every priced
line of the booking, its discount and its VAT (the booking's own, as held), and a promo code
applied to the held booking or removed; payment by card in Stripe's own card element (no card
number reaches Berth); then the confirmation with the tickets. Each page is the session's own
booking's (another browser's is not found)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.capabilities.ids import OFFERS
from berth.container import Services
from berth.delivery.mail.compose import mail_address
from berth.domain.bookings import BookingStatus, Contact
from berth.domain.catalog import ContactField, DeliveryFormat
from berth.domain.offers import OfferRefused
from berth.domain.shop_party import CONTACT_FIELDS, Problem, contact_problems, required_contact
from berth.domain.tickets import VOUCHER
from berth.http.context import current_services, services
from berth.http.shop.errors import ShopRoute
from berth.http.shop.offer_words import NO_CODE, asks_for_code, booking_offer, offer_label, refusal_text
from berth.http.shop.rendering import page, redirect, shop_words
from berth.http.shop.session import Guest, guest, guest_form
from berth.http.shop.views import booking_cancellation_text, product_text, summary, when_text
from berth.http.shop.wording import problem_text
from berth.read_models.bookings import BookingDetails
from berth.services.bookings.inputs import UpdateInput
from berth.services.shop import Shop
from berth.translations import N_, Words

router = APIRouter(route_class=ShopRoute, include_in_schema=False)

CONTACT_LABELS = {
    "firstName": N_("First name"),
    "lastName": N_("Last name"),
    "emailAddress": N_("Email address"),
    "phoneNumber": N_("Phone number"),
    "country": N_("Country"),
    "postalCode": N_("Postcode"),
}
AUTOCOMPLETE = {
    "firstName": "given-name",
    "lastName": "family-name",
    "emailAddress": "email",
    "phoneNumber": "tel",
    "country": "country",
    "postalCode": "postal-code",
}
PAID = (BookingStatus.CONFIRMED, BookingStatus.PENDING, BookingStatus.REDEEMED)
CODE_LENGTH = 64  # the field's; an offer's code has at most 32 characters


def contact_fields(
    words: Words, required: list[ContactField], values: dict[str, str]
) -> list[dict[str, Any]]:
    """The guest's details as the form asks them: those required, and a phone number."""
    return [
        {
            "name": f.value,
            "label": words(CONTACT_LABELS[f.value]),
            "value": values.get(f.value, ""),
            "required": f in required,
            "autocomplete": AUTOCOMPLETE[f.value],
            "type": "email"
            if f is ContactField.emailAddress
            else "tel"
            if f is ContactField.phoneNumber
            else "text",
        }
        for f in CONTACT_FIELDS
        if f in required or f is ContactField.phoneNumber
    ]


def required_details(details: BookingDetails) -> list[ContactField]:
    """The details the guest gives for the booking: its option's and units', and those of each
    booking a package includes (their confirmation asks for them too)."""
    wanted: set[ContactField] = set()
    for each in (details, *details.package_bookings):
        wanted |= set(required_contact(each.option, [item.unit_id for item in each.booking.unit_items]))
    return [f for f in CONTACT_FIELDS if f in wanted]


@dataclass(frozen=True)
class Included:
    """A booking the package includes, as the guest's pages show it."""

    title: str
    when: str
    status: BookingStatus
    tickets: list[tuple[str, str]]


def included(details: BookingDetails, words: Words) -> list[Included]:
    found = []
    for each in details.package_bookings:
        title = product_text(each.product, words, each.option).title
        tickets = ticket_links(each, words) if each.booking.status in PAID else []
        found.append(Included(title, when_text(words, each), each.booking.status, tickets))
    return found


def checkout_url(details: BookingDetails, step: str = "") -> str:
    return f"/shop/checkout/{details.booking.uuid}" + (f"/{step}" if step else "")


def booking_context(details: BookingDetails, words: Words, now: datetime) -> dict[str, Any]:
    """What every page of a booking shows of it, `now`."""
    product, option = details.product, details.option
    return {
        "details": details,
        "booking": details.booking,
        "product": product,
        "text": product_text(product, words, option),
        "when": when_text(words, details),
        "summary": summary(details, words),
        "cancellation": booking_cancellation_text(words, details, now),
        "included": included(details, words),
    }


def held_until(details: BookingDetails, words: Words) -> str | None:
    expires = details.booking.expires_at
    if expires is None:
        return None
    return words.time(expires.astimezone(ZoneInfo(details.product.time_zone)))


def _ended(request: Request, me: Guest, shop: Shop, details: BookingDetails, words: Words) -> Response:
    return page(
        request, me, "ended.html", words=words, status_code=410, **booking_context(details, words, me.at),
        supplier=shop.catalog.supplier,
    )  # fmt: skip


@dataclass(frozen=True)
class Promotion:
    """The details step's promo code: the booking's offer (`applied`, its label; `code`, None
    for an automatic offer), what the guest typed and why it was refused."""

    applied: str | None
    code: str | None
    typed: str = ""
    problem: str | None = None

    @property
    def removable(self) -> bool:
        """A code can be removed; an automatic offer only once it is refused (a per-email limit
        met when the guest's email is given)."""
        return self.applied is not None and (self.code is not None or self.problem is not None)


def promotion(
    details: BookingDetails, words: Words, typed: str = "", problem: str | None = None
) -> Promotion | None:
    """What the details step shows of promo codes (None: nothing, no code can be used here)."""
    terms = booking_offer(details.booking)
    found = Promotion(
        offer_label(words, terms) if terms else None, terms.code if terms else None, typed, problem
    )
    if found.removable or (terms is None and (problem is not None or asks_for_code(details))):
        return found
    return None


async def _details_page(
    request: Request, me: Guest, shop: Shop, details: BookingDetails, *, status_code: int = 200,
    values: dict[str, str] | None = None, problems: list[Problem] | None = None, accepted: bool = False,
    typed: str = "", offer_problem: str | None = None,
) -> Response:  # fmt: skip
    words = shop_words(me, shop.snapshot.languages)
    booking = details.booking
    required = required_details(details)
    values = (
        values
        if values is not None
        else {f.value: booking.contact.get(f.value) or "" for f in CONTACT_FIELDS}
    )
    errors: dict[str, list[str]] = {}
    for problem in problems or ():
        errors.setdefault(problem.at, []).append(problem_text(words, problem, lambda key: key))
    fields = contact_fields(words, required, values)
    return page(
        request, me, "details.html", words=words, status_code=status_code, **booking_context(details, words, me.at),
        fields=fields, errors=errors, accepted=accepted, held_until=held_until(details, words),
        promotion=promotion(details, words, typed, offer_problem),
        terms_url=services(request).settings.shop_terms_url, supplier=shop.catalog.supplier,
    )  # fmt: skip


@router.get("/shop/checkout/{uuid}")
async def details_form(
    uuid: str, request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    details = await svc.shop.held(shop, uuid, me.session_hash)
    if details.booking.status in PAID:
        return redirect(checkout_url(details, "done"), me)
    if details.booking.status is not BookingStatus.ON_HOLD:
        return _ended(request, me, shop, details, shop_words(me, shop.snapshot.languages))
    return await _details_page(request, me, shop, details)


@router.post("/shop/checkout/{uuid}")
async def save_details(
    uuid: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    details = await svc.shop.held(shop, uuid, me.session_hash)
    if details.booking.status is not BookingStatus.ON_HOLD:
        return redirect(checkout_url(details), me)
    form = await request.form()
    values = {f.value: str(form.get(f.value, "")).strip() for f in CONTACT_FIELDS}
    accepted = form.get("terms") == "yes"
    email, _ = mail_address(values["emailAddress"]) if values["emailAddress"] else (None, None)
    problems = contact_problems(
        required_details(details), values, email_ok=email is not None, accepted=accepted
    )
    if problems:
        return await _details_page(
            request, me, shop, details, status_code=400, values=values, problems=problems, accepted=accepted
        )
    contact = Contact(values={key: value for key, value in values.items() if value}, locales=(me.language,))
    try:
        await svc.shop.set_contact(shop, details, contact)
    except OfferRefused as refused:  # the offer's uses by this email are used up
        words = shop_words(me, shop.snapshot.languages)
        why = refusal_text(words, refused.reason, product_text(details.product, words, details.option).title)
        return await _details_page(
            request, me, shop, details, status_code=400, values=values, accepted=accepted, offer_problem=why
        )
    return redirect(checkout_url(details, "pay"), me)


@router.post("/shop/checkout/{uuid}/offer")
async def promo_code(
    uuid: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    """A promo code applied to the held booking (`remove`: its offer dropped), through the
    booking core's update; a code refused leaves the booking as it was and says why."""
    shop = await svc.shop.shop()
    details = await svc.shop.held(shop, uuid, me.session_hash)
    if details.booking.status is not BookingStatus.ON_HOLD or details.product.is_package:
        return redirect(checkout_url(details), me)
    form = await request.form()
    remove = form.get("remove") == "yes"
    code = "" if remove else str(form.get("offerCode", "")).strip()[:CODE_LENGTH]
    words = shop_words(me, shop.snapshot.languages)
    if not code and not remove:
        return await _details_page(request, me, shop, details, status_code=400, offer_problem=words(NO_CODE))
    try:
        await svc.shop.update(shop, details, UpdateInput(extensions={OFFERS: {"offerCode": code}}))
    except OfferRefused as refused:
        why = refusal_text(words, refused.reason, product_text(details.product, words, details.option).title)
        return await _details_page(request, me, shop, details, status_code=400, typed=code, offer_problem=why)
    return redirect(checkout_url(details) + "#promotion", me)


@router.post("/shop/checkout/{uuid}/release")
async def release(
    uuid: str, request: Request, me: Guest = Depends(guest_form), svc: Services = Depends(current_services)
) -> Response:
    """The guest gives the places up before paying: back to the product."""
    shop = await svc.shop.shop()
    details = await svc.shop.held(shop, uuid, me.session_hash)
    if details.booking.status is BookingStatus.ON_HOLD:
        await svc.shop.release(shop, details)
    return redirect(f"/shop/{details.product.id}", me)


def ticket_links(details: BookingDetails, words: Words) -> list[tuple[str, str]]:
    """The booking's documents: the PDF of all its tickets, and its wallet pass when Berth
    signs them and the product delivers them."""
    links = []
    pdf = details.tickets.url(VOUCHER, DeliveryFormat.PDF_URL)
    first = details.booking.unit_items[0].uuid if details.booking.unit_items else None
    if pdf is None and first is not None:
        pdf = details.tickets.url(first, DeliveryFormat.PDF_URL)
    if pdf is not None:
        links.append((words("Tickets (PDF)"), pdf))
    if DeliveryFormat.PKPASS_URL in details.product.delivery_formats:
        wallet = details.tickets.url(VOUCHER, DeliveryFormat.PKPASS_URL)
        if wallet is None and first is not None:
            wallet = details.tickets.url(first, DeliveryFormat.PKPASS_URL)
        if wallet is not None:
            links.append((words("Add to Apple Wallet"), wallet))
    return links


@router.get("/shop/checkout/{uuid}/done")
async def done(
    uuid: str, request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    shop = await svc.shop.shop()
    details = await svc.shop.held(shop, uuid, me.session_hash)
    words = shop_words(me, shop.snapshot.languages)
    if details.booking.status is BookingStatus.ON_HOLD:
        return redirect(checkout_url(details, "pay"), me)
    if details.booking.status not in PAID:
        return _ended(request, me, shop, details, words)
    links = await svc.shop.links([details.booking.id])
    return page(
        request, me, "done.html", words=words, **booking_context(details, words, me.at),
        tickets=ticket_links(details, words), manage=links.get(details.booking.id),
        email=details.booking.contact.get("emailAddress"), supplier=shop.catalog.supplier,
    )  # fmt: skip
