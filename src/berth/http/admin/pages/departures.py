"""A departure's actions on its manifest: close or reopen it, give it a capacity of its own,
note something on it, cancel it, and release a reseller's block early. Closing, a capacity and a cancellation first answer a
confirmation step that says what they will do (how many bookings of which resellers); the
step's button sends the same form again, confirmed.

Each action calls one `DepartureService` method (`change` or `cancel`), or
`AllotmentService.release_early`."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from starlette.responses import Response

from berth.domain.departures import NotThrough, check_capacity
from berth.domain.errors import OctoError
from berth.http.admin.exports import bookings_csv, file_name, manifest_filter
from berth.http.admin.pages.dates import abbreviation, of_product
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, operator_form, staff
from berth.read_models.departures import Boarding, Departure
from berth.services.departures import DepartureChange

router = APIRouter(route_class=PageRoute)
SLOT = "/slots/{product_id}/{option_id}/{availability_id}"


def manifest_path(product_id: str, option_id: str, availability_id: str) -> str:
    return "/admin/slots/" + "/".join(quote(p, safe="") for p in (product_id, option_id, availability_id))


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def back_to(back: str, departure: Departure) -> str:
    """Where an action answers: the departures list it was sent from, else the manifest."""
    if back.startswith("/admin/departures?") and "//" not in back:
        return back
    return manifest_path(departure.product.id, departure.option.id, departure.slot.id)


def capacity_words(departure: Departure, *, catalogue: bool = False) -> str:
    """The departure's capacity in words: its own (or, with `catalogue`, the catalogue's), where
    resources give it their seats, and no limit only where nothing limits it."""
    own = None if catalogue else departure.capacity_override
    if own is not None:
        return plural(own, "place")
    if departure.slot.capacity is not None:
        return plural(departure.slot.capacity, "place")
    if departure.option.resource_groups:
        seats = None if catalogue else departure.state.capacity
        return "what the resources seat" if seats is None else f"{plural(seats, 'place')}, from the resources"
    return "no limit"


def departure_label(departure: Departure) -> str:
    """`Thames cruise · Tue 2 Jun 2026 10:00 BST`."""
    slot = departure.slot
    day = of_product(departure.product).day(slot.local_date)
    when = day if slot.all_day else f"{day} {slot.start:%H:%M} {abbreviation(slot.start)}"
    return f"{departure.product.internal_name} · {when}"


async def who(me: Staff, departure: Departure) -> tuple[str, bool]:
    """Who is booked on the departure now: `3 bookings of 2 resellers (Reseller A, Reseller B)`,
    and whether that is one booking (for the verb that follows)."""
    slot = departure.slot
    affected = await me.services.departures.affected(
        me.catalog.catalog, departure.product.id, departure.option.id, slot.id
    )
    names = {c.id: c.name for c in await me.services.connections.list()}
    listed = ", ".join(sorted(names.get(c, c) for c in affected.connection_ids))
    resellers = plural(len(affected.connection_ids), "reseller")
    said = f"{plural(affected.bookings, 'booking')} of {resellers}" + (f" ({listed})" if listed else "")
    return said, affected.bookings == 1


@dataclass(frozen=True)
class Proposal:
    """What the confirmation step shows, and the form its button sends again; with `choices`
    (a field's name and, per button, its value and words) one button per choice instead."""

    action: str
    question: str
    consequences: list[str]
    button: str
    fields: dict[str, str] = field(default_factory=dict)
    choices: tuple[str, list[tuple[str, str]]] | None = None


def boarding_lines(boarding: Sequence[Boarding], departure: Departure) -> list[str]:
    """Each booking partly through the gate: `Grace Hopper (K7P2XQ9M): 1 of 2 through the
    gate; not through: Adult · 22YW0CWEK7`."""
    lines = []
    for boarded in boarding:
        booking = boarded.booking
        names = []
        for item in boarded.waiting:
            unit = departure.option.unit(item.unit_id)
            names.append(
                f"{unit.internal_name if unit is not None else item.unit_id} · {item.supplier_reference}"
            )
        through = len(booking.unit_items) - len(boarded.waiting)
        lines.append(
            f"{booking.contact.full_name or '—'} ({booking.supplier_reference}): {through} of "
            f"{len(booking.unit_items)} through the gate; not through: {', '.join(names)}"
        )
    return lines


async def _departure(me: Staff, product_id: str, option_id: str, availability_id: str) -> Departure:
    return await me.services.departures.get(me.catalog.catalog, product_id, option_id, availability_id)


def _confirm(
    request: Request, me: Staff, departure: Departure, proposal: Proposal, back: str = ""
) -> Response:
    slot = departure.slot
    path = manifest_path(departure.product.id, departure.option.id, slot.id)
    return page(
        request, "departure_confirm.html", me, section="dashboard", departure=departure,
        label=departure_label(departure), proposal=proposal, back=back_to(back, departure),
        action=f"{path}/{proposal.action}",
    )  # fmt: skip


async def _apply(
    me: Staff, departure: Departure, run: Awaitable[Departure], done: str, failed: str, back: str = ""
) -> Response:
    path = back_to(back, departure)
    try:
        await run
    except OctoError as exc:
        said = of_product(departure.product).readable(exc.message.rstrip("."))
        return redirect(path, me, Notice("error", f"{failed}: {said}."))
    return redirect(path, me, Notice("success", done))


@router.get(SLOT + "/manifest.csv")
async def manifest_csv(
    product_id: str, option_id: str, availability_id: str, me: Staff = Depends(staff)
) -> Response:
    """Every booking on the departure as CSV."""
    departure = await _departure(me, product_id, option_id, availability_id)
    name = file_name("manifest", product_id, option_id, departure.slot.start.strftime("%Y-%m-%d-%H%M"))
    return bookings_csv(me.services, me.catalog.catalog, manifest_filter(departure), name + ".csv")


@router.post(SLOT + "/close")
async def close(
    product_id: str,
    option_id: str,
    availability_id: str,
    request: Request,
    confirmed: str = Form(default=""),
    back: str = Form(default="", max_length=500),
    me: Staff = Depends(operator_form),
) -> Response:
    departure = await _departure(me, product_id, option_id, availability_id)
    label = departure_label(departure)
    if not confirmed:
        booked, one = await who(me, departure)
        stays = (
            "stays booked and keeps its places: cancel the departure to cancel it"
            if one
            else ("stay booked and keep their places: cancel the departure to cancel them")
        )
        consequences = [
            "Resellers see it CLOSED and can no longer book it; subscribed resellers are sent an availability update.",
            f"{booked} {stays}.",
        ]
        proposal = Proposal("close", f"Close {label}?", consequences, "Close the departure", {"back": back})
        return _confirm(request, me, departure, proposal, back)
    change = me.services.departures.change(
        me.catalog.catalog,
        product_id,
        option_id,
        availability_id,
        DepartureChange(closed=True),
        actor=me.actor,
    )
    return await _apply(
        me, departure, change, f"{label} closed: resellers see it CLOSED.", "Not closed", back
    )


@router.post(SLOT + "/reopen")
async def reopen(
    product_id: str,
    option_id: str,
    availability_id: str,
    back: str = Form(default="", max_length=500),
    me: Staff = Depends(operator_form),
) -> Response:
    departure = await _departure(me, product_id, option_id, availability_id)
    change = me.services.departures.change(
        me.catalog.catalog,
        product_id,
        option_id,
        availability_id,
        DepartureChange(closed=False),
        actor=me.actor,
    )
    done = f"{departure_label(departure)} reopened: resellers can book it again."
    return await _apply(me, departure, change, done, "Not reopened", back)


@router.post(SLOT + "/capacity")
async def capacity(
    product_id: str,
    option_id: str,
    availability_id: str,
    request: Request,
    places: str = Form(default="", max_length=10),
    confirmed: str = Form(default=""),
    me: Staff = Depends(operator_form),
) -> Response:
    departure = await _departure(me, product_id, option_id, availability_id)
    label = departure_label(departure)
    path = manifest_path(product_id, option_id, availability_id)
    wanted: int | None = None
    if places.strip():
        if not places.strip().isdigit():
            return redirect(
                path,
                me,
                Notice("error", f"Capacity not changed: {places.strip()!r} is not a number of places."),
            )
        wanted = int(places.strip())
    new = (
        f"the catalogue's ({capacity_words(departure, catalogue=True)})"
        if wanted is None
        else plural(wanted, "place")
    )
    try:
        check_capacity(label, wanted, departure.held)  # named as staff know it, not by its id
    except OctoError as exc:
        return redirect(path, me, Notice("error", f"Capacity not changed: {exc.message.rstrip('.')}."))
    if not confirmed:
        booked, one = await who(me, departure)
        held = f"{plural(departure.held, 'place')} {'is' if departure.held == 1 else 'are'} held"
        consequences = [
            f"Capacity {capacity_words(departure)} → {new}; {held}.",
            f"{booked} {'keeps its places' if one else 'keep their places'}; subscribed resellers are sent an availability update.",
        ]
        proposal = Proposal("capacity", f"Change the capacity of {label}?", consequences, "Change the capacity",
                            {"places": places.strip()})  # fmt: skip
        return _confirm(request, me, departure, proposal)
    change = me.services.departures.change(
        me.catalog.catalog, product_id, option_id, availability_id,
        DepartureChange(set_capacity=True, capacity=wanted), actor=me.actor,
    )  # fmt: skip
    return await _apply(me, departure, change, f"{label}: capacity set to {new}.", "Capacity not changed")


@router.post(SLOT + "/note")
async def note(
    product_id: str,
    option_id: str,
    availability_id: str,
    text: str = Form(default="", max_length=2000),
    me: Staff = Depends(operator_form),
) -> Response:
    departure = await _departure(me, product_id, option_id, availability_id)
    change = me.services.departures.change(
        me.catalog.catalog,
        product_id,
        option_id,
        availability_id,
        DepartureChange(note=text.strip()),
        actor=me.actor,
    )
    done = f"Note on {departure_label(departure)} saved." if text.strip() else "Note removed."
    return await _apply(me, departure, change, done, "Note not saved")


@router.post(SLOT + "/cancel")
async def cancel(
    product_id: str,
    option_id: str,
    availability_id: str,
    request: Request,
    reason: str = Form(default="", max_length=1000),
    confirmed: str = Form(default=""),
    not_through: str = Form(default="", max_length=10),
    me: Staff = Depends(operator_form),
) -> Response:
    departure = await _departure(me, product_id, option_id, availability_id)
    label = departure_label(departure)
    path = manifest_path(product_id, option_id, availability_id)
    if not reason.strip():
        return redirect(
            path, me, Notice("error", "Not cancelled: give a reason; resellers pass it on to their guests.")
        )
    choice = NotThrough(not_through) if not_through in NotThrough.__members__ else None
    if not confirmed:
        consequences = [
            f"This cancels {(await who(me, departure))[0]}, with the reason “{reason.strip()}”. It cannot be undone.",
            "Each reseller is sent a booking update for each of its bookings (and an order update for its "
            "orders); a package booking is cancelled whole.",
            "The departure is closed: resellers see it CLOSED.",
        ]
        affected = await me.services.departures.affected(
            me.catalog.catalog, product_id, option_id, availability_id
        )
        choices = None
        if affected.boarding:
            consequences.append(
                "Boarding began: these bookings are partly through the gate and stay; choose what becomes "
                "of their tickets not through the gate (cancelled: the guest is told by email where the "
                "booking asked for emails, the reseller by a booking update; kept: they stay valid):"
            )
            consequences.extend(boarding_lines(affected.boarding, departure))
            choices = (
                "not_through",
                [
                    (NotThrough.CANCEL.value, "Cancel the departure and those tickets"),
                    (NotThrough.KEEP.value, "Cancel the departure, keep those tickets"),
                ],
            )
        proposal = Proposal(
            "cancel", f"Cancel {label}?", consequences, "Cancel the departure", {"reason": reason.strip()},
            choices,
        )  # fmt: skip
        return _confirm(request, me, departure, proposal)
    try:
        done = await me.services.departures.cancel(
            me.catalog.catalog, product_id, option_id, availability_id, reason.strip(), actor=me.actor,
            not_through_tickets=choice,
        )  # fmt: skip
    except OctoError as exc:
        said = of_product(departure.product).readable(exc.message.rstrip("."))
        return redirect(path, me, Notice("error", f"Not cancelled: {said}."))
    resellers = plural(len(done.connection_ids), "reseller")
    text = f"{label} cancelled: {plural(len(done.cancelled), 'booking')} of {resellers} cancelled; the departure is closed."
    if done.boarding:
        tickets = plural(sum(len(b.waiting) for b in done.boarding), "ticket")
        fate = "cancelled" if done.not_through is NotThrough.CANCEL else "kept"
        text += f" {tickets} not through the gate ({plural(len(done.boarding), 'booking')}): {fate}."
    return redirect(path, me, Notice("success", text))


@router.post(SLOT + "/blocks/{connection_id}/release")
async def release_block(
    product_id: str,
    option_id: str,
    availability_id: str,
    connection_id: str,
    me: Staff = Depends(operator_form),
) -> Response:
    departure = await _departure(me, product_id, option_id, availability_id)
    label = departure_label(departure)
    path = manifest_path(product_id, option_id, availability_id)
    names = {c.id: c.name for c in await me.services.connections.list()}
    whose = f"{names.get(connection_id, connection_id)}'s block on {label}"
    try:
        released = await me.services.allotments.release_early(
            departure.product, departure.option, departure.slot, connection_id, actor=me.actor
        )
    except OctoError as exc:
        return redirect(path, me, Notice("error", f"Not released: {exc.message.rstrip('.')}."))
    if not released:
        return redirect(path, me, Notice("error", f"Not released: {whose} is released already."))
    done = f"{whose} released: its unused places are back on general sale."
    return redirect(path, me, Notice("success", done))
