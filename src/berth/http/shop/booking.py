"""The shop's booking form for one departure: the party chosen on the day's page, then what
the product offers with it (extras, pickup points, questions, a choice of boat or vehicle),
and the hold: the booking core holds the places as the shop's connection, and the guest goes
on to their details and payment. Every rule a choice breaks is said next to its field, and
nothing is held until all are met."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from berth.capabilities.ids import EXTRAS, OFFERS, PICKUPS, QUESTIONS
from berth.capabilities.registry import asked_fields
from berth.container import Services
from berth.domain.bookings import Contact
from berth.domain.catalog import Product
from berth.domain.errors import InvalidAvailabilityId, OctoError
from berth.domain.offers import OfferRefused
from berth.domain.pickups import address_of, pickup_window
from berth.domain.pricing import price_for
from berth.domain.questions import booking_questions, unit_questions
from berth.domain.shop_party import (
    Choice,
    Problem,
    answer_field,
    choice_problems,
    extra_bounds,
    include_problems,
    party_problems,
    pieces_per_item,
    unit_items,
)
from berth.domain.shop_prices import Amount, party_price
from berth.http.client_address import client_of
from berth.http.context import current_services
from berth.http.shop.catalog import party_messages
from berth.http.shop.errors import ShopRoute
from berth.http.shop.packages import chosen_parts, include_names, package_bookings
from berth.http.shop.rendering import page, redirect, shop_words
from berth.http.shop.resources import Boats, boats
from berth.http.shop.selection import Params, Selection, select, viewer
from berth.http.shop.session import Guest, guest, guest_form
from berth.http.shop.views import extra_title, option_title, product_text, slot_time, unit_title
from berth.http.shop.wording import REFUSALS, problem_text, refused_text
from berth.read_models.availability import SlotAvailability
from berth.read_models.bookings import BookingDetails
from berth.services.availability import AvailabilityQuery
from berth.services.bookings.inputs import ReserveInput, UnitItemInput
from berth.services.shop import Holder, HoldRefused, Shop
from berth.translations import N_

router = APIRouter(route_class=ShopRoute, include_in_schema=False)
CHOOSE_INCLUDES = N_("Choose what your package includes")


@dataclass(frozen=True)
class Departure:
    item: SlotAvailability
    time: str


async def _departure(svc: Services, shop: Shop, selection: Selection, slot_id: str) -> SlotAvailability:
    """The chosen departure as it stands for the party (InvalidAvailabilityId: no such one)."""
    query = AvailabilityQuery(
        selection.product.id, selection.option.id, availability_ids=(slot_id,),
        units=tuple(selection.units.items()) or None,
        rental_duration_id=selection.rental.id if selection.rental else None,
    )  # fmt: skip
    found = await svc.availability.check(shop.catalog, query, viewer(shop))
    if not found:
        raise InvalidAvailabilityId(slot_id)
    return found[0]


def _answers(form: FormData, prefix: str, asked: list[Any]) -> dict[str, str]:
    return {q.id: str(form.get(prefix + q.id, "")).strip()[:2000] for q in asked}


def choice_of(product: Product, selection: Selection, form: FormData) -> tuple[Choice, dict[str, str]]:
    """The guest's choice as the form sends it, and the resource chosen in each group."""
    option = selection.option
    extras = {}
    for extra in option.extras:
        text = str(form.get(f"extra-{extra.id}", "0"))
        extras[extra.id] = int(text) if text.isdigit() and len(text) <= 4 else 0
    point = str(form.get("pickup", "")) or None
    items = []
    for index, unit_id in enumerate(unit_items(option, selection.units)):
        unit = option.unit(unit_id)
        assert unit is not None
        items.append(_answers(form, f"answer-{index}-", unit_questions(product, option, unit)))
    choice = Choice(
        units=selection.units,
        extras=extras,
        pickup_point_id=point,
        answers=_answers(form, "answer-", booking_questions(product, option)),
        item_answers=tuple(items),
    )
    chosen = {g.id: str(form.get(f"resource-{g.id}", "")) for g in option.resource_groups}
    return choice, {group: resource for group, resource in chosen.items() if resource}


