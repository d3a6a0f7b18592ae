"""A connection's monthly statement: what the reseller sold in a month, at which net, and what
it owes, read only from each booking's stored priced lines (domain.price_lines), never from
today's catalogue (which names products, options and units, and nothing more).

Rules (docs/contracts.md, "Monthly statements"):
- a booking is on the statement if it was sold: confirmed at some time (CONFIRMED, REDEEMED, or
  CANCELLED after its confirmation) and not a test booking. Holds (ON_HOLD, EXPIRED), requests
  never accepted (PENDING, REJECTED) and holds cancelled before confirmation were never sold;
- its month is the month of its travel date (basis `travel`), or of its confirmation in UTC
  (basis `confirmation`); an open-dated booking has no travel date and counts in the month of
  its confirmation under either basis;
- one line per booking (per currency, should a booking's lines ever carry two): retail and net
  are the sums of its lines, commission = retail - net; a line without a net counts its retail
  as net (no commission) and is flagged; a cancelled booking is listed with zero amounts;
- the discount is what the booking's offer took off its lines' retail (`LineDiscount.retail`),
  and original = retail + discount, the retail before the discount (not a catalogue price's own
  `original`), so original - discount = retail for every line and every total;
  the tax included in its retail and in its net are the sums of its lines' included taxes
  (a tax without a net counts its retail); it says what it includes besides its units (its
  extras, its rental duration) and the rate applied: the commission (or, under a net rate, the
  margin) as a percentage of retail;
- a gift voucher the connection sold (domain.gifts) is a line of its own kind (GIFT) in the
  month of its confirmation in UTC under either basis (it has no travel date): its amount as
  retail, its net as stored at its sale (the contract's commission off), no discount nor tax; a
  voucher cancelled is listed at zero, an expired one at its amount (it was sold). Gift lines
  come after the bookings;
- a booking paid in part with gift vouchers shows what they paid (`gift_paid`: its redemptions
  less their reversals, in the vouchers' currency): the supplier holds that money already, so
  the connection owes net - gift_paid for it (`owed`, below zero when the vouchers paid more
  than the net: the supplier then owes the difference). A cancelled booking's is zero;
- totals per currency are the exact sums of the lines, with their count;
- the statement carries the contract's rate kind (which names the retail - net column:
  "Commission" under a commission, "Margin" under a net rate) and payment terms, which say
  who owes whom (`settlement`).
Every amount is an integer of minor units; text is written with Decimal, never float.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import StrEnum
from zoneinfo import ZoneInfo

from berth.domain.bookings import Booking, BookingStatus
from berth.domain.catalog import AvailabilityType, Catalog
from berth.domain.contracts import PaymentTerms
from berth.domain.errors import BadRequest
from berth.domain.gifts import Gift, GiftStatus
from berth.domain.price_lines import LineKind

SOLD = (BookingStatus.CONFIRMED, BookingStatus.REDEEMED, BookingStatus.CANCELLED)
_MONTH = re.compile(r"(\d{4})-(\d{2})")


class Basis(StrEnum):
    TRAVEL = "travel"
    CONFIRMATION = "confirmation"


class LineStatus(StrEnum):
    REDEEMED = "REDEEMED"
    NOT_REDEEMED = "NOT_REDEEMED"
    CANCELLED = "CANCELLED"
    ISSUED = "ISSUED"  # a gift voucher sold and not cancelled


class StatementKind(StrEnum):
    BOOKING = "BOOKING"
    GIFT = "GIFT"


@dataclass(frozen=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def parse(cls, text: str) -> Month:
        """`2026-06`; BadRequest naming the text otherwise."""
        found = _MONTH.fullmatch(text)
        if found is None or not 1 <= int(found[2]) <= 12 or not 1 <= int(found[1]) < 9999:
            raise BadRequest(f"month {text[:20]!r} is not a month as YYYY-MM (e.g. 2026-06)")
        return cls(int(found[1]), int(found[2]))

    @classmethod
    def of(cls, day: date) -> Month:
        return cls(day.year, day.month)

    @property
    def first(self) -> date:
        return date(self.year, self.month, 1)

    @property
    def next(self) -> Month:
        return Month(self.year + 1, 1) if self.month == 12 else Month(self.year, self.month + 1)

    @property
    def last(self) -> date:
        return date.fromordinal(self.next.first.toordinal() - 1)

    def starts_at(self) -> datetime:
        """The month's first instant in UTC (the confirmation basis counts in UTC)."""
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def title(self) -> str:
        return f"{self.first:%B} {self.year}"


