"""Bookings: search across every connection, one booking with its history, and the supplier's
actions on it (one set per status: release a hold, accept or reject a PENDING one, redeem or
cancel a CONFIRMED one; and, on a confirmed or redeemed one, undo the admission of tickets at
the gate, however long ago), each confirming what changed."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from datetime import date
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from starlette.responses import Response

from berth.delivery.mail.outbox import RECEIPTED
from berth.domain.bookings import CHANGEABLE, BookingStatus, UnitItem
from berth.domain.calendar import out_of_range, supported
from berth.domain.catalog import DeliveryFormat
from berth.domain.checkin import Admission
from berth.domain.errors import BadRequest, NotFound, OctoError
from berth.domain.staff import shown_name
from berth.domain.tickets import VOUCHER, ticket_keys
from berth.http.admin.backoffice import ACTIONS, Action, what_can_be_done
from berth.http.admin.bookings import STAFF_VIEW
from berth.http.admin.exports import bookings_csv
from berth.http.admin.pages.booking_money import DESK_METHODS, booking_money, refund_asked, refund_notice
from berth.http.admin.pages.dates import abbreviation, of_product
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page, redirect
from berth.http.admin.pages.session import Notice, Staff, operator_form, staff
from berth.read_models.bookings import BookingDetails
from berth.store.bookings_reads import BookingFilter
from berth.store.payments_repo import Refund
from berth.views.bookings import booking_view

router = APIRouter(route_class=PageRoute)
PAGE_SIZE = 25
UNDOABLE = (BookingStatus.CONFIRMED, BookingStatus.REDEEMED)


@dataclass(frozen=True)
class Search:
    """The search form as sent: every field optional, blank meaning 'any'."""

    reference: str = ""
    date: str = ""
    product: str = ""
    status: str = ""
    connection: str = ""

    def to_filter(self) -> BookingFilter | str:
        """The filter, or what is wrong with the form."""
        on: date | None = None
        if self.date:
            try:
                on = date.fromisoformat(self.date)
            except ValueError:
                return f"The date {self.date!r} is not a date like 2026-06-02."
            if not supported(on):
                return out_of_range("The date", on) + "."
        if self.status and self.status not in BookingStatus.__members__:
            return f"{self.status!r} is not a booking status."
        return BookingFilter(
            reference=self.reference or None,
            date_from=on,
            date_to=on,
            product_id=self.product or None,
            status=self.status or None,
            connection_id=self.connection or None,
        )

    @property
    def active(self) -> bool:
        return any(asdict(self).values())

    def csv_url(self) -> str:
        query = {key: value for key, value in asdict(self).items() if value}
        return "/admin/bookings.csv" + ("?" + urlencode(query) if query else "")

    def page_url(self, number: int) -> str:
        query = {key: value for key, value in asdict(self).items() if value}
        if number > 1:
            query["page"] = str(number)
        return "/admin/bookings" + ("?" + urlencode(query) if query else "")


def _label(details: BookingDetails) -> str:
    return f"Booking {details.booking.supplier_reference}"


def _slot_text(details: BookingDetails) -> str:
    """`Tue 2 Jun 2026 10:00 BST`, as the booking's page writes its slot."""
    slot = details.slot
    if slot is None:
        return "its open date"
    day = of_product(details.product).day(slot.local_date)
    return day if slot.all_day else f"{day} {slot.start:%H:%M} {abbreviation(slot.start)}"


@router.get("/bookings")
async def search(
    request: Request,
    reference: str = "",
    on: str = Query(default="", alias="date"),
    product: str = "",
    status: str = "",
    connection: str = "",
    page_number: int = Query(default=1, ge=1, alias="page"),
    me: Staff = Depends(staff),
) -> Response:
    form = Search(reference.strip(), on.strip(), product, status, connection)
    where = form.to_filter()
    found: list[BookingDetails] = []
    total = 0
    if isinstance(where, BookingFilter):
        offset = (page_number - 1) * PAGE_SIZE
        found, total = await me.services.staff_bookings.search(me.catalog.catalog, where, PAGE_SIZE, offset)
    return page(
        request,
        "bookings.html",
        me,
        section="bookings",
        form=form,
        problem=where if isinstance(where, str) else None,
        bookings=found,
        total=total,
        page_number=page_number,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        page_size=PAGE_SIZE,
        products={p.id: p.internal_name for p in me.catalog.catalog.products},
        statuses={s.value: s.value.replace("_", " ").capitalize() for s in BookingStatus},
        connections={c.id: c.name for c in await me.services.connections.list()},
    )


@router.get("/bookings.csv")
async def export(
    reference: str = "",
    on: str = Query(default="", alias="date"),
    product: str = "",
    status: str = "",
    connection: str = "",
    me: Staff = Depends(staff),
) -> Response:
    """The search's bookings, every page of them, as CSV."""
    form = Search(reference.strip(), on.strip(), product, status, connection)
    where = form.to_filter()
    if isinstance(where, str):
        return redirect(form.page_url(1), me, Notice("error", f"Nothing exported: {where}"))
    return bookings_csv(me.services, me.catalog.catalog, where, "bookings.csv")


