"""Gift vouchers (octo/gifts): the record, its states, and its balance as a ledger.

A gift is sold like a booking: held (ON_HOLD, until its hold runs out like a booking's), then
confirmed, which issues its code (domain.gift_codes) and its value. What it is worth is never a
number overwritten in place: it is the sum of its movements, each appended once.

| movement | amount | when |
| --- | --- | --- |
| ISSUE | + the gift's amount | confirmed |
| REDEMPTION | - what a booking took | a booking paid with it |
| REVERSAL | + what that booking took | that booking cancelled |
| EXPIRY | - the rest | its validity ran out (BERTH_GIFT_VALIDITY_MONTHS after confirmation) |
| CANCELLATION | - the rest | cancelled unused |

The currency is fixed at issue; amounts are minor units of it.
"""

from __future__ import annotations

import calendar
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson

from berth.domain.bookings import Contact
from berth.domain.catalog import Catalog, amount_problem
from berth.domain.errors import BadRequest
from berth.domain.gift_errors import GiftCurrencyMismatch, GiftInsufficientBalance, InvalidGiftCode


class GiftStatus(StrEnum):
    ON_HOLD = "ON_HOLD"
    CONFIRMED = "CONFIRMED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"


class MovementKind(StrEnum):
    ISSUE = "ISSUE"
    REDEMPTION = "REDEMPTION"
    REVERSAL = "REVERSAL"
    EXPIRY = "EXPIRY"
    CANCELLATION = "CANCELLATION"


class SettlementMethod(StrEnum):
    DEFERRED = "DEFERRED"
    DEPOSIT = "DEPOSIT"
    DIRECT = "DIRECT"
    VOUCHER = "VOUCHER"
    WHOLESALE = "WHOLESALE"


@dataclass(frozen=True)
class Movement:
    """One line of a gift's ledger: `amount` signed (what it adds to the balance)."""

    gift_id: str
    kind: MovementKind
    amount: int
    at: datetime
    actor: str
    booking_id: str | None = None
    sequence: int | None = None  # the store's order; None until stored


@dataclass(frozen=True)
class GiftInput:
    """What a reseller (or the shop) sends to create or change a gift; None: not sent."""

    uuid: str | None = None
    amount: int | None = None
    currency: str | None = None
    contact: Contact | None = None
    recipient: Contact | None = None
    message: str | None = None
    notes: str | None = None
    reseller_reference: str | None = None
    alias: str | None = None
    email_receipt: bool | None = None
    expiration_minutes: int | None = None
    settlement_method: SettlementMethod | None = None


def fingerprint(data: GiftInput) -> str:
    """What a repeated create must match to be answered with the gift it made (the uuid aside)."""
    document: dict[str, Any] = {
        "amount": data.amount,
        "currency": data.currency,
        "contact": data.contact.to_document() if data.contact else None,
        "recipient": data.recipient.to_document() if data.recipient else None,
        "message": data.message,
        "notes": data.notes,
        "resellerReference": data.reseller_reference,
        "alias": data.alias,
        "emailReceipt": data.email_receipt,
        "expirationMinutes": data.expiration_minutes,
        "settlementMethod": data.settlement_method,
    }
    return hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True)
class Gift:
    id: str
    uuid: str
    connection_id: str
    status: GiftStatus
    supplier_reference: str
    currency: str
    currency_precision: int
    amount: int  # the face value, minor units
    net: int  # what the selling connection owes for it (its contract's commission off)
    contact: Contact
    created_at: datetime
    updated_at: datetime
    # ON_HOLD: when the hold runs out; CONFIRMED: when the voucher does (its validity).
    expires_at: datetime
    request_fingerprint: str
    recipient: Contact | None = None
    message: str | None = None
    notes: str | None = None
    reseller_reference: str | None = None
    alias: str | None = None
    test_mode: bool = False
    email_receipt: bool = False
    settlement_method: SettlementMethod = SettlementMethod.DEFERRED
    confirmed_at: datetime | None = None
    cancelled_at: datetime | None = None
    cancellation_reason: str | None = None
    # Set at confirmation: the code's digest (what finds it), the code sealed, its last group.
    code_digest: str | None = None
    code_sealed: str | None = None
    code_hint: str | None = None

    def status_at(self, now: datetime) -> GiftStatus:
        """The status as it stands at `now`: a hold or a voucher past its time is EXPIRED before
        the sweep stores it so."""
        live = (GiftStatus.ON_HOLD, GiftStatus.CONFIRMED)
        if self.status in live and self.expires_at <= now:
            return GiftStatus.EXPIRED
        return self.status

    def updatable(self, now: datetime) -> bool:
        return self.status_at(now) is GiftStatus.ON_HOLD

    def confirmable(self, now: datetime) -> bool:
        return self.status_at(now) is GiftStatus.ON_HOLD

    @property
    def addressee(self) -> Contact:
        """Whom the voucher is sent to: the recipient when it has an email address, else the buyer."""
        if self.recipient is not None and self.recipient.get("emailAddress"):
            return self.recipient
        return self.contact


