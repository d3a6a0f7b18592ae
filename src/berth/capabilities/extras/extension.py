"""The extras of a booking and its unit items: read from extraItems (on the booking and on each
unit item) at reserve, update and confirm, checked against the option's extras, counted
against their stock per departure under the departure's slot lock, and priced."""

from __future__ import annotations

import uuid as uuidlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from berth.capabilities.ids import EXTRAS
from berth.domain.bookings import Booking, BookingStatus, UnitItem
from berth.domain.catalog import Option, Price, Product
from berth.domain.catalog.model import Extra
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.price_lines import LineKind, Priceable
from berth.domain.pricing import booking_day, price_on
from berth.domain.slots import Slot
from berth.services.bookings.extensions import BookingExtension, ExtensionStep, Holding, Stage
from berth.services.bookings.locks import SlotLocks
from berth.store import extras_repo
from berth.store.connection import DbConnection

ITEMS = "extraItems"


@dataclass(frozen=True)
class Piece:
    """One piece of an extra a booking has (OCTO `ExtraItem`)."""

    id: str
    extra_id: str

    def to_document(self) -> dict[str, str]:
        return {"id": self.id, "extraId": self.extra_id}


Pieces = tuple[Piece, ...]


def _pieces(document: Any) -> Pieces:
    return tuple(Piece(p["id"], p["extraId"]) for p in document or ())


@dataclass(frozen=True)
class BookedExtras:
    """A booking's pieces: its own, and each unit item's by the item's uuid."""

    booking: Pieces = ()
    items: dict[str, Pieces] = field(default_factory=dict)

    @classmethod
    def from_document(cls, document: Any) -> BookedExtras:
        if not document:
            return cls()
        items = {item_uuid: _pieces(pieces) for item_uuid, pieces in document.get("items", {}).items()}
        return cls(_pieces(document.get("booking")), items)

    def to_document(self) -> dict[str, Any] | None:
        items = {
            item_uuid: [p.to_document() for p in pieces] for item_uuid, pieces in self.items.items() if pieces
        }
        if not self.booking and not items:
            return None
        return {"booking": [p.to_document() for p in self.booking], "items": items}

    def of_item(self, item_uuid: str) -> Pieces:
        return self.items.get(item_uuid, ())

    @property
    def all(self) -> list[Piece]:
        return [*self.booking, *(p for pieces in self.items.values() for p in pieces)]

    def counts(self) -> Counter[str]:
        return Counter(p.extra_id for p in self.all)


def of_booking(booking: Booking) -> BookedExtras:
    return BookedExtras.from_document(booking.extensions.get(EXTRAS))


def booking_extras(option: Option) -> list[Extra]:
    return [e for e in option.extras if not e.per_unit]


def unit_extras(option: Option) -> list[Extra]:
    return [e for e in option.extras if e.per_unit]


def _chosen(
    sent: Sequence[Mapping[str, Any]],
    kept: Pieces,
    offered: Mapping[str, Extra],
    elsewhere: Mapping[str, Extra],
    where: str,
    context: str,
) -> Pieces:
    """The pieces a request sends (one per entry): the n-th piece of an extra keeps the id of
    the n-th piece of it kept."""
    kept_ids: dict[str, list[str]] = {}
    for piece in kept:
        kept_ids.setdefault(piece.extra_id, []).append(piece.id)
    chosen: list[Piece] = []
    for index, entry in enumerate(sent):
        extra_id = entry["extraId"]
        if extra_id not in offered:
            if extra_id in elsewhere:
                other = (
                    "per unit item, in unitItems[].extraItems"
                    if where == ITEMS
                    else "per booking, in extraItems"
                )
                message = f"{where}[{index}]: extra {extra_id!r} is booked {other}"
            else:
                message = f"{where}[{index}]: {extra_id!r} is not an extra {context}"
            raise BadRequest(message, extraId=extra_id)
        ids = kept_ids.get(extra_id, [])
        chosen.append(Piece(ids.pop(0) if ids else str(uuidlib.uuid4()), extra_id))
    return tuple(chosen)


def _check_counts(pieces: Pieces, offered: Sequence[Extra], where: str, per: str, *, complete: bool) -> None:
    counts = Counter(p.extra_id for p in pieces)
    for extra in offered:
        count = counts.get(extra.id, 0)
        if extra.max_quantity is not None and count > extra.max_quantity:
            raise BadRequest(
                f"{where}: at most {extra.max_quantity} of extra {extra.id!r} per {per}; {count} given",
                extraId=extra.id,
            )
        if complete and count < extra.min_quantity:
            raise UnprocessableEntity(
                f"{where}: at least {extra.min_quantity} of extra {extra.id!r} per {per}; {count} given. "
                "Request octo/extras and send its extraItems",
                extraId=extra.id,
            )


