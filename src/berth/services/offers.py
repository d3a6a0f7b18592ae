"""The offers document (domain.offers): read (kept by each process until a commit anywhere
changes everything: a save writes `EVERYTHING` to the change feed), save (versioned, audited,
refused on a stale base), restore; and which offers a sale may use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any, TypeVar

from berth.domain.audit import Target
from berth.domain.catalog import PricingPer
from berth.domain.discounts import best_offer
from berth.domain.errors import BadRequest, Conflict, NotFound
from berth.domain.offer_rules import Sale, choices, sale_reason, unusable_reason, visible
from berth.domain.offers import Offer, OfferRefused, OffersDocument, catalog_problems, parse_offers
from berth.domain.price_lines import LineKind, PriceLine, PriceLines
from berth.domain.pricing import price_for
from berth.domain.staff import Actor
from berth.read_models.availability import CalendarDay, SlotAvailability
from berth.services.answers import AnswerCache
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.store import audit_repo, connections_repo, offers_repo, shop_repo
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.offers_repo import NEVER_SAVED, OffersVersion

KEPT = "offers"  # the document's key in the answers kept until everything changes
Departure = TypeVar("Departure", SlotAvailability, CalendarDay)


def _day(item: SlotAvailability | CalendarDay) -> date:
    return item.slot.local_date if isinstance(item, SlotAvailability) else item.local_date


def departure_lines(item: SlotAvailability | CalendarDay) -> PriceLines:
    """What a departure's prices would be sold at: one line per unit asked for (each unit of
    the option once when none are), or the booking's price for per-booking pricing."""
    currency, day, option = item.currency, _day(item), item.option
    if currency is None:
        return ()
    if item.product.pricing_per is PricingPer.BOOKING:
        price = price_for(option.booking_prices, currency, day, item.rental)
        return (PriceLine(LineKind.BOOKING, None, option.id, price),) if price is not None else ()
    asked = [unit_id for unit_id, count in item.units for _ in range(count)] or [u.id for u in option.units]
    lines = []
    for index, unit_id in enumerate(asked):
        unit = option.unit(unit_id)
        price = price_for(unit.prices, currency, day, item.rental) if unit is not None else None
        if price is not None:
            lines.append(PriceLine(LineKind.UNIT, f"{index}", unit_id, price))
    return tuple(lines)


@dataclass(frozen=True)
class CurrentOffers:
    """The offers document as this process last read it, with the shop's connection (whose
    sales the `SHOP` channel names)."""

    version: OffersVersion
    shop_connection_id: str | None

    @property
    def document(self) -> OffersDocument:
        return self.version.document


class OffersConflict(Conflict):
    def __init__(self, base: int, current: int) -> None:
        super().__init__(
            f"The offers were saved by someone else since version {base} (the current one is {current}); "
            "nothing was saved: load them again and redo the change",
            baseVersion=base,
            currentVersion=current,
        )


def _summary(before: OffersDocument, after: OffersDocument) -> str:
    old = {o.id: o for o in before.offers}
    new = {o.id: o for o in after.offers}
    parts = [f"added {i}" for i in new if i not in old]
    parts += [f"removed {i}" for i in old if i not in new]
    parts += [f"changed {i}" for i in new if i in old and old[i] != new[i]]
    return ", ".join(parts) or "no change"


