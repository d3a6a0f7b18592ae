"""The payments ledger as staff read it: its movements (each payment of a booking and each
refund, one line each), the monthly sales report per channel, and amounts typed by staff.

A movement's time is when its money moved as far as Berth knows: a payment's capture (its
creation while it has none), a refund's request. Months and days of the ledger are in UTC, as
Stripe's balance and payout reports are (docs/payments.md, "Reconciling with Stripe").

The sales report of a month, per channel (the booking's connection) and currency: *gross* is
what succeeded payments took in the month, *refunds* what succeeded refunds gave back in it,
*net* the one less the other. A refund counts in the month it was made, whatever the month of
its payment, as on the provider's reports. Money still moving (a refund requested or pending)
and attempts that took nothing are not sales.

The report also shows, per channel and currency, what the channel sold as its statement of the
month counts it (domain.statements: its bookings, their retail before the discount of their
offers, the discount, retail, net and commission): the statement's own total, so that the
report's sold columns and the statements always agree, and its totals per currency are the sums
of its lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from berth.domain.errors import BadRequest
from berth.domain.statements import Statement, Total, per_currency

SUCCEEDED = "succeeded"  # a payment's and a refund's status when the money moved


class Kind(StrEnum):
    PAYMENT = "payment"
    REFUND = "refund"


@dataclass(frozen=True)
class Movement:
    """One line of the ledger: a payment (a card attempt or the desk's) or a refund of one."""

    kind: Kind
    id: str  # Berth's id of the payment or refund (`berth_payment` / `berth_refund` at Stripe)
    payment_id: str
    booking_id: str
    supplier_reference: str
    connection_id: str
    provider: str  # stripe, desk
    method: str  # card, cash, card_terminal
    provider_id: str | None  # the PaymentIntent's id, or the Refund's
    payment_provider_id: str | None  # a refund's payment's PaymentIntent id (a payment's own)
    amount: int  # minor units, always positive
    currency: str
    status: str
    at: datetime  # UTC
    reason: str | None  # a refund's reason
    failure_reason: str | None
    reference: str | None  # the desk's receipt or terminal reference
    actor: str

    @property
    def gross(self) -> int:
        """The movement as the provider's reports sign it: a refund is money going out."""
        return -self.amount if self.kind is Kind.REFUND else self.amount


@dataclass(frozen=True)
class ChannelSales:
    """One line of a month's sales report: a channel's money in one currency."""

    connection_id: str
    currency: str
    payments: int  # how many succeeded payments
    gross: int
    refunds: int  # how many succeeded refunds
    refunded: int

    @property
    def net(self) -> int:
        return self.gross - self.refunded


@dataclass(frozen=True)
class CurrencyTotal:
    currency: str
    payments: int
    gross: int
    refunds: int
    refunded: int

    @property
    def net(self) -> int:
        return self.gross - self.refunded


def currency_totals(lines: list[ChannelSales]) -> list[CurrencyTotal]:
    """The report's totals per currency: the exact sums of its lines."""
    sums: dict[str, list[int]] = {}
    for line in lines:
        found = sums.setdefault(line.currency, [0, 0, 0, 0])
        for index, value in enumerate((line.payments, line.gross, line.refunds, line.refunded)):
            found[index] += value
    return [CurrencyTotal(currency, *found) for currency, found in sorted(sums.items())]


@dataclass(frozen=True)
class ChannelLine:
    """A line of a month's channel report: one channel's sales in one currency, as its statement
    of the month counts them (`sold`), and the money that moved in the month (`moved`); None
    where it sold nothing or no money moved."""

    connection_id: str
    currency: str
    sold: Total | None
    moved: ChannelSales | None


def channel_lines(moved: Iterable[ChannelSales], statements: Iterable[Statement]) -> list[ChannelLine]:
    """One line per channel and currency that sold or took money in the month, in the order of
    the channel's id and currency (a line of a statement without a currency under "")."""
    sold = {(s.connection_id, t.currency or ""): t for s in statements for t in s.totals}
    money = {(m.connection_id, m.currency): m for m in moved}
    return [
        ChannelLine(channel, currency, sold.get((channel, currency)), money.get((channel, currency)))
        for channel, currency in sorted(sold.keys() | money.keys())
    ]


def sold_totals(lines: Iterable[ChannelLine]) -> tuple[Total, ...]:
    """The channel report's sales per currency: the exact sums of its lines' `sold`."""
    return per_currency(line.sold for line in lines if line.sold is not None)


def typed_amount(text: str, precision: int, what: str = "The amount") -> int:
    """An amount staff typed in the currency's units (`25`, `25.50`, `1,250.00`), in minor
    units; BadRequest saying what is wrong with it (not a number, not more than 0, more
    decimals than the currency has)."""
    cleaned = text.strip().replace(",", "").replace(" ", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise BadRequest(f"{what} {text.strip()[:30]!r} is not an amount like 25.00") from None
    if not value.is_finite():
        raise BadRequest(f"{what} {text.strip()[:30]!r} is not an amount like 25.00")
    minor = value.scaleb(precision)
    if minor != minor.to_integral_value():
        places = f"{precision} decimal{'s' if precision != 1 else ''}" if precision else "no decimals"
        raise BadRequest(f"{what} {text.strip()[:30]!r} has more decimals than its currency ({places})")
    if minor <= 0:
        raise BadRequest(f"{what} must be more than 0")
    if minor >= 10**15:
        raise BadRequest(f"{what} {text.strip()[:30]!r} is too large")
    return int(minor)