@dataclass(frozen=True)
class StatementLine:
    supplier_reference: str
    reseller_reference: str | None
    product_id: str
    product: str
    option_id: str
    option: str
    travel_date: date | None
    travel_time: str | None  # HH:MM in the product's time zone; None: open-dated, or open all day
    time_zone: str | None
    units: tuple[tuple[str, int], ...]  # (unit name, count), in the booking's order
    status: LineStatus
    currency: str | None
    precision: int
    original: int  # the retail before the discount
    discount: int  # what the offer took off the retail
    retail: int
    net: int
    commission: int
    net_missing: bool  # a line was sold without a net: its retail counts as net
    tax_retail: int = 0  # the tax included in retail
    tax_net: int = 0  # the tax included in net
    includes: tuple[
        str, ...
    ] = ()  # besides its units: `2 x Lunch box` (a multiplication sign), `Rental: Half day`
    kind: StatementKind = StatementKind.BOOKING
    gift_paid: int = 0  # what gift vouchers paid of a booking

    @property
    def owed(self) -> int:
        """What the connection owes for the line: its net less what gift vouchers paid."""
        return self.net - self.gift_paid

    @property
    def rate_text(self) -> str:
        """The commission (or margin) as a percentage of retail, to one decimal: `12.5 %`."""
        if self.retail <= 0:
            return ""
        return f"{(Decimal(self.commission) * 100 / self.retail).quantize(Decimal('0.1'))} %"

    @property
    def units_text(self) -> str:
        return ", ".join(f"{count} \N{MULTIPLICATION SIGN} {name}" for name, count in self.units)

    @property
    def unit_count(self) -> int:
        return sum(count for _, count in self.units)


@dataclass(frozen=True)
class Total:
    currency: str | None
    precision: int
    retail: int
    net: int
    commission: int
    count: int
    tax_retail: int = 0
    tax_net: int = 0
    original: int = 0  # the retail before the discount
    discount: int = 0
    gift_paid: int = 0

    @property
    def owed(self) -> int:
        return self.net - self.gift_paid

    def plus(self, other: Total) -> Total:
        """This total and `other` (of the same currency) added up."""
        return Total(
            self.currency,
            self.precision,
            self.retail + other.retail,
            self.net + other.net,
            self.commission + other.commission,
            self.count + other.count,
            self.tax_retail + other.tax_retail,
            self.tax_net + other.tax_net,
            self.original + other.original,
            self.discount + other.discount,
            self.gift_paid + other.gift_paid,
        )


COMMISSION_KIND = "COMMISSION"


@dataclass(frozen=True)
class Statement:
    connection_id: str
    connection_name: str
    month: Month
    basis: Basis
    lines: tuple[StatementLine, ...]
    totals: tuple[Total, ...]
    rate_kind: str = COMMISSION_KIND  # the contract's (Rate.kind)
    payment_terms: PaymentTerms = PaymentTerms.MONTHLY_INVOICE
    created_at: datetime | None = None
    reseller_address: str = ""  # the contract's, lines as written

    @property
    def margin_label(self) -> str:
        """What retail - net is: the reseller's commission, or under a net rate its margin."""
        return "Commission" if self.rate_kind == COMMISSION_KIND else "Margin"

    def settlement(self, supplier: str) -> str:
        """Who owes whom for the statement's lines (docs/contracts.md)."""
        due = "; ".join(
            f"{total.currency or ''} {amount_text(total.net, total.precision)}".strip()
            for total in self.totals
        )
        owed = "; ".join(
            f"{total.currency or ''} {amount_text(total.owed, total.precision)}".strip()
            for total in self.totals
        )
        paid = any(total.gift_paid for total in self.totals)
        if self.payment_terms is PaymentTerms.PREPAID:
            return (
                f"Prepaid: {self.connection_name} paid the net of these bookings ({due or 'nothing'}) "
                f"in advance; nothing more is owed to {supplier} for them."
            )
        kept = (
            "keeps its commission" if self.rate_kind == COMMISSION_KIND else "keeps its margin over the net"
        )
        if paid:
            return (
                f"Monthly invoice: {self.connection_name} owes {supplier} the net total less what "
                f"gift vouchers paid ({owed}) on {supplier}'s invoice for {self.month.title}; it {kept}."
            )
        return (
            f"Monthly invoice: {self.connection_name} owes {supplier} the net total ({due or 'nothing'}) "
            f"on {supplier}'s invoice for {self.month.title}; it {kept}."
        )


def amount_value(amount: int, precision: int) -> Decimal:
    """`1234` at precision 2: `Decimal("12.34")`, exact, with `precision` decimals."""
    return Decimal(amount).scaleb(-precision)


def amount_text(amount: int, precision: int) -> str:
    """`1234` at precision 2: `12.34`."""
    return f"{amount_value(amount, precision):.{precision}f}"


def sold(booking: Booking) -> bool:
    """Whether the booking was ever sold (see the module's rules)."""
    return not booking.test_mode and booking.confirmed_at is not None and booking.status in SOLD