class OffersService:
    def __init__(
        self, database: Database, clock: Clock, catalog: CatalogService, answers: AnswerCache
    ) -> None:
        self._db = database
        self._clock = clock
        self._catalog = catalog
        self._answers = answers
        self.latest = CurrentOffers(NEVER_SAVED, None)

    async def current(self) -> CurrentOffers:
        """The current offers (read again only after a commit that changed everything)."""
        self.latest = await self._answers.until_everything_changes((KEPT,), self._read)
        return self.latest

    async def current_in(self, conn: DbConnection) -> CurrentOffers:
        """`current`, read on `conn` when it must be read (for callers inside a transaction,
        which must not ask the pool for a second connection)."""
        self.latest = await self._answers.until_everything_changes((KEPT,), lambda: self._read_in(conn))
        return self.latest

    async def _read(self) -> CurrentOffers:
        async with self._db.transaction(write=False) as conn:
            return await self._read_in(conn)

    @staticmethod
    async def _read_in(conn: DbConnection) -> CurrentOffers:
        return CurrentOffers(await offers_repo.current(conn), await shop_repo.channel_connection_id(conn))

    async def automatic_uses(self) -> dict[str, int]:
        """The live uses of each automatic offer with a use limit in the current document (none
        read when it has none): what a step leaves out of the automatic offers it may apply.
        The limit itself is checked under the offer's lock when the booking is written."""
        limited = [o.id for o in self.latest.document.automatic if o.max_uses is not None]
        if not limited:
            return {}
        async with self._db.transaction(write=False) as conn:
            counts = await offers_repo.use_counts(conn, self._clock())
        return {offer_id: counts.get(offer_id, 0) for offer_id in limited}

    async def versions(self, limit: int = 100) -> list[OffersVersion]:
        async with self._db.transaction(write=False) as conn:
            return await offers_repo.versions(conn, limit)

    async def use_counts(self) -> dict[str, int]:
        """Each offer's uses by live bookings (an offer without one is left out)."""
        async with self._db.transaction(write=False) as conn:
            return await offers_repo.use_counts(conn, self._clock())

    async def save(self, document: Any, *, base_version: int | None, actor: Actor) -> OffersVersion:
        return await self._save(parse_offers(document), base_version=base_version, actor=actor, restored=None)

    async def restore(self, number: int, *, actor: Actor) -> OffersVersion:
        async with self._db.transaction(write=False) as conn:
            found = await offers_repo.version(conn, number)
        if found is None:
            raise NotFound(f"The offers have no version {number}")
        return await self._save(found.document, base_version=None, actor=actor, restored=number)

    async def _save(
        self, document: OffersDocument, *, base_version: int | None, actor: Actor, restored: int | None
    ) -> OffersVersion:
        catalog = (await self._catalog.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            await offers_repo.lock_document(conn)
            connection_ids = {c.id for c in await connections_repo.list_connections(conn)}
            problems = catalog_problems(document, catalog, connection_ids)
            if problems:
                raise BadRequest(
                    f"The offers have {len(problems)} problem(s) with the catalogue; nothing was saved: "
                    + "; ".join(problems),
                    problems=problems,
                )
            before = await offers_repo.current(conn)
            if base_version is not None and base_version > before.version:
                raise BadRequest(
                    f"baseVersion {base_version} is not a version of the offers (the current one is "
                    f"{before.version}); nothing was saved"
                )
            if base_version is not None and base_version != before.version:
                raise OffersConflict(base_version, before.version)
            number = before.version + 1
            summary = f"restored version {restored}" if restored else _summary(before.document, document)
            now = self._clock()
            await offers_repo.save(conn, document, number, actor=actor, summary=summary, at=now)
            await audit_repo.record(
                conn,
                actor,
                "offers.save",
                Target("offers", str(number), "Offers"),
                {"version": number, "summary": summary},
                at=now,
            )
        return OffersVersion(number, now, actor.name, actor.role.value, summary, document)

    async def on_departures(
        self, items: Sequence[Departure], connection_id: str, code: str | None
    ) -> list[Departure]:
        """`items` with the offers `connection_id` is shown on each, and the one its prices
        are at: the code's where it can be used there, else the automatic offer that takes
        most off. A code that does not exist for the connection or cannot be sold now is
        refused (`OfferRefused`); one that does not fit a departure leaves that departure at
        its prices, the code listed there as unusable with why."""
        current = await self.current()
        document = current.document
        shop = connection_id == current.shop_connection_id
        now = self._clock()
        coded: Offer | None = None
        applied: Offer | None
        if code:
            coded = document.by_code(code)
            anywhere = Sale(connection_id, shop, "", "", None, now)
            if coded is None or (coded.active and not visible(coded, anywhere)):
                raise OfferRefused(code, "no offer has this code")
            reason = sale_reason(coded, anywhere)
            if reason is not None:
                raise OfferRefused(code, reason)
        if not document.offers:
            return list(items)
        found = []
        for item in items:
            sale = Sale(
                connection_id, shop, item.product.id, item.option.id, _day(item), now, currency=item.currency
            )
            shown = choices(document, sale)
            if coded is not None:
                applied = coded if unusable_reason(coded, sale) is None else None
            else:
                automatic = [c.offer for c in shown if c.offer.automatic and c.reason is None]
                applied = best_offer(
                    automatic, item.product.id, item.option.id, item.currency, departure_lines(item)
                )
            found.append(replace(item, offer_choices=shown, offer=applied))
        return found