def balance(movements: Iterable[Movement]) -> int:
    return sum(m.amount for m in movements)


def redeemed(movements: Iterable[Movement]) -> int:
    """What bookings took and kept (redemptions less their reversals)."""
    kinds = (MovementKind.REDEMPTION, MovementKind.REVERSAL)
    return -sum(m.amount for m in movements if m.kind in kinds)


def used(movements: Iterable[Movement]) -> bool:
    """Whether bookings hold part of the gift's value (a reversed redemption does not count)."""
    return redeemed(movements) > 0


def last_redeemed_at(movements: Iterable[Movement]) -> datetime | None:
    return max((m.at for m in movements if m.kind is MovementKind.REDEMPTION), default=None)


def cancellable(gift: Gift, movements: Iterable[Movement], now: datetime) -> bool:
    """An ON_HOLD gift, or a confirmed one still valid that no booking holds part of."""
    status = gift.status_at(now)
    return status is GiftStatus.ON_HOLD or (status is GiftStatus.CONFIRMED and not used(movements))


def to_take(
    gift: Gift, movements: Iterable[Movement], code: str, currency: str, wanted: int, now: datetime, *,
    exact: bool,
) -> int:  # fmt: skip
    """What a payment of `wanted` in `currency` takes from `gift` (found by `code`) at `now`: all of it, or (not
    `exact`) as much as the balance covers. Refused: a gift not CONFIRMED or past its validity
    (INVALID_GIFT_CODE), another currency (GIFT_CURRENCY_MISMATCH), a balance short of an exact
    amount or empty (GIFT_INSUFFICIENT_BALANCE). Never more than the balance."""
    if wanted <= 0:
        raise ValueError("a gift pays a positive amount")
    problem = unusable(gift, now)
    if problem is not None:
        raise InvalidGiftCode(code, problem)
    if currency != gift.currency:
        raise GiftCurrencyMismatch(gift.currency, currency)
    left = balance(movements)
    if left <= 0 or (exact and left < wanted):
        raise GiftInsufficientBalance(max(left, 0), wanted, gift.currency, gift.currency_precision)
    return min(left, wanted)


def unusable(gift: Gift, now: datetime) -> str | None:
    """Why `gift` pays nothing at `now` (None: it may pay)."""
    status = gift.status_at(now)
    if status is GiftStatus.CANCELLED:
        return "the gift voucher was cancelled"
    if status is GiftStatus.EXPIRED:
        if gift.confirmed_at is None:
            return "the gift voucher was never issued (its hold ran out)"
        return f"the gift voucher expired on {gift.expires_at.date().isoformat()}"
    if status is GiftStatus.ON_HOLD:
        return "the gift voucher is not issued yet (it is on hold)"
    return None


def add_months(moment: datetime, months: int) -> datetime:
    """`moment` `months` calendar months later, on the same day or the month's last."""
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


@dataclass(frozen=True)
class GiftDetails:
    """A gift with what its answers show: its ledger, and its code once issued."""

    gift: Gift
    movements: tuple[Movement, ...]
    code: str | None

    @property
    def balance(self) -> int:
        return balance(self.movements)


def gift_currency(catalog: Catalog, asked: str | None) -> tuple[str, int]:
    """The currency a gift is sold in, and its precision: one the catalogue's prices are in (the
    one, when it has one and none is asked for); BAD_REQUEST otherwise."""
    precisions: dict[str, int] = {}
    for product in catalog.products:
        for option in product.options:
            prices = [*option.booking_prices, *(p for unit in option.units for p in unit.prices)]
            for price in prices:
                precisions.setdefault(price.currency, price.currency_precision)
    if asked is None:
        if len(precisions) == 1:
            return next(iter(precisions.items()))
        offered = ", ".join(sorted(precisions)) or "none: the catalogue has no prices"
        raise BadRequest(f"currency is required: the currency of the gift voucher ({offered})")
    if asked not in precisions:
        offered = ", ".join(sorted(precisions)) or "none: the catalogue has no prices"
        raise BadRequest(
            f"A gift voucher cannot be sold in {asked!r}: the supplier sells in {offered}", currency=asked
        )
    return asked, precisions[asked]


def check_amount(amount: int | None) -> int:
    """A gift's face value: a positive number of minor units, no more than any price may be."""
    if amount is None:
        raise BadRequest("amount is required: the gift voucher's value in minor units (5000 for 50.00)")
    if amount < 1:
        raise BadRequest(f"amount must be at least 1 (minor units); {amount} given", amount=amount)
    problem = amount_problem(amount)
    if problem is not None:
        raise BadRequest(f"amount: {problem}", amount=amount)
    return amount