def reservation(selection: Selection, slot_id: str, hold: str, choice: Choice, resources: Mapping[str, str],
                language: str) -> ReserveInput:  # fmt: skip
    """What the booking core is asked to hold: the party's unit items, the extras (per unit item
    ones shared out over the items), the pickup and the answers, as a reseller would send them
    with octo/extras, octo/pickups and octo/questions requested; and octo/offers with no code, so
    that the best automatic offer applies."""
    option = selection.option
    unit_ids = unit_items(option, choice.units)
    per_item: list[list[dict[str, str]]] = [[] for _ in unit_ids]
    own: list[dict[str, str]] = []
    for extra in option.extras:
        count = choice.extras.get(extra.id, 0)
        if not extra.per_unit:
            own += [{"extraId": extra.id}] * count
            continue
        for index, pieces in enumerate(pieces_per_item(extra, len(unit_ids), count)):
            per_item[index] += [{"extraId": extra.id}] * pieces
    answers = [{"questionId": q, "value": v} for q, v in choice.answers.items() if v]
    item_answers = [
        {"questionAnswers": [{"questionId": q, "value": v} for q, v in given.items() if v]}
        for given in (*choice.item_answers, *({} for _ in range(len(unit_ids) - len(choice.item_answers))))
    ]
    pickup = (
        {"pickupRequested": True, "pickupPointId": choice.pickup_point_id} if choice.pickup_point_id else {}
    )
    return ReserveInput(
        product_id=selection.product.id,
        option_id=option.id,
        unit_items=tuple(UnitItemInput(unit_id) for unit_id in unit_ids),
        uuid=hold,
        availability_id=slot_id,
        contact=Contact(locales=(language,)),
        asked=asked_fields(
            selection.rental.id if selection.rental else None,
            tuple(resources.values()) or None,
            package_bookings(selection),
        ),
        extensions={
            EXTRAS: {"extraItems": own, "unitItems": [{"extraItems": pieces} for pieces in per_item]},
            PICKUPS: pickup,
            QUESTIONS: {"questionAnswers": answers, "unitItems": item_answers},
            OFFERS: {},
        },
    )


def _is_uuid(text: str) -> bool:
    try:
        return str(uuidlib.UUID(text)) == text
    except ValueError:
        return False


async def _form_page(
    request: Request, me: Guest, svc: Services, shop: Shop, selection: Selection, departure: SlotAvailability,
    *, status_code: int = 200, hold: str | None = None, choice: Choice | None = None,
    resources: Mapping[str, str] | None = None, problems: list[Problem] | None = None,
    refusal: str | None = None,
) -> Response:  # fmt: skip
    product, option = selection.product, selection.option
    words = shop_words(me, shop.snapshot.languages)
    slot, day = departure.slot, departure.slot.local_date
    names: dict[str, str] = {u.id: unit_title(product, u, words) for u in option.units}
    names |= {e.id: extra_title(e) for e in option.extras}
    unit_ids = unit_items(option, selection.units)
    asked_items = []
    counts: dict[str, int] = {}
    for index, unit_id in enumerate(unit_ids):
        unit = option.unit(unit_id)
        assert unit is not None
        counts[unit_id] = counts.get(unit_id, 0) + 1
        asked = unit_questions(product, option, unit)
        names |= {q.id: q.title for q in asked}
        if asked:
            label = words("{unit} ticket {n}", unit=names[unit_id], n=counts[unit_id])
            asked_items.append((index, label, asked))
    booking_asked = booking_questions(product, option)
    names |= {q.id: q.title for q in booking_asked}
    errors: dict[str, list[str]] = {}
    for problem in problems or ():
        errors.setdefault(problem.at, []).append(
            problem_text(words, problem, lambda key: names.get(key, key))
        )
    extras = []
    for extra in option.extras:
        price = price_for(extra.prices, selection.currency, day, None)
        fewest, most = extra_bounds(extra, len(unit_ids))
        extras.append({"extra": extra, "title": names[extra.id], "price": Amount(price.retail, price.currency,
                       price.currency_precision) if price else None, "fewest": fewest, "most": most})  # fmt: skip
    points = []
    for point in option.pickup_points:
        opens, closes = pickup_window(point, slot)
        when = (
            words.time(opens)
            if opens == closes
            else words("{start} to {end}", start=words.time(opens), end=words.time(closes))
        )
        points.append({"point": point, "address": address_of(point), "when": when})
    choice = choice or Choice(
        units=selection.units,
        extras={e.id: e.min_quantity * (len(unit_ids) if e.per_unit else 1) for e in option.extras},
    )
    found_boats: list[Boats] = await boats(svc, shop, selection, slot.id) if option.resource_groups else []
    return page(
        request, me, "book.html", words=words, status_code=status_code,
        product=product, option=option, selection=selection, text=product_text(product, words, option),
        option_name=option_title(product, option, words) if len(product.options) > 1 else None,
        day=day, time=slot_time(words, slot, departure.rental), slot_id=slot.id,
        party=[(names[u.id], selection.units[u.id]) for u in option.units if selection.units.get(u.id)],
        included=chosen_parts(shop, selection, words) if product.is_package else [],
        price=party_price(product, option, selection.units, day, selection.currency, selection.rental),
        hold=hold or str(uuidlib.uuid4()), choice=choice, chosen_resources=resources or {},
        extras=extras, points=points, booking_asked=booking_asked, asked_items=asked_items,
        boats=found_boats, errors=errors, refusal=refusal, answer_field=answer_field,
        supplier=shop.catalog.supplier,
    )  # fmt: skip