@dataclass(frozen=True)
class Admitted:
    """A ticket admitted at the gate, as the booking's page shows it."""

    item: UnitItem
    unit: str
    admission: Admission
    by: str


def _admitted(details: BookingDetails, admissions: dict[str, Admission]) -> list[Admitted]:
    found = []
    for item in details.booking.unit_items:
        admission = admissions.get(item.uuid)
        if admission is not None:
            unit = details.option.unit(item.unit_id)
            name = unit.internal_name if unit is not None else item.unit_id
            found.append(Admitted(item, name, admission, shown_name(admission.by)))
    return found


@router.get("/bookings/{booking_id}")
async def detail(booking_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    details, history = await me.services.staff_bookings.get(me.catalog.catalog, booking_id)
    connections = {c.id: c for c in await me.services.connections.list()}
    admitted = _admitted(details, await me.services.checkin.admissions(booking_id))
    return page(
        request,
        "booking.html",
        me,
        section="bookings",
        details=details,
        view=booking_view(details, STAFF_VIEW),
        history=history,
        connection=connections.get(details.booking.connection_id),
        actions=[action.value for action in ACTIONS[details.booking.status]],
        local=of_product(details.product),
        messages=await me.services.mail.messages_of(details.booking),
        receipted=details.booking.status in RECEIPTED,
        documents=_documents(details),
        admitted={a.item.uuid: a for a in admitted},
        # The admissions staff may take back: those of a booking still travelling.
        undoable=admitted if details.booking.status in UNDOABLE else [],
        money=await booking_money(me, details.booking),
        desk_methods=DESK_METHODS,
    )


DOCUMENT_KINDS = {DeliveryFormat.PDF_URL: "Open PDF", DeliveryFormat.PKPASS_URL: "Wallet pass"}


def _documents(details: BookingDetails) -> dict[str, list[tuple[str, str]]]:
    """The booking's ticket documents, as the guest's email links them: by key (`voucher`, or
    a unit item's uuid), each format's link text and URL. Empty: the booking has none."""
    found: dict[str, list[tuple[str, str]]] = {}
    for key in ticket_keys(details.product, details.booking):
        for delivery_format, text in DOCUMENT_KINDS.items():
            url = details.tickets.url(key, delivery_format)
            if url is not None and delivery_format in details.product.delivery_formats:
                found.setdefault("voucher" if key == VOUCHER else key, []).append((text, url))
    return found


@router.get("/bookings/{booking_id}/tickets.pdf")
async def tickets_pdf(booking_id: str, me: Staff = Depends(staff)) -> Response:
    """Every ticket of the booking in one PDF (what its receipt attaches), to print."""
    found = await me.services.tickets.for_booking(booking_id)
    if found is None:
        raise NotFound(
            f"Booking {booking_id!r} has no tickets: it is not confirmed, or its product delivers none"
        )
    pdf = found.pdf
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
               "Content-Disposition": f'inline; filename="{pdf.filename}"'}  # fmt: skip
    return Response(pdf.content, media_type=pdf.media_type, headers=headers)


def _back(booking_id: str, me: Staff, notice: Notice) -> Response:
    return redirect(f"/admin/bookings/{booking_id}", me, notice)


async def _apply(
    booking_id: str,
    me: Staff,
    action: Action,
    change: Callable[[], Awaitable[BookingDetails]],
    failed: str,
    succeeded: Callable[[BookingDetails], str | Notice],
    hint: str = "",
) -> Response:
    """Run one action, if the booking's status offers it, and go back to the booking, saying
    what changed or why nothing did."""
    before, _ = await me.services.staff_bookings.get(me.catalog.catalog, booking_id)
    status = before.booking.status
    if action not in ACTIONS[status]:
        text = f"{failed}: {_label(before)} is {status.value}; {what_can_be_done(status)}."
        return _back(booking_id, me, Notice("error", text))
    try:
        done = await change()
    except NotFound:
        raise
    except OctoError as exc:
        said = of_product(before.product).readable(exc.message.rstrip("."))
        return _back(booking_id, me, Notice("error", f"{failed}: {said}.{hint}"))
    told = succeeded(done)
    return _back(booking_id, me, told if isinstance(told, Notice) else Notice("success", told))


@router.post("/bookings/{booking_id}/redeem")
async def redeem(booking_id: str, me: Staff = Depends(operator_form)) -> Response:
    return await _apply(
        booking_id,
        me,
        Action.REDEEM,
        lambda: me.services.staff_bookings.redeem(me.catalog.catalog, booking_id, actor=me.actor),
        "Not redeemed",
        lambda done: f"{_label(done)} redeemed: CONFIRMED → REDEEMED. Its guests are checked in.",
    )


@router.post("/bookings/{booking_id}/accept")
async def accept(booking_id: str, me: Staff = Depends(operator_form)) -> Response:
    return await _apply(
        booking_id,
        me,
        Action.ACCEPT,
        lambda: me.services.staff_bookings.accept(me.catalog.catalog, booking_id, actor=me.actor),
        "Not accepted",
        lambda done: (
            f"{_label(done)} accepted: PENDING → CONFIRMED. "
            f"Its {done.booking.pax} place(s) on {_slot_text(done)} stay taken."
        ),
    )