def merge(
    product: Product,
    option: Option,
    items: Sequence[UnitItem],
    kept: BookedExtras,
    sent: Any,
    *,
    complete: bool,
) -> BookedExtras:
    """The extras after a request: a list it sends replaces the one kept (the booking's, or a
    unit item's); what it leaves out stays; pieces of extras no longer offered (another option,
    a unit item gone) are dropped."""
    sent = sent or {}
    per_booking = {e.id: e for e in booking_extras(option)}
    per_unit = {e.id: e for e in unit_extras(option)}
    context = f"of option {option.id!r}"
    own = tuple(p for p in kept.booking if p.extra_id in per_booking)
    if ITEMS in sent:
        own = _chosen(sent[ITEMS] or (), own, per_booking, per_unit, ITEMS, context)
    _check_counts(own, list(per_booking.values()), ITEMS, "booking", complete=complete)
    sent_items = sent.get("unitItems")
    by_item: dict[str, Pieces] = {}
    for index, item in enumerate(items):
        pieces = tuple(p for p in kept.of_item(item.uuid) if p.extra_id in per_unit)
        where = f"unitItems[{index}].{ITEMS}"
        if sent_items is not None and ITEMS in sent_items[index]:
            pieces = _chosen(sent_items[index][ITEMS] or (), pieces, per_unit, per_booking, where, context)
        _check_counts(pieces, list(per_unit.values()), where, "unit item", complete=complete)
        by_item[item.uuid] = pieces
    return BookedExtras(own, by_item)


def piece_price(extra: Extra, booking: Booking) -> Price | None:
    """What one piece costs in the booking's currency on its day (None: no currency, or no price)."""
    if booking.currency is None:
        return None
    return price_on(extra.prices, booking.currency, booking_day(booking))


def sold_out(extra: Extra, slot: Slot, left: int, wanted: int) -> str:
    return (
        f"Extra {extra.id!r} is sold out on availability {slot.id}: {max(left, 0)} left, {wanted} requested"
    )


class ExtraExtension(BookingExtension):
    key = EXTRAS

    def apply(self, step: ExtensionStep) -> dict[str, Any] | None:
        complete = step.stage is Stage.CONFIRM or step.booking.status is not BookingStatus.ON_HOLD
        booked = merge(
            step.product,
            step.option,
            step.booking.unit_items,
            of_booking(step.booking),
            step.sent,
            complete=complete,
        )
        return booked.to_document()

    @staticmethod
    def _stocked(option: Option, counts: Counter[str]) -> list[Extra]:
        return [e for e in option.extras if e.stock is not None and counts.get(e.id)]

    @staticmethod
    def _token(booking: Booking) -> str:
        return f"{booking.id}:extras"

    async def _held(
        self, conn: DbConnection, booking: Booking, slot: Slot, extras: Sequence[Extra], now: datetime
    ) -> dict[str, int]:
        return await extras_repo.held_extras(
            conn,
            booking.product_id,
            booking.option_id,
            slot.id,
            [e.id for e in extras],
            now,
            excluding=booking.id,
        )

    async def read_ahead(
        self, locks: SlotLocks, product: Product, option: Option, slot: Slot, booking: Booking
    ) -> None:
        stocked = self._stocked(option, of_booking(booking).counts())
        if stocked:
            now = booking.created_at
            await locks.read_ahead(self._token(booking), lambda c: self._held(c, booking, slot, stocked, now))

    async def hold(self, conn: DbConnection, locks: SlotLocks, holding: Holding) -> None:
        after, before, slot = holding.after, holding.before, holding.slot
        counts = of_booking(after).counts()
        if not counts and (before is None or not of_booking(before).counts()):
            return  # no extras before or after: nothing to record or clear
        kept: Counter[str] = Counter()
        if (
            before is not None
            and before.holds_places(holding.now)
            and (before.product_id, before.option_id, before.availability_id)
            == (after.product_id, after.option_id, after.availability_id)
        ):
            kept = of_booking(before).counts()
        growing = [e for e in self._stocked(holding.option, counts) if counts[e.id] > kept.get(e.id, 0)]
        if growing and slot is not None and holding.lock_key is not None:
            now = holding.now
            held = await locks.locked_read(
                conn,
                [holding.lock_key],
                self._token(after),
                lambda c: self._held(c, after, slot, growing, now),
            )
            for extra in growing:
                assert extra.stock is not None
                left = extra.stock - held.get(extra.id, 0)
                if counts[extra.id] > left:
                    raise UnprocessableEntity(sold_out(extra, slot, left, counts[extra.id]), extraId=extra.id)
        await extras_repo.record_extras(conn, after, counts)

    def priceables(self, booking: Booking, product: Product, option: Option) -> list[Priceable]:
        parts = []
        for piece in of_booking(booking).all:
            extra = option.extra(piece.extra_id)
            price = piece_price(extra, booking) if extra is not None else None
            if price is not None:
                parts.append(Priceable(LineKind.EXTRA, piece.id, piece.extra_id, price))
        return parts
