"""The departures a contract save changes for resellers, and for whom: worked out in the save's
transaction (domain.contract_views) from the departures' states and holdings as they stand,
each listening connection's view before and after the save compared, for the fan-out to
announce to exactly the connections whose view changed."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import date, datetime
from typing import Any

from berth.domain.allotments import AllotmentBook, Block
from berth.domain.availability import SlotState
from berth.domain.catalog import Catalog
from berth.domain.connections import Connection
from berth.domain.contract_views import Touched, seen, sells, terms_of, touched
from berth.domain.contracts import Contract
from berth.services.availability import AvailabilityService
from berth.store import allotments_repo, connections_repo
from berth.store.connection import DbConnection


async def changed_views(
    conn: DbConnection,
    availability: AvailabilityService,
    catalog: Catalog,
    saved: Connection,
    before: Contract,
    after: Contract,
    listening: Collection[str],
    now: datetime,
    days: int,
) -> list[dict[str, Any]]:
    """The outbox subjects of the departures on the next `days` days whose view `saved`'s new
    contract changed, each naming (`onlyFor`) the `listening` connections whose view changed."""
    today = now.date()
    was, becomes = terms_of(saved, before, today), terms_of(saved, after, today)
    found = touched(catalog, saved.id, was, becomes, now, days)
    if not found:
        return []
    others = {
        c.id: terms_of(c, c.contract, today)
        for c in await connections_repo.list_connections(conn)
        if c.id != saved.id
    }
    subjects: list[dict[str, Any]] = []
    for departures in found:
        subjects.extend(
            await _departures(
                conn, availability, departures, saved.id, (was, becomes), others, listening, now
            )
        )
    return subjects


async def _departures(
    conn: DbConnection,
    availability: AvailabilityService,
    departures: Touched,
    saved_id: str,
    saved_terms: tuple[Contract | None, Contract | None],
    others: dict[str, Contract | None],
    listening: Collection[str],
    now: datetime,
) -> list[dict[str, Any]]:
    product, option, slots = departures.product, departures.option, departures.slots
    states = await availability.states_in(conn, product, option, slots)
    books = [
        AllotmentBook(
            [(cid, c.allotments) for cid, c in others.items() if c is not None]
            + ([(saved_id, terms.allotments)] if terms is not None else [])
        )
        for terms in saved_terms
    ]
    # A rental option's departures have no blocks (`AllotmentService` reads none there either).
    blocks = [
        [() if option.is_rental else book.blocks(product.id, option.id, slot) for slot in slots]
        for book in books
    ]
    holders = {b.connection_id for per_book in blocks for per_slot in per_book for b in per_slot}
    standing = (
        await allotments_repo.standing(conn, product.id, option.id, slots, holders, now) if holders else None
    )
    viewers = {
        viewer: saved_terms if viewer == saved_id else (others.get(viewer),) * 2
        for viewer in sorted(listening)
    }
    viewers = {
        v: terms for v, terms in viewers.items() if all(sells(t, product.id, option.id) for t in terms)
    }
    subjects: list[dict[str, Any]] = []
    for index, (slot, item) in enumerate(zip(slots, states, strict=True)):
        holdings = standing.holdings(slot.id) if standing is not None else {}
        early = standing.released_early(slot.id) if standing is not None else frozenset()
        at = (product.id, option.id, slot.local_date)
        slot_blocks = (blocks[0][index], blocks[1][index])
        changed = [
            viewer
            for viewer, terms in viewers.items()
            if _changed_for(viewer, terms, item.state, slot_blocks, holdings, early, now, at)
        ]
        if changed:
            subjects.append(
                {
                    "productId": product.id,
                    "optionId": option.id,
                    "availabilityId": slot.id,
                    "onlyFor": changed,
                }
            )
    return subjects


def _changed_for(
    viewer: str,
    terms: tuple[Contract | None, Contract | None],
    state: SlotState,
    blocks: tuple[tuple[Block, ...], tuple[Block, ...]],
    holdings: Mapping[str, int],
    early: frozenset[str],
    now: datetime,
    at: tuple[str, str, date],
) -> bool:
    """Whether `viewer` sees the departure otherwise under its `terms` and the `blocks` after
    the save than under those before."""
    before, after = (
        seen(state, viewer, t.stop_sells if t is not None else (), b, holdings, now, early, at)
        for t, b in zip(terms, blocks, strict=True)
    )
    return before != after
