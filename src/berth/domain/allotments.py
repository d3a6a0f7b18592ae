"""Allotments and stop-sells: the parts of a connection's contract that shape what it may book
on each departure.

An allotment holds places on matching departures for one connection until its release time
(the departure's start less `releaseHours`). For one departure of capacity C, with every
connection k's unreleased block A_k and the places H_k it holds there (on hold, confirmed,
pending or redeemed):
- k's own unused block is max(A_k - H_k, 0);
- the general pool is C - sum(unreleased A_k) - sum(max(H_k - A_k, 0)) - what everyone without a
  block holds (the box office and staff included);
- connection j sees the general pool plus its own unused block: C less everything held, less
  the unused blocks of the *others* (`reserved_for`).
A booking by j fits when everything held, plus its places, plus the others' unused blocks is
at most C: its places come from its own block first. Once released, a block counts only what
its connection holds (its unused places are back in the general pool).

A stop-sell closes matching departures to one connection (new reservations and moves only).
Both are pure: the services read the holdings and apply them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from berth.domain.availability import SELLABLE, AvailabilityStatus, SlotState
from berth.domain.catalog.model import WEEKDAYS, ClockTime, Identifier, Weekday
from berth.domain.slots import Slot, slot_clock

MAX_RELEASE_HOURS = 24 * 366


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class _TravelDates(_Model):
    valid_from: date | None = Field(default=None, alias="from")
    valid_until: date | None = Field(default=None, alias="until")

    @model_validator(mode="after")
    def _dates(self) -> _TravelDates:
        if self.valid_from and self.valid_until and self.valid_until < self.valid_from:
            raise ValueError("'until' is before 'from'")
        return self

    def _on(self, day: date) -> bool:
        return (self.valid_from is None or self.valid_from <= day) and (
            self.valid_until is None or day <= self.valid_until
        )


class Allotment(_TravelDates):
    """Places held for the connection on every departure of a product's option (each option
    when none is named) on the travel dates, weekdays and local start times given (an empty
    field does not restrict), until `releaseHours` before each departure."""

    product: Identifier
    option: Identifier | None = None
    weekdays: tuple[Weekday, ...] = WEEKDAYS
    start_times: tuple[ClockTime, ...] = ()
    places: Annotated[int, Field(ge=1, le=100_000)]
    release_hours: Annotated[int, Field(ge=0, le=MAX_RELEASE_HOURS)]

    def covers(self, product_id: str, option_id: str, slot: Slot) -> bool:
        return (
            self.product == product_id
            and self.option in (None, option_id)
            and self._on(slot.local_date)
            and WEEKDAYS[slot.local_date.weekday()] in self.weekdays
            and (not self.start_times or slot_clock(slot) in self.start_times)
        )

    def release_at(self, slot: Slot) -> datetime:
        return slot.start - timedelta(hours=self.release_hours)


class StopSell(_TravelDates):
    """The connection may not book a product's option (every option when none is named; every
    product when no product is named) on the travel dates given. `reason` is the supplier's
    own: it is never shown to the reseller."""

    product: Identifier | None = None
    option: Identifier | None = None
    reason: Annotated[str, Field(max_length=500)] = ""

    @model_validator(mode="after")
    def _option_of_a_product(self) -> StopSell:
        if self.option is not None and self.product is None:
            raise ValueError("an option is named without its product")
        return self

    def covers(self, product_id: str, option_id: str, day: date) -> bool:
        return self.product in (None, product_id) and self.option in (None, option_id) and self._on(day)


def stopped(stop_sells: Iterable[StopSell], product_id: str, option_id: str, day: date) -> bool:
    return any(s.covers(product_id, option_id, day) for s in stop_sells)


@dataclass(frozen=True)
class Block:
    """One connection's allotment on one departure."""

    connection_id: str
    places: int
    release_at: datetime

    def unreleased(self, now: datetime, released_early: frozenset[str]) -> bool:
        return now < self.release_at and self.connection_id not in released_early


@dataclass(frozen=True)
class BlockUse:
    """A block as staff see it: its places, how many its connection uses, what is unused."""

    block: Block
    used: int
    released: bool
    released_early: bool = False  # by staff, before its time
    released_at: datetime | None = None  # when staff released it early

    @property
    def unused(self) -> int:
        return 0 if self.released else max(self.block.places - self.used, 0)


class AllotmentBook:
    """Every connection's allotments: which blocks a departure has."""

    def __init__(self, allotments: Iterable[tuple[str, Sequence[Allotment]]]) -> None:
        self._of: dict[str, list[tuple[str, Allotment]]] = {}
        for connection_id, kept in allotments:
            for allotment in kept:
                self._of.setdefault(allotment.product, []).append((connection_id, allotment))

    def __bool__(self) -> bool:
        return bool(self._of)

    def allotments(self) -> list[tuple[str, Allotment]]:
        """(connection id, allotment), every one."""
        return [entry for kept in self._of.values() for entry in kept]

    def has_blocks(self, product_id: str) -> bool:
        return product_id in self._of

    def blocks(self, product_id: str, option_id: str, slot: Slot) -> tuple[Block, ...]:
        """The departure's blocks, one per connection (a connection's first allotment that
        covers the departure)."""
        found: dict[str, Block] = {}
        for connection_id, allotment in self._of.get(product_id, ()):
            if connection_id not in found and allotment.covers(product_id, option_id, slot):
                found[connection_id] = Block(connection_id, allotment.places, allotment.release_at(slot))
        return tuple(found.values())


def reserved_for(
    viewer: str | None,
    blocks: Iterable[Block],
    holdings: Mapping[str, int],
    now: datetime,
    released_early: frozenset[str] = frozenset(),
) -> int:
    """The places `viewer` may not take on a departure: the other connections' unused,
    unreleased blocks (None: a viewer without a connection, such as staff)."""
    return sum(
        max(b.places - holdings.get(b.connection_id, 0), 0)
        for b in blocks
        if b.connection_id != viewer and b.unreleased(now, released_early)
    )


def uses(
    blocks: Iterable[Block],
    holdings: Mapping[str, int],
    now: datetime,
    released_early: Mapping[str, datetime],
) -> list[BlockUse]:
    """The blocks as staff see them; `released_early`: the connections whose blocks staff
    released early, and when."""
    early = frozenset(released_early)
    return [
        BlockUse(
            b,
            min(holdings.get(b.connection_id, 0), b.places),
            not b.unreleased(now, early),
            b.connection_id in early,
            released_early.get(b.connection_id),
        )
        for b in blocks
    ]


def seen_with(state: SlotState, reserved: int, requested: int | None) -> SlotState:
    """A departure's state as a connection sees it when `reserved` of its places are others'
    blocks: its capacity and vacancies less them, its status from what is left. Closed and
    freesale departures are as they are (a freesale departure has no places to hold)."""
    if reserved <= 0 or state.capacity is None or state.vacancies is None:
        return state
    if state.status is AvailabilityStatus.CLOSED:
        return state
    capacity = max(state.capacity - reserved, 0)
    left = max(state.vacancies - reserved, 0)
    if left <= 0 or (requested is not None and left < requested):
        status = AvailabilityStatus.SOLD_OUT
    elif 2 * left < capacity:
        status = AvailabilityStatus.LIMITED
    else:
        status = AvailabilityStatus.AVAILABLE
    return SlotState(status, status in SELLABLE, left, capacity)


def closed_to(state: SlotState) -> SlotState:
    """A departure closed to one connection (a stop-sell)."""
    return SlotState(AvailabilityStatus.CLOSED, False, 0, state.capacity)
