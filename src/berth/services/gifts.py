"""Gift vouchers (octo/gifts, domain.gifts): a connection's create, update, confirm, cancel, get
and list; staff's cancel; the sweep that expires holds and vouchers; and what paying with a
gift needs (`redeem_in`, `reverse_in`, inside the paying booking's transaction).

A gift is held (ON_HOLD) until confirmed, like a booking. Confirming issues its code and the
ISSUE movement, and queues the voucher's email when the gift asked for one (`emailReceipt`).
Every change of a gift's balance locks the gift first (PostgreSQL: its row, FOR UPDATE;
SQLite: the write transaction holds the database's write lock), then reads its ledger: two
payments with one voucher at once never take more than its balance."""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy.exc import IntegrityError

from berth.domain.audit import Target
from berth.domain.bookings import Contact, new_reference
from berth.domain.connections import Connection
from berth.domain.contracts import gift_net
from berth.domain.errors import BadRequest
from berth.domain.gift_codes import NotAGiftCode, code_digest, code_hint, new_code, parse_code
from berth.domain.gift_errors import GiftRefused, GiftsNotSold, InvalidGiftCode, InvalidGiftUuid
from berth.domain.gift_report import LiabilityLine, liability_lines
from berth.domain.gift_search import GiftSearch, matches
from berth.domain.gifts import (
    Gift,
    GiftDetails,
    GiftInput,
    GiftStatus,
    Movement,
    MovementKind,
    SettlementMethod,
    add_months,
    balance,
    cancellable,
    check_amount,
    fingerprint,
    gift_currency,
    to_take,
    used,
)
from berth.domain.sealing import SecretBox
from berth.domain.staff import Actor
from berth.services.catalog import CatalogService
from berth.services.clock import Clock
from berth.settings import Settings
from berth.store import audit_repo, gifts_repo
from berth.store.connection import DbConnection
from berth.store.database import Database
from berth.store.gifts_repo import GiftFilter

RESELLER = "reseller"
SWEEP = "expiry sweep"
REFERENCE_PREFIX = "G"  # a gift's supplier reference: G and eight characters, apart from bookings'


class GiftNotices(Protocol):
    """What tells the guest of a gift (the mail outbox), inside the transaction of the change."""

    async def gift_issued(self, conn: DbConnection, gift: Gift, actor: str) -> None: ...


def gift_target(gift: Gift) -> Target:
    return Target("gift", gift.id, gift.supplier_reference)