def month_of(booking: Booking, basis: Basis) -> Month | None:
    """The month whose statement lists the booking; None if it was never sold."""
    if not sold(booking) or booking.confirmed_at is None:
        return None
    if basis is Basis.TRAVEL and booking.local_date is not None:
        return Month.of(booking.local_date)
    return Month.of(booking.confirmed_at.astimezone(UTC).date())


def _status(booking: Booking) -> LineStatus:
    if booking.status is BookingStatus.CANCELLED:
        return LineStatus.CANCELLED
    if booking.status is BookingStatus.REDEEMED or any(i.redeemed_at for i in booking.unit_items):
        return LineStatus.REDEEMED
    return LineStatus.NOT_REDEEMED


@dataclass
class _Sums:
    precision: int
    retail: int = 0
    discount: int = 0
    net: int = 0
    missing: bool = False
    tax_retail: int = 0
    tax_net: int = 0


def _sums(booking: Booking) -> dict[str | None, _Sums]:
    """The booking's stored lines summed per currency (its own currency, at zero, if none)."""
    sums: dict[str | None, _Sums] = {}
    for line in booking.price_lines:
        price = line.price
        found = sums.setdefault(price.currency, _Sums(price.currency_precision))
        found.retail += price.retail
        found.discount += line.discount.retail if line.discount is not None else 0
        found.net += price.retail if price.net is None else price.net
        found.missing = found.missing or price.net is None
        found.tax_retail += sum(tax.retail for tax in price.included_taxes)
        found.tax_net += sum(tax.retail if tax.net is None else tax.net for tax in price.included_taxes)
    return sums or {booking.currency: _Sums(2)}


def booking_lines(
    booking: Booking, catalog: Catalog, gift_paid: Mapping[str, int] | None = None
) -> list[StatementLine]:
    """The booking's statement line (one per currency of its stored lines), with what gift
    vouchers paid of it per currency (`gift_paid`)."""
    product = catalog.product(booking.product_id)
    option = product.option(booking.option_id) if product is not None else None
    zone = product.time_zone if product is not None else None
    start = booking.slot_start
    travel_time = None
    all_day = product is not None and product.availability_type is AvailabilityType.OPENING_HOURS
    if start is not None and booking.local_date is not None and not all_day:
        travel_time = f"{start.astimezone(ZoneInfo(zone) if zone else UTC):%H:%M}"
    units = []
    for unit_id, count in Counter(item.unit_id for item in booking.unit_items).items():
        unit = option.unit(unit_id) if option is not None else None
        units.append((unit.internal_name if unit is not None else unit_id, count))
    includes = []
    for extra_id, count in Counter(
        line.item for line in booking.price_lines if line.kind is LineKind.EXTRA
    ).items():
        extra = option.extra(extra_id) if option is not None else None
        includes.append(
            f"{count} \N{MULTIPLICATION SIGN} {extra.internal_name if extra is not None else extra_id}"
        )
    if booking.rental_duration_id is not None:
        duration = option.rental_duration(booking.rental_duration_id) if option is not None else None
        includes.append(f"Rental: {duration.title if duration is not None else booking.rental_duration_id}")
    status = _status(booking)
    cancelled = status is LineStatus.CANCELLED
    lines = []
    for currency, sums in _sums(booking).items():
        retail, discount, net = (0, 0, 0) if cancelled else (sums.retail, sums.discount, sums.net)
        tax_retail, tax_net = (0, 0) if cancelled else (sums.tax_retail, sums.tax_net)
        paid = 0 if cancelled or currency is None else (gift_paid or {}).get(currency, 0)
        lines.append(
            StatementLine(
                supplier_reference=booking.supplier_reference,
                reseller_reference=booking.reseller_reference,
                product_id=booking.product_id,
                product=product.internal_name if product is not None else booking.product_id,
                option_id=booking.option_id,
                option=option.internal_name if option is not None else booking.option_id,
                travel_date=booking.local_date,
                travel_time=travel_time,
                time_zone=zone if travel_time is not None else None,
                units=tuple(units),
                status=status,
                currency=currency,
                precision=sums.precision,
                original=retail + discount,
                discount=discount,
                retail=retail,
                net=net,
                commission=retail - net,
                net_missing=sums.missing and not cancelled,
                tax_retail=tax_retail,
                tax_net=tax_net,
                includes=tuple(includes),
                gift_paid=paid,
            )
        )
    return lines


def gift_month(gift: Gift) -> Month | None:
    """The month whose statement lists the gift voucher: that of its confirmation in UTC; None
    if it was never sold (a hold, a test voucher)."""
    if gift.test_mode or gift.confirmed_at is None:
        return None
    return Month.of(gift.confirmed_at.astimezone(UTC).date())