async def _start(request: Request, params: Params, svc: Services, product_id: str
                 ) -> tuple[Shop, Selection, str]:  # fmt: skip
    shop = await svc.shop.shop()
    selection = select(shop, product_id, params)
    slot_id = str(params.get("slot", ""))
    if not slot_id:
        raise InvalidAvailabilityId(slot_id)
    return shop, selection, slot_id


@router.get("/shop/{product_id}/book")
async def booking_form(
    product_id: str, request: Request, me: Guest = Depends(guest), svc: Services = Depends(current_services)
) -> Response:
    shop, selection, slot_id = await _start(request, request.query_params, svc, product_id)
    problems = party_problems(selection.option, selection.units)
    if problems:  # a party the day's page would not have let through: back there, saying why
        words = shop_words(me, shop.snapshot.languages)
        return page(request, me, "error.html", words=words, status_code=400, heading="Choose your party first",
                    message=" ".join(party_messages(selection, problems, words)), supplier=shop.catalog.supplier)  # fmt: skip
    departure = await _departure(svc, shop, selection, slot_id)
    return _includes_refused(request, me, shop, selection, departure) or await _form_page(
        request, me, svc, shop, selection, departure
    )


def _includes_refused(request: Request, me: Guest, shop: Shop, selection: Selection, departure: SlotAvailability
                      ) -> Response | None:  # fmt: skip
    """A package's includes chosen against its rules (none chosen for a required one, too many
    of a group): the page saying which, with the way back to the day's choices."""
    if not selection.product.is_package:
        return None
    problems = include_problems(shop.catalog, selection.option, selection.units, selection.includes)
    if not problems:
        return None
    words = shop_words(me, shop.snapshot.languages)
    name = include_names(shop.catalog, selection.product, selection.option, words)
    return page(
        request, me, "error.html", words=words, status_code=400, heading=CHOOSE_INCLUDES,
        message=" ".join(problem_text(words, p, name) for p in problems), supplier=shop.catalog.supplier,
        back=f"/shop/{selection.product.id}/{departure.slot.local_date.isoformat()}?{selection.query()}",
    )  # fmt: skip


async def _hold(svc: Services, shop: Shop, wanted: ReserveInput, holder: Holder) -> BookingDetails:
    """The places held. An automatic offer is chosen before its uses are counted, so one used up
    meanwhile refuses the reservation: the places are then held at their full price."""
    try:
        return await svc.shop.hold(shop, wanted, holder)
    except OfferRefused:
        plain = {key: fields for key, fields in wanted.extensions.items() if key != OFFERS}
        return await svc.shop.hold(shop, replace(wanted, extensions=plain), holder)


@router.post("/shop/{product_id}/book")
async def hold_places(
    product_id: str,
    request: Request,
    me: Guest = Depends(guest_form),
    svc: Services = Depends(current_services),
) -> Response:
    form = await request.form()
    shop, selection, slot_id = await _start(request, form, svc, product_id)
    departure = await _departure(svc, shop, selection, slot_id)
    hold = str(form.get("hold", ""))
    if not _is_uuid(hold):
        hold = str(uuidlib.uuid4())
    choice, resources = choice_of(selection.product, selection, form)
    problems = choice_problems(selection.product, selection.option, choice)
    context: dict[str, Any] = {"hold": hold, "choice": choice, "resources": resources}
    if problems:
        return await _form_page(
            request, me, svc, shop, selection, departure, status_code=400, problems=problems, **context
        )
    wrong = _includes_refused(request, me, shop, selection, departure)
    if wrong is not None:
        return wrong
    words = shop_words(me, shop.snapshot.languages)
    holder = Holder(me.session_hash, client_of(request.scope, svc.settings), me.language)
    wanted = reservation(selection, slot_id, hold, choice, resources, me.language)
    try:
        held = await _hold(svc, shop, wanted, holder)
    except HoldRefused as refused:
        return await _form_page(request, me, svc, shop, selection, departure, status_code=429,
                                refusal=words(REFUSALS[refused.refusal]), **context)  # fmt: skip
    except OctoError as exc:
        name = include_names(shop.catalog, selection.product, selection.option, words)
        return await _form_page(request, me, svc, shop, selection, departure, status_code=409,
                                refusal=refused_text(words, exc, name), **context)  # fmt: skip
    return redirect(f"/shop/checkout/{held.booking.uuid}", me)