class GiftService:
    # The guest's emails, set by the composition root.
    notices: GiftNotices | None = None

    def __init__(
        self, database: Database, settings: Settings, clock: Clock, catalogs: CatalogService, box: SecretBox
    ) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock
        self._catalogs = catalogs
        self._box = box
        self._locks = not settings.debug_disable_gift_lock

    # --- a connection's gifts ----------------------------------------------------------------

    async def create(
        self, connection: Connection, data: GiftInput, *, test_mode: bool = False
    ) -> GiftDetails:
        """Hold a new gift (ON_HOLD) for `connection`; the same uuid and body again answer the
        gift made the first time, another body under that uuid is refused."""
        if data.uuid is None:
            raise BadRequest("uuid is required: your own UUID for this gift (repeating it is safe)")
        contract = connection.contract
        if not contract.sells_gifts:
            raise GiftsNotSold(
                "This connection's contract does not sell gift vouchers (its sellsGifts is false): ask the supplier"
            )
        now = self._clock()
        unsold = contract.not_in_force(now.date())
        if unsold is not None:
            raise GiftsNotSold(f"No gift voucher can be sold: {unsold}")
        catalog = (await self._catalogs.snapshot()).catalog
        currency, precision = gift_currency(catalog, data.currency)
        amount = check_amount(data.amount)
        gift = Gift(
            id=str(uuidlib.uuid4()), uuid=data.uuid, connection_id=connection.id, status=GiftStatus.ON_HOLD,
            supplier_reference=REFERENCE_PREFIX + new_reference(), currency=currency,
            currency_precision=precision, amount=amount, net=gift_net(amount, contract),
            contact=data.contact or Contact(), created_at=now, updated_at=now,
            expires_at=self._hold_until(data.expiration_minutes, now), request_fingerprint=fingerprint(data),
            recipient=data.recipient, message=data.message, notes=data.notes,
            reseller_reference=data.reseller_reference, alias=data.alias, test_mode=test_mode,
            email_receipt=bool(data.email_receipt),
            settlement_method=data.settlement_method or SettlementMethod.DEFERRED,
        )  # fmt: skip
        try:
            async with self._db.transaction(write=True) as conn:
                existing = await gifts_repo.by_uuid(conn, connection.id, data.uuid)
                if existing is None:
                    await gifts_repo.insert_gift(conn, gift)
                    return GiftDetails(gift, (), None)
        except IntegrityError:  # a concurrent request stored the uuid first
            pass
        async with self._db.transaction(write=False) as conn:
            existing = await gifts_repo.by_uuid(conn, connection.id, data.uuid)
            if existing is None:
                raise BadRequest(f"The gift {data.uuid!r} conflicted with another request; try again")
            if existing.request_fingerprint != gift.request_fingerprint:
                raise InvalidGiftUuid(
                    data.uuid, f"The uuid {data.uuid!r} was already used for a different gift"
                )
            return await self._details(conn, existing)

    def _hold_until(self, minutes: int | None, now: datetime) -> datetime:
        if minutes is None:
            minutes = self._settings.default_expiration_minutes
        if minutes < 1:
            raise BadRequest(f"expirationMinutes must be at least 1; {minutes} given")
        return now + timedelta(minutes=min(minutes, self._settings.max_expiration_minutes))

    async def update(self, connection: Connection, uuid: str, data: GiftInput) -> GiftDetails:
        """Change a held gift: the fields sent replace the gift's (its amount and currency too);
        `expirationMinutes` holds it that long from now."""
        catalog = (await self._catalogs.snapshot()).catalog
        async with self._db.transaction(write=True) as conn:
            gift = await self._owned(conn, connection.id, uuid)
            now = self._clock()
            if not gift.updatable(now):
                raise GiftRefused(
                    f"Gift {uuid!r} is {gift.status_at(now).value}: only a gift ON_HOLD can be changed",
                    uuid=uuid,
                )
            changed = self._changed(gift, data, now)
            if data.currency is not None:
                currency, precision = gift_currency(catalog, data.currency)
                changed = replace(changed, currency=currency, currency_precision=precision)
            if data.amount is not None:
                amount = check_amount(data.amount)
                changed = replace(changed, amount=amount, net=gift_net(amount, connection.contract))
            if data.expiration_minutes is not None:
                changed = replace(changed, expires_at=self._hold_until(data.expiration_minutes, now))
            await gifts_repo.save_gift(conn, changed)
            return GiftDetails(changed, (), None)

    @staticmethod
    def _changed(gift: Gift, data: GiftInput, now: datetime) -> Gift:
        """`gift` with the details `data` sends (who buys it, for whom, the words), not its value."""
        return replace(
            gift,
            contact=data.contact if data.contact is not None else gift.contact,
            recipient=data.recipient if data.recipient is not None else gift.recipient,
            message=data.message if data.message is not None else gift.message,
            notes=data.notes if data.notes is not None else gift.notes,
            reseller_reference=data.reseller_reference
            if data.reseller_reference is not None
            else gift.reseller_reference,
            alias=data.alias if data.alias is not None else gift.alias,
            email_receipt=data.email_receipt if data.email_receipt is not None else gift.email_receipt,
            settlement_method=data.settlement_method or gift.settlement_method,
            updated_at=now,
        )

    async def confirm(
        self, connection: Connection, uuid: str, data: GiftInput, request_locales: tuple[str, ...] = ()
    ) -> GiftDetails:
        """Issue a held gift: its code, the ISSUE movement of its amount, its validity
        (BERTH_GIFT_VALIDITY_MONTHS from now) and, when asked for, the voucher's email. The
        details sent are applied first. Confirming a confirmed gift answers it as it is.
        `request_locales`: the request's Accept-Language, what the voucher is written in when
        its buyer and recipient name no locales."""
        async with self._db.transaction(write=True) as conn:
            gift = await self._owned(conn, connection.id, uuid, lock=True)
            now = self._clock()
            if gift.status is GiftStatus.CONFIRMED:
                return await self._details(conn, gift)
            if not gift.confirmable(now):
                raise GiftRefused(
                    f"Gift {uuid!r} is {gift.status_at(now).value}: only a gift ON_HOLD can be confirmed",
                    uuid=uuid,
                )
            changed = self._changed(gift, data, now)
            if request_locales:
                changed = replace(
                    changed,
                    contact=_reading(changed.contact, request_locales),
                    recipient=_reading(changed.recipient, request_locales) if changed.recipient else None,
                )
            code = new_code()
            issued = replace(
                changed,
                status=GiftStatus.CONFIRMED,
                confirmed_at=now,
                expires_at=add_months(now, self._settings.gift_validity_months),
                code_digest=code_digest(code),
                code_sealed=self._box.seal(code, _context(gift)),
                code_hint=code_hint(code),
            )
            await gifts_repo.save_gift(conn, issued)
            issue = Movement(gift.id, MovementKind.ISSUE, issued.amount, now, RESELLER)
            await gifts_repo.add_movement(conn, issue)
            if issued.email_receipt and self.notices is not None:
                await self.notices.gift_issued(conn, issued, RESELLER)
            return GiftDetails(issued, (issue,), code)

    async def cancel(self, connection: Connection, uuid: str, reason: str | None = None) -> GiftDetails:
        """Cancel a held gift, or a confirmed one no booking has used (what is left of it is
        cancelled: a CANCELLATION movement); a used or expired one is refused. Cancelling a
        cancelled gift answers it as it is."""
        async with self._db.transaction(write=True) as conn:
            gift = await self._owned(conn, connection.id, uuid, lock=True)
            return await self._cancel_in(conn, gift, reason, RESELLER)

    async def _cancel_in(self, conn: DbConnection, gift: Gift, reason: str | None, actor: str) -> GiftDetails:
        if gift.status is GiftStatus.CANCELLED:
            return await self._details(conn, gift)
        now = self._clock()
        movements = (await gifts_repo.movements_of(conn, [gift.id]))[gift.id]
        if not cancellable(gift, movements, now):
            why = (
                "bookings were paid with it: cancel them first"
                if used(movements) and gift.status_at(now) is GiftStatus.CONFIRMED
                else "only a gift ON_HOLD, or CONFIRMED and unused, can be cancelled"
            )
            raise GiftRefused(f"Gift {gift.uuid!r} is {gift.status_at(now).value}: {why}", uuid=gift.uuid)
        cancelled = replace(
            gift, status=GiftStatus.CANCELLED, cancelled_at=now, cancellation_reason=reason, updated_at=now
        )
        await gifts_repo.save_gift(conn, cancelled)
        left = balance(movements)
        if left > 0:
            movement = Movement(gift.id, MovementKind.CANCELLATION, -left, now, actor)
            await gifts_repo.add_movement(conn, movement)
            movements = [*movements, movement]
        return GiftDetails(cancelled, tuple(movements), None)

    async def get(self, connection_id: str, uuid: str) -> GiftDetails:
        async with self._db.transaction(write=False) as conn:
            return await self._details(conn, await self._owned(conn, connection_id, uuid))

    async def find(self, where: GiftFilter, limit: int) -> list[GiftDetails]:
        """A connection's gifts that `where` finds, oldest first, at most `limit`."""
        async with self._db.transaction(write=False) as conn:
            found = await gifts_repo.list_gifts(conn, where, limit)
            ledgers = await gifts_repo.movements_of(conn, [g.id for g in found])
        return [GiftDetails(g, tuple(ledgers[g.id]), self._code(g)) for g in found]

    async def _owned(self, conn: DbConnection, connection_id: str, uuid: str, *, lock: bool = False) -> Gift:
        gift = await gifts_repo.by_uuid(conn, connection_id, uuid, lock=lock)
        if gift is None:
            raise InvalidGiftUuid(uuid)
        return gift

    async def _details(self, conn: DbConnection, gift: Gift) -> GiftDetails:
        movements = (await gifts_repo.movements_of(conn, [gift.id]))[gift.id]
        return GiftDetails(gift, tuple(movements), self._code(gift))

    def _code(self, gift: Gift) -> str | None:
        return None if gift.code_sealed is None else self._box.open(gift.code_sealed, _context(gift))

    # --- staff -------------------------------------------------------------------------------

    async def gift(self, gift_id: str) -> GiftDetails:
        """Any connection's gift, by its id (staff)."""
        async with self._db.transaction(write=False) as conn:
            gift = await gifts_repo.by_id(conn, gift_id)
            if gift is None:
                raise InvalidGiftUuid(gift_id, f"No gift has the id {gift_id!r}")
            return await self._details(conn, gift)

    async def staff_cancel(self, gift_id: str, reason: str | None, *, actor: Actor) -> GiftDetails:
        """Staff cancel a gift (the rules of `cancel`), recorded in the audit trail. Refunding
        what the buyer paid is the payment's business, not the gift's."""
        async with self._db.transaction(write=True) as conn:
            gift = await gifts_repo.by_id(conn, gift_id, lock=True)
            if gift is None:
                raise InvalidGiftUuid(gift_id, f"No gift has the id {gift_id!r}")
            before = balance((await gifts_repo.movements_of(conn, [gift.id]))[gift.id])
            details = await self._cancel_in(conn, gift, reason, actor.name)
            await audit_repo.record(
                conn, actor, "gift.cancel", gift_target(gift),
                {"was": gift.status.value, "cancelled": before, "currency": gift.currency, "reason": reason},
                at=self._clock(),
            )  # fmt: skip
            return details

    async def search(self, search: GiftSearch, limit: int, offset: int) -> tuple[list[GiftDetails], int]:
        """Any connection's gifts `search` finds, newest first: a page of them with their ledgers
        (no codes), and how many it found in all."""
        now = self._clock()
        canonical = search.canonical_code()
        async with self._db.transaction(write=False) as conn:
            candidates = await gifts_repo.staff_candidates(
                conn, digest=code_digest(canonical) if canonical else None,
                sold_from=search.sold_from, sold_before=search.sold_before,
            )  # fmt: skip
            found = [g for g in candidates if matches(g, search, now)]
            shown = found[offset : offset + limit]
            ledgers = await gifts_repo.movements_of(conn, [g.id for g in shown])
        return [GiftDetails(g, tuple(ledgers[g.id]), None) for g in shown], len(found)

    async def liability(self, starts_at: datetime, ends_at: datetime) -> list[LiabilityLine]:
        """The gifts report of [starts_at, ends_at): the liability per currency and its movements."""
        async with self._db.transaction(write=False) as conn:
            movements = await gifts_repo.ledger_before(conn, ends_at)
        return liability_lines(movements, starts_at, ends_at)

    async def outstanding_by_currency(self) -> dict[str, int]:
        """The supplier's liability: what confirmed, unexpired vouchers still hold, by currency."""
        async with self._db.transaction(write=False) as conn:
            return await gifts_repo.outstanding_by_currency(conn, self._clock())

    async def balance(self, gift_id: str) -> int:
        return balance(await self.movements(gift_id))

    async def movements(self, gift_id: str) -> list[Movement]:
        """A gift's ledger, oldest first."""
        async with self._db.transaction(write=False) as conn:
            return (await gifts_repo.movements_of(conn, [gift_id]))[gift_id]

    # --- the expiry sweep --------------------------------------------------------------------

    async def expire_due(self, batch: int = 500) -> int:
        """Store EXPIRED on held gifts whose hold ran out, and on vouchers past their validity,
        whose rest leaves the balance (an EXPIRY movement). How many gifts expired."""
        now = self._clock()
        expired = 0
        async with self._db.transaction(write=True) as conn:
            for status in (GiftStatus.ON_HOLD, GiftStatus.CONFIRMED):
                for found in await gifts_repo.due(conn, status, now, batch):
                    # Locked and read again: a confirmation or cancellation may have come first.
                    gift = await gifts_repo.by_id(conn, found.id, lock=True)
                    if gift is None or gift.status is not status or gift.expires_at > now:
                        continue
                    left = balance((await gifts_repo.movements_of(conn, [gift.id]))[gift.id])
                    if left > 0:
                        movement = Movement(gift.id, MovementKind.EXPIRY, -left, now, SWEEP)
                        await gifts_repo.add_movement(conn, movement)
                    await gifts_repo.save_gift(conn, replace(gift, status=GiftStatus.EXPIRED, updated_at=now))
                    expired += 1
        return expired

    # --- paying with a gift, inside the paying booking's transaction -----------------------------

    async def redeem_in(
        self, conn: DbConnection, code: str, currency: str, amount_wanted: int, booking_id: str,
        now: datetime, *, exact: bool = True, actor: str = "booking",
    ) -> int:  # fmt: skip
        """Pay `amount_wanted` (minor units of `currency`) of booking `booking_id` with the gift
        voucher whose code is `code` (as typed: `parse_code` forgives case, spaces, dashes and
        look-alike letters); a REDEMPTION movement of what it took, which this returns. `exact`
        (OCTO's giftPayment): all of it or GIFT_INSUFFICIENT_BALANCE; else (the shop's checkout)
        as much as the balance covers, the rest for the card. Refused: INVALID_GIFT_CODE naming
        why (mistyped, unknown, on hold, cancelled, expired), GIFT_CURRENCY_MISMATCH, and
        GIFT_INSUFFICIENT_BALANCE on an empty voucher. Locks the gift for the rest of `conn`'s
        transaction: never more than its balance is taken."""
        if amount_wanted < 1:
            raise BadRequest(
                f"A gift voucher pays a positive amount; {amount_wanted} asked", amount=amount_wanted
            )
        try:
            canonical = parse_code(code)
        except NotAGiftCode as exc:
            raise InvalidGiftCode(code, str(exc)) from None
        gift = await gifts_repo.by_digest(conn, code_digest(canonical), lock=self._locks)
        if gift is None:
            raise InvalidGiftCode(code, "no gift voucher has this code")
        movements = (await gifts_repo.movements_of(conn, [gift.id]))[gift.id]
        taken = to_take(gift, movements, code, currency, amount_wanted, now, exact=exact)
        await gifts_repo.add_movement(
            conn, Movement(gift.id, MovementKind.REDEMPTION, -taken, now, actor, booking_id)
        )
        return taken

    async def reverse_in(
        self, conn: DbConnection, booking_id: str, now: datetime, *, actor: str = "booking"
    ) -> int:
        """Give back to their vouchers what booking `booking_id` took and still holds (it was
        cancelled): a REVERSAL movement per voucher; one that expired since has it expire again
        at once (an EXPIRY movement). Returns what was given back in all; nothing twice."""
        taken = await gifts_repo.movements_of_booking(conn, booking_id)
        given = 0
        for gift_id in sorted({m.gift_id for m in taken}):  # locked in one order: no deadlock
            gift = await gifts_repo.by_id(conn, gift_id, lock=self._locks)
            assert gift is not None  # a movement's gift is never deleted
            # Read again under the lock: a concurrent reversal of the same booking counts.
            kept = -sum(
                m.amount
                for m in await gifts_repo.movements_of_booking(conn, booking_id)
                if m.gift_id == gift_id and m.kind in (MovementKind.REDEMPTION, MovementKind.REVERSAL)
            )
            if kept <= 0:
                continue
            await gifts_repo.add_movement(
                conn, Movement(gift_id, MovementKind.REVERSAL, kept, now, actor, booking_id)
            )
            if gift.status is GiftStatus.EXPIRED:
                await gifts_repo.add_movement(conn, Movement(gift_id, MovementKind.EXPIRY, -kept, now, actor))
            given += kept
        return given


def _reading(contact: Contact, request_locales: tuple[str, ...]) -> Contact:
    """`contact` reading the confirming request's languages when it names none of its own."""
    return contact if contact.locales else replace(contact, request_locales=request_locales)


def _context(gift: Gift) -> str:
    """What a gift's sealed code is bound to: copied to another gift's row, it does not open."""
    return f"gift:{gift.id}"