@router.post("/bookings/{booking_id}/reject")
async def reject(
    booking_id: str, reason: str = Form(default="", max_length=1000), me: Staff = Depends(operator_form)
) -> Response:
    return await _apply(
        booking_id,
        me,
        Action.REJECT,
        lambda: me.services.staff_bookings.reject(
            me.catalog.catalog, booking_id, reason.strip() or None, actor=me.actor
        ),
        "Not rejected",
        lambda done: (
            f"{_label(done)} rejected: PENDING → REJECTED. "
            f"Its {done.booking.pax} place(s) on {_slot_text(done)} are free again."
        ),
    )


async def _cancel(
    booking_id: str, me: Staff, action: Action, reason: str, force: bool, refund: str = "", amount: str = ""
) -> Response:
    """Cancel a confirmed booking, or release a hold (the same change to CANCELLED). A booking
    with card money left to refund is cancelled with the refund the form chose (full, partial
    or none) and a reason, in one transaction (Payments.cancel)."""
    catalog = me.catalog.catalog
    before, _ = await me.services.staff_bookings.get(catalog, booking_id)
    was = before.booking.status
    if was is BookingStatus.CANCELLED:
        return _back(
            booking_id, me, Notice("success", f"{_label(before)} was already cancelled; nothing changed.")
        )
    held = before.booking.holds_places(me.services.clock())
    needs_force = was in CHANGEABLE and not before.cancellable and not before.booking.admitted and not force
    verb = "released" if action is Action.RELEASE else "cancelled"
    money = await booking_money(me, before.booking)
    made: list[Refund] = []

    def cancelled(done: BookingDetails) -> str | Notice:
        freed = f" Its {done.booking.pax} place(s) on {_slot_text(done)} are free again." if held else ""
        said = f"{_label(done)} {verb}: {was.value} → CANCELLED.{freed}"
        if money.refundable <= 0:
            return said
        if not made:
            return f"{said} No refund: its card payment is kept."
        return refund_notice(made[0], said + " ")

    async def change() -> BookingDetails:
        if money.refundable <= 0:
            return await me.services.staff_bookings.cancel(
                catalog, booking_id, reason.strip() or None, actor=me.actor, force=force
            )
        if not reason.strip():
            raise BadRequest("give a reason; it is kept with the cancellation and the refund")
        details, refunded = await me.services.payments.cancel(
            catalog, booking_id, refund=refund_asked(refund, amount, money), reason=reason.strip(),
            actor=me.actor, force=force,
        )  # fmt: skip
        made.extend([refunded] if refunded is not None else [])
        return details

    return await _apply(
        booking_id,
        me,
        action,
        change,
        f"Not {verb}",
        cancelled,
        " Tick “Cancel even though the cutoff has passed” to cancel it anyway." if needs_force else "",
    )


@router.post("/bookings/{booking_id}/cancel")
async def cancel(
    booking_id: str,
    reason: str = Form(default="", max_length=1000),
    force: bool = Form(default=False),
    refund: str = Form(default="", max_length=20),
    amount: str = Form(default="", max_length=40),
    me: Staff = Depends(operator_form),
) -> Response:
    return await _cancel(booking_id, me, Action.CANCEL, reason, force, refund, amount)


@router.post("/bookings/{booking_id}/release")
async def release(
    booking_id: str, reason: str = Form(default="", max_length=1000), me: Staff = Depends(operator_form)
) -> Response:
    return await _cancel(booking_id, me, Action.RELEASE, reason, force=False)


@router.post("/bookings/{booking_id}/undo-admission")
async def undo_admission(
    booking_id: str,
    ticket: list[str] = Form(default=[]),
    reason: str = Form(default="", max_length=1000),
    me: Staff = Depends(operator_form),
) -> Response:
    """Take back the admission of the ticked tickets, however long ago, with a reason."""
    catalog = me.catalog.catalog
    before, _ = await me.services.staff_bookings.get(catalog, booking_id)
    label = _label(before)
    if not reason.strip():
        text = "Admission not undone: give a reason; it is kept in the booking's history."
        return _back(booking_id, me, Notice("error", text))
    if not ticket:
        return _back(booking_id, me, Notice("error", "Admission not undone: tick the tickets to take back."))
    try:
        done = await me.services.checkin.take_back(catalog, booking_id, ticket, reason, actor=me.actor)
    except OctoError as exc:
        return _back(booking_id, me, Notice("error", f"Admission not undone: {exc.message.rstrip('.')}."))
    assert done.details is not None
    after = done.details.booking
    taken = ", ".join(i.supplier_reference for i in after.unit_items if i.uuid in done.admitted)
    text = (
        f"{label}: the admission of {taken} is undone ({before.booking.status.value} → "
        f"{after.status.value}); the reason is in its history."
    )
    return _back(booking_id, me, Notice("success", text))
