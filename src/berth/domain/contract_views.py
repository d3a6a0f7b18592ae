"""What a contract save changes of what resellers see of departures, and for whom.

A connection's contract shapes the departures resellers see in two ways (domain.allotments):
its stop-sells close departures to that connection, and its allotments hold places no other
connection may take. So a save can change the view of a departure
- for the connection itself: a stop-sell that now covers the departure and did not, or the
  reverse, on a product and option its contract sells both before and after the save (one it
  starts or stops selling is a change of its catalogue, told by `product_update`);
- for every other connection: its block there (places, release time) changed, when the block's
  unused places change what the others may take.
Its own block never changes its own view: a connection sees everything but the others' blocks.

`touched` lists the departures where the contract's terms differ (no state read); `seen` is a
departure's state as one viewer sees it under given terms, as `AllotmentService.seen_by` works
it out, so that the caller compares each viewer's view before and after the save on the states
and holdings it read. A contract applies while its connection is active and the contract is in
force (`terms_of`): otherwise it sells nothing, stops nothing and holds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from berth.domain.allotments import (
    Allotment,
    AllotmentBook,
    Block,
    StopSell,
    closed_to,
    reserved_for,
    seen_with,
    stopped,
)
from berth.domain.availability import SlotState
from berth.domain.catalog import Catalog, Option, Product
from berth.domain.connections import Connection
from berth.domain.contracts import Contract
from berth.domain.slots import Slot, slots_between


def terms_of(connection: Connection, contract: Contract, today: date) -> Contract | None:
    """`contract` as it applies to `connection` today: None when it applies not at all."""
    return contract if connection.active and contract.in_force(today) else None


def sells(contract: Contract | None, product_id: str, option_id: str) -> bool:
    if contract is None:
        return False
    grant = contract.grant(product_id)
    return grant is not None and (grant.options is None or option_id in grant.options)


def _stop_sells(contract: Contract | None, product: Product, option: Option) -> tuple[StopSell, ...]:
    if contract is None:
        return ()
    return tuple(
        s for s in contract.stop_sells if s.product in (None, product.id) and s.option in (None, option.id)
    )


def _allotments(contract: Contract | None, product: Product, option: Option) -> tuple[Allotment, ...]:
    """The contract's allotments that may cover the option's departures, in their order (a
    connection's first one that covers a departure is its block there). None on a rental
    option: it is rented by duration, and a block left on one holds nothing."""
    if contract is None or option.is_rental:
        return ()
    return tuple(a for a in contract.allotments if a.product == product.id and a.option in (None, option.id))


@dataclass(frozen=True)
class Touched:
    """The departures of one option where the saved connection's terms differ."""

    product: Product
    option: Option
    slots: tuple[Slot, ...]


def touched(
    catalog: Catalog,
    connection_id: str,
    before: Contract | None,
    after: Contract | None,
    now: datetime,
    days: int,
) -> list[Touched]:
    """The departures not over yet on the next `days` days (each product's local today
    included) where the terms of `connection_id` differ between `before` and `after` (as
    `terms_of` gives them): whether a stop-sell covers it, on an option it sells both times,
    or its block. Options whose stop-sells and allotments are the same are not looked into."""
    found: list[Touched] = []
    for product in catalog.products:
        today = now.astimezone(ZoneInfo(product.time_zone)).date()
        for option in product.options:
            stops = (_stop_sells(before, product, option), _stop_sells(after, product, option))
            sold = sells(before, product.id, option.id) and sells(after, product.id, option.id)
            if not sold:
                stops = ((), ())
            allotments = (_allotments(before, product, option), _allotments(after, product, option))
            if stops[0] == stops[1] and allotments[0] == allotments[1]:
                continue
            books = [AllotmentBook([(connection_id, kept)]) for kept in allotments]
            slots = tuple(
                slot
                for slot in slots_between(product, option, today, today + timedelta(days=days - 1))
                if slot.end > now
                and (
                    stopped(stops[0], product.id, option.id, slot.local_date)
                    != stopped(stops[1], product.id, option.id, slot.local_date)
                    or books[0].blocks(product.id, option.id, slot)
                    != books[1].blocks(product.id, option.id, slot)
                )
            )
            if slots:
                found.append(Touched(product, option, slots))
    return found


def seen(
    state: SlotState,
    viewer: str,
    stop_sells: tuple[StopSell, ...],
    blocks: tuple[Block, ...],
    holdings: Mapping[str, int],
    now: datetime,
    released_early: frozenset[str],
    touched_at: tuple[str, str, date],
) -> SlotState:
    """A departure's `state` as `viewer` sees it with its `stop_sells` and the departure's
    `blocks` (every connection's), `touched_at` its (product id, option id, local date)."""
    product_id, option_id, day = touched_at
    if stopped(stop_sells, product_id, option_id, day):
        state = closed_to(state)
    return seen_with(state, reserved_for(viewer, blocks, holdings, now, released_early), None)