def gift_line(gift: Gift) -> StatementLine:
    """A gift voucher's statement line: its amount as retail, its net, zero once cancelled."""
    cancelled = gift.status is GiftStatus.CANCELLED
    retail, net = (0, 0) if cancelled else (gift.amount, gift.net)
    return StatementLine(
        supplier_reference=gift.supplier_reference,
        reseller_reference=gift.reseller_reference,
        product_id="",
        product="Gift voucher",
        option_id="",
        option="",
        travel_date=None,
        travel_time=None,
        time_zone=None,
        units=(),
        status=LineStatus.CANCELLED if cancelled else LineStatus.ISSUED,
        currency=gift.currency,
        precision=gift.currency_precision,
        original=retail,
        discount=0,
        retail=retail,
        net=net,
        commission=retail - net,
        net_missing=False,
        kind=StatementKind.GIFT,
    )


def gift_lines(connection_id: str, month: Month, gifts: Iterable[Gift]) -> list[StatementLine]:
    """The lines of the gift vouchers of `gifts` the connection sold in `month` (others left out)."""
    return [
        gift_line(gift) for gift in gifts if gift.connection_id == connection_id and gift_month(gift) == month
    ]


def per_currency(totals: Iterable[Total]) -> tuple[Total, ...]:
    """`totals` added up per currency (in order of currency code): several statements' together."""
    sums: dict[str | None, Total] = {}
    for total in totals:
        found = sums.get(total.currency)
        sums[total.currency] = total if found is None else found.plus(total)
    return tuple(sums[key] for key in sorted(sums, key=lambda currency: currency or ""))


def totals_of(lines: Iterable[StatementLine]) -> tuple[Total, ...]:
    """One total per currency (in order of currency code): the sums of its lines, and their count."""
    return per_currency(
        Total(
            line.currency,
            line.precision,
            line.retail,
            line.net,
            line.commission,
            1,
            line.tax_retail,
            line.tax_net,
            line.original,
            line.discount,
            line.gift_paid,
        )
        for line in lines
    )


def statement_lines(
    connection_id: str,
    month: Month,
    basis: Basis,
    bookings: Iterable[Booking],
    catalog: Catalog,
    gift_paid: Mapping[str, Mapping[str, int]] | None = None,
) -> list[StatementLine]:
    """The lines of `bookings` that belong on the connection's statement of `month` (any
    superset of the connection's bookings of the month: those of another connection or month,
    or never sold, are left out), unsorted; `gift_paid`: what gift vouchers paid of each
    booking (by its id), per currency."""
    paid = gift_paid or {}
    return [
        line
        for booking in bookings
        if booking.connection_id == connection_id and month_of(booking, basis) == month
        for line in booking_lines(booking, catalog, paid.get(booking.id))
    ]


def statement_of(
    connection_id: str,
    connection_name: str,
    month: Month,
    basis: Basis,
    lines: Iterable[StatementLine],
    *,
    rate_kind: str = COMMISSION_KIND,
    payment_terms: PaymentTerms = PaymentTerms.MONTHLY_INVOICE,
    created_at: datetime | None = None,
    reseller_address: str = "",
) -> Statement:
    """The statement of these lines: in the order of travel date and time, then supplier
    reference; open-dated bookings after, gift vouchers last; with their totals."""
    ordered = sorted(
        lines,
        key=lambda line: (
            line.kind is StatementKind.GIFT,
            line.travel_date or date.max,
            line.travel_time or "",
            line.supplier_reference,
            line.currency or "",
        ),
    )
    return Statement(
        connection_id,
        connection_name,
        month,
        basis,
        tuple(ordered),
        totals_of(ordered),
        rate_kind,
        payment_terms,
        created_at,
        reseller_address,
    )


def statement(
    connection_id: str,
    connection_name: str,
    month: Month,
    basis: Basis,
    bookings: Iterable[Booking],
    catalog: Catalog,
    *,
    gifts: Iterable[Gift] = (),
    gift_paid: Mapping[str, Mapping[str, int]] | None = None,
    rate_kind: str = COMMISSION_KIND,
    payment_terms: PaymentTerms = PaymentTerms.MONTHLY_INVOICE,
    created_at: datetime | None = None,
    reseller_address: str = "",
) -> Statement:
    """The statement of `month` from `bookings` (see `statement_lines`) and `gifts` (see
    `gift_lines`), under the contract's `rate_kind` and `payment_terms`, made at `created_at`."""
    lines = statement_lines(connection_id, month, basis, bookings, catalog, gift_paid)
    lines += gift_lines(connection_id, month, gifts)
    return statement_of(
        connection_id,
        connection_name,
        month,
        basis,
        lines,
        rate_kind=rate_kind,
        payment_terms=payment_terms,
        created_at=created_at,
        reseller_address=reseller_address,
    )
