"""The monthly statement's rules (domain.statements, issue 37), as properties: for random
bookings, prices, offers' discounts (issue 51) and cancellations, the totals are the exact sums of
the lines and of the sold bookings' stored prices, in integers, and original - discount = retail
for every line and total; the month a booking counts in follows the basis."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pypdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.domain.bookings import Booking, BookingStatus, Cancellation, Contact, UnitItem
from berth.domain.catalog import Price
from berth.domain.contracts import PaymentTerms
from berth.domain.discounts import OfferTerms, discounted, without_discount
from berth.domain.errors import BadRequest
from berth.domain.ledger import ChannelSales, channel_lines, sold_totals
from berth.domain.offers import DiscountPer, NetDiscount
from berth.domain.price_lines import LineKind, PriceLine
from berth.domain.statements import Basis, LineStatus, Month, Statement, amount_text, month_of, statement
from tests.bookings_helpers import booking_catalog
from tests.builders import catalog
from tests.rentals_helpers import BIKES, bike_hire

CATALOG = booking_catalog()
JUNE = Month(2026, 6)
CONNECTION = "connection-a"


def price(retail: int, net: int | None, currency: str = "EUR", precision: int = 2) -> Price:
    return Price.model_validate(
        {"currency": currency, "currencyPrecision": precision, "retail": retail, "net": net}
    )


def booking(
    number: int,
    status: BookingStatus,
    lines: tuple[PriceLine, ...],
    *,
    day: date | None = date(2026, 6, 2),
    confirmed_at: datetime | None = datetime(2026, 5, 20, 9, 0, tzinfo=UTC),
    connection_id: str = CONNECTION,
    test_mode: bool = False,
    product_id: str = "thames-sightseeing",
) -> Booking:
    start = datetime(day.year, day.month, day.day, 9, tzinfo=UTC) if day is not None else None
    return Booking(
        id=f"id-{number}",
        uuid=f"uuid-{number}",
        connection_id=connection_id,
        test_mode=test_mode,
        status=status,
        product_id=product_id,
        option_id="DEFAULT",
        availability_id=start.isoformat() if start else None,
        slot_start=start,
        local_date=day,
        pax=len(lines),
        reseller_reference=f"R-{number}",
        supplier_reference=f"S{number:05d}",
        notes=None,
        contact=Contact(),
        unit_items=tuple(UnitItem(f"u{number}-{i}", "adult", f"S{number}-{i}") for i in range(len(lines))),
        currency=lines[0].price.currency if lines else None,
        freesale=False,
        request_fingerprint="",
        created_at=datetime(2026, 5, 20, 8, 0, tzinfo=UTC),
        confirmed_at=confirmed_at,
        cancellation=Cancellation("FULL", None, datetime(2026, 5, 21, tzinfo=UTC))
        if status is BookingStatus.CANCELLED
        else None,
        price_lines=lines,
    )


def unit_line(i: int, sold_at: Price, unit: str = "adult") -> PriceLine:
    return PriceLine(LineKind.UNIT, f"u-{i}", unit, sold_at)


def offer(
    net_discount: NetDiscount,
    percent: Decimal | None = None,
    amount: int | None = None,
    per: DiscountPer = DiscountPer.UNIT,
    units: frozenset[str] | None = None,
) -> OfferTerms:
    """A booking's offer terms, as the offers service keeps them with it."""
    return OfferTerms(
        "offer-1", "offer-1", "SUMMER10", {"en": "Summer"}, net_discount, percent, amount, per, units
    )


prices = st.builds(
    lambda retail, share, currency, missing: price(
        retail, None if missing else retail * share // 100, currency, 0 if currency == "JPY" else 2
    ),
    st.integers(0, 10**9),
    st.integers(0, 100),
    st.sampled_from(("EUR", "GBP", "JPY")),
    st.booleans(),
)
# An offer of a percent, or of an amount per unit or per booking, for every unit or the adults only.
offers = st.one_of(
    st.none(),
    st.builds(
        lambda net_discount, percent, amount, per, units: offer(net_discount, percent, amount, per, units),
        st.sampled_from(list(NetDiscount)),
        st.one_of(st.none(), st.decimals(0, 100, places=2)),
        st.integers(0, 10**9),
        st.sampled_from(list(DiscountPer)),
        st.sampled_from([None, frozenset({"adult"})]),
    ),
)
bookings = st.builds(
    lambda n, status, sold, terms, day, confirmed, test, other: booking(
        n,
        status,
        discounted(tuple(unit_line(i, p, unit) for i, (p, unit) in enumerate(sold)), terms),
        day=day,
        confirmed_at=confirmed,
        test_mode=test,
        connection_id="connection-b" if other else CONNECTION,
    ),
    st.integers(0, 10**6),
    st.sampled_from(list(BookingStatus)),
    st.lists(st.tuples(prices, st.sampled_from(("adult", "child"))), max_size=4),
    offers,
    st.one_of(st.none(), st.dates(date(2026, 5, 25), date(2026, 7, 5))),
    st.one_of(st.none(), st.datetimes(datetime(2026, 5, 1), datetime(2026, 7, 1), timezones=st.just(UTC))),
    st.booleans(),
    st.booleans(),
)


def _ints(found: Statement) -> None:
    amounts = [(t.original, t.discount, t.retail, t.net, t.commission) for t in found.totals]
    amounts += [
        (line.original, line.discount, line.retail, line.net, line.commission) for line in found.lines
    ]
    assert all(type(amount) is int for five in amounts for amount in five)


@settings(max_examples=300, deadline=None)
@given(st.lists(bookings, max_size=25, unique_by=lambda b: b.id), st.sampled_from(list(Basis)))
def test_totals_are_the_sums_of_the_lines_and_of_the_stored_prices(
    found: list[Booking], basis: Basis
) -> None:
    made = statement(CONNECTION, "Reseller A", JUNE, basis, found, CATALOG)
    _ints(made)
    listed = [b for b in found if b.connection_id == CONNECTION and month_of(b, basis) == JUNE]
    assert {line.supplier_reference for line in made.lines} == {b.supplier_reference for b in listed}
    for total in made.totals:
        lines = [line for line in made.lines if line.currency == total.currency]
        assert total.count == len(lines)
        assert total.retail == sum(line.retail for line in lines)
        assert total.net == sum(line.net for line in lines)
        assert total.commission == sum(line.commission for line in lines) == total.retail - total.net
        assert total.original == sum(line.original for line in lines)
        assert total.discount == sum(line.discount for line in lines)
        assert total.original - total.discount == total.retail
        sold = [
            line
            for b in listed
            if b.status is not BookingStatus.CANCELLED
            for line in b.price_lines
            if line.price.currency == total.currency
        ]
        stored = [line.price for line in sold]
        assert total.retail == sum(p.retail for p in stored)
        assert total.net == sum(p.retail if p.net is None else p.net for p in stored)
        # the retail before the discount, as the offers' own undoing of a discount has it
        assert total.original == sum(without_discount(line).price.retail for line in sold)
        assert total.discount == sum(line.discount.retail for line in sold if line.discount is not None)
    for line in made.lines:
        assert line.original - line.discount == line.retail and 0 <= line.discount <= line.original
        if line.status is LineStatus.CANCELLED:
            assert (line.original, line.discount, line.retail, line.net, line.commission, line.net_missing) == (
                0, 0, 0, 0, 0, False,
            )  # fmt: skip
    assert sum(t.count for t in made.totals) == len(made.lines)


@given(bookings, st.sampled_from(list(Basis)))
def test_only_what_was_sold_is_listed(found: Booking, basis: Basis) -> None:
    """Holds, requests never accepted and test bookings never appear; a sold booking counts in
    its travel month (travel basis, when it has a date) or its confirmation month (UTC)."""
    month = month_of(found, basis)
    sold = (
        not found.test_mode
        and found.confirmed_at is not None
        and found.status in (BookingStatus.CONFIRMED, BookingStatus.REDEEMED, BookingStatus.CANCELLED)
    )
    assert (month is not None) == sold
    if month is not None and found.confirmed_at is not None:
        on_date = basis is Basis.TRAVEL and found.local_date is not None
        expected = found.local_date if on_date else found.confirmed_at.date()
        assert expected is not None and month == Month.of(expected)


def test_a_line_sums_its_booking_and_flags_a_missing_net() -> None:
    sold = booking(
        1, BookingStatus.CONFIRMED, (unit_line(0, price(5000, 4000)), unit_line(1, price(1500, None)))
    )
    redeemed = replace(
        booking(2, BookingStatus.REDEEMED, (unit_line(0, price(2500, 2000)),), day=date(2026, 6, 1)),
        redeemed_at=datetime(2026, 6, 1, 9, tzinfo=UTC),
    )
    cancelled = booking(3, BookingStatus.CANCELLED, (unit_line(0, price(9999, 1)),))
    open_dated = booking(4, BookingStatus.CONFIRMED, (unit_line(0, price(700, 500, "GBP")),), day=None,
                         confirmed_at=datetime(2026, 6, 30, 23, 30, tzinfo=UTC))  # fmt: skip
    held = booking(5, BookingStatus.ON_HOLD, (unit_line(0, price(100, 50)),), confirmed_at=None)
    pending = booking(6, BookingStatus.PENDING, (unit_line(0, price(100, 50)),), confirmed_at=None)
    made = statement(
        CONNECTION, "A", JUNE, Basis.TRAVEL, [sold, redeemed, cancelled, open_dated, held, pending], CATALOG
    )
    assert [(line.supplier_reference, line.status, line.retail, line.net, line.commission, line.net_missing) for line in made.lines] == [
        ("S00002", LineStatus.REDEEMED, 2500, 2000, 500, False),
        ("S00001", LineStatus.NOT_REDEEMED, 6500, 5500, 1000, True),
        ("S00003", LineStatus.CANCELLED, 0, 0, 0, False),
        ("S00004", LineStatus.NOT_REDEEMED, 700, 500, 200, False),
    ]  # fmt: skip
    first = made.lines[1]
    assert (first.product, first.travel_date, first.travel_time, first.time_zone) == (
        "Thames Sightseeing", date(2026, 6, 2), "10:00", "Europe/London",
    )  # fmt: skip
    assert first.units_text == "2 \N{MULTIPLICATION SIGN} Adult" and first.unit_count == 2
    assert [(t.currency, t.retail, t.net, t.commission, t.count) for t in made.totals] == [
        ("EUR", 9000, 7500, 1500, 3),
        ("GBP", 700, 500, 200, 1),
    ]
    museum = booking(
        7, BookingStatus.CONFIRMED, (unit_line(0, price(1800, 1440)),), product_id="tower-of-stories"
    )
    [all_day] = statement(CONNECTION, "A", JUNE, Basis.TRAVEL, [museum], CATALOG).lines
    assert (all_day.product, all_day.travel_date, all_day.travel_time) == (
        "Tower Of Stories",
        date(2026, 6, 2),
        None,
    )
    by_confirmation = statement(
        CONNECTION, "A", Month(2026, 5), Basis.CONFIRMATION, [sold, open_dated], CATALOG
    )
    assert [line.supplier_reference for line in by_confirmation.lines] == ["S00001"]


@pytest.mark.parametrize(
    "text", ["2026-13", "2026-00", "2026-6", "June", "", "0000-01", "9999-12", "2026-06-01"]
)
def test_a_bad_month_is_refused_naming_it(text: str) -> None:
    with pytest.raises(BadRequest, match="YYYY-MM") as refused:
        Month.parse(text)
    assert repr(text) in refused.value.message


def test_months_and_amounts_are_exact() -> None:
    assert (str(Month.parse("2026-12")), Month.parse("2026-12").last, Month(2026, 12).next) == (
        "2026-12", date(2026, 12, 31), Month(2027, 1),
    )  # fmt: skip
    assert Month(2024, 2).last == date(2024, 2, 29) and Month(2026, 6).title == "June 2026"
    assert [amount_text(a, p) for a, p in ((1234, 2), (5, 2), (0, 0), (10**18 + 1, 3), (7, 4))] == [
        "12.34", "0.05", "0", "1000000000000000.001", "0.0007",
    ]  # fmt: skip
    assert Month(2026, 6).starts_at() + timedelta(days=30) == Month(2026, 7).starts_at()


def test_a_line_says_what_it_includes_its_tax_and_the_rate_applied() -> None:
    """Issue 49 §4: a line carries the tax included in its retail and net (summed over its
    lines), its extras, and the commission as a percentage of retail."""
    taxed = Price.model_validate(
        {
            "currency": "EUR",
            "retail": 2500,
            "net": 2000,
            "includedTaxes": [{"name": "VAT", "retail": 417, "original": 417, "net": 333}],
        }
    )
    lunch = Price.model_validate({"currency": "EUR", "retail": 1000, "net": 875})
    lines = (
        unit_line(0, taxed),
        unit_line(1, taxed),
        PriceLine(LineKind.EXTRA, "piece-1", "lunch-box", lunch),
        PriceLine(LineKind.EXTRA, "piece-2", "lunch-box", lunch),
    )
    made = statement(
        CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, [booking(1, BookingStatus.CONFIRMED, lines)], CATALOG
    )
    (line,) = made.lines
    assert (line.retail, line.net, line.commission) == (7000, 5750, 1250)
    assert (line.tax_retail, line.tax_net) == (834, 666)
    assert line.includes == ("2 \N{MULTIPLICATION SIGN} lunch-box",)  # not an extra of this catalogue: its id
    assert line.rate_text == "17.9 %"  # 1250 / 7000
    (total,) = made.totals
    assert (total.tax_retail, total.tax_net) == (834, 666)


@pytest.mark.parametrize(
    ("kind", "terms", "label", "wording"),
    [
        ("COMMISSION", PaymentTerms.MONTHLY_INVOICE, "Commission",
         "Monthly invoice: Reseller A owes Thames Co the net total (EUR 20.00) on Thames Co's invoice for "
         "June 2026; it keeps its commission."),
        ("NET_PRICE_LIST", PaymentTerms.MONTHLY_INVOICE, "Margin",
         "Monthly invoice: Reseller A owes Thames Co the net total (EUR 20.00) on Thames Co's invoice for "
         "June 2026; it keeps its margin over the net."),
        ("CATALOG_NET", PaymentTerms.PREPAID, "Margin",
         "Prepaid: Reseller A paid the net of these bookings (EUR 20.00) in advance; nothing more is owed "
         "to Thames Co for them."),
    ],
)  # fmt: skip
def test_the_terms_say_who_owes_whom_and_a_net_rate_has_a_margin(
    kind: str, terms: PaymentTerms, label: str, wording: str
) -> None:
    sold = booking(1, BookingStatus.CONFIRMED, (unit_line(0, price(2500, 2000)),))
    made = statement(
        CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, [sold], CATALOG, rate_kind=kind, payment_terms=terms
    )
    assert made.margin_label == label
    assert made.settlement("Thames Co") == wording


def test_the_pdf_says_page_n_of_m_and_names_the_reseller_on_every_page() -> None:
    from berth.tickets.statement import render_statement  # reportlab loads with the first PDF

    sold = [booking(n, BookingStatus.CONFIRMED, (unit_line(0, price(2500, 2000)),)) for n in range(120)]
    made = statement(
        CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, sold, CATALOG,
        created_at=datetime(2026, 7, 1, 6, 30, tzinfo=UTC),
    )  # fmt: skip
    pages = [
        " ".join(p.extract_text().split())
        for p in pypdf.PdfReader(io.BytesIO(render_statement(made, CATALOG.supplier))).pages
    ]
    assert len(pages) > 2
    for number, text in enumerate(pages, start=1):
        assert f"Statement 2026-06 · Reseller A · Page {number} of {len(pages)}" in text, text[-300:]
    assert "Created: 01 Jul 2026 06:30 UTC" in pages[0]
    metadata = pypdf.PdfReader(io.BytesIO(render_statement(made, CATALOG.supplier))).metadata
    assert metadata is not None and metadata.creation_date == datetime(2026, 7, 1, 6, 30, tzinfo=UTC)
    assert "Payment terms: Monthly invoice: Reseller A owes" in pages[0]


def test_a_rental_line_names_its_duration() -> None:
    hired = replace(
        booking(
            1,
            BookingStatus.CONFIRMED,
            (unit_line(0, price(1950, 1560, "GBP")),),
            product_id=BIKES["productId"],
        ),
        rental_duration_id="half-day",
    )
    (line,) = statement(CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, [hired], catalog(bike_hire())).lines
    assert line.includes == ("Rental: Half day",)


@pytest.mark.parametrize(
    ("net_discount", "net", "commission"),
    [(NetDiscount.NONE, 8000, 1000), (NetDiscount.FULL, 7000, 2000), (NetDiscount.SPLIT, 7500, 1500),
     (NetDiscount.PRORATED, 7200, 1800)],
)  # fmt: skip
def test_a_discounted_sale_shows_its_original_discount_retail_net_and_commission(
    net_discount: NetDiscount, net: int, commission: int
) -> None:
    """docs/contracts.md's worked example: retail 100.00 at a 20 % commission (net 80.00), a 10 %
    offer: original 100.00, discount 10.00, retail 90.00, and the net as the offer's netDiscount
    says; a cancelled discounted booking is at zero."""
    lines = discounted((unit_line(0, price(10000, 8000)),), offer(net_discount, percent=Decimal(10)))
    sold = booking(1, BookingStatus.CONFIRMED, lines)
    cancelled = booking(2, BookingStatus.CANCELLED, lines)
    made = statement(CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, [sold, cancelled], CATALOG)
    first, second = made.lines
    assert (first.original, first.discount, first.retail, first.net, first.commission) == (
        10000, 1000, 9000, net, commission,
    )  # fmt: skip
    assert (second.original, second.discount, second.retail) == (0, 0, 0)
    (total,) = made.totals
    assert (total.original, total.discount, total.retail, total.net, total.commission, total.count) == (
        10000, 1000, 9000, net, commission, 2,
    )  # fmt: skip


def test_a_catalogue_original_is_not_the_statements_original() -> None:
    """A price sold with an `original` of its own (a 'was' price in the catalogue) and no offer
    has no discount on the statement: its original there is its retail."""
    was = Price.model_validate({"currency": "EUR", "retail": 2500, "original": 3000, "net": 2000})
    (line,) = statement(
        CONNECTION,
        "A",
        JUNE,
        Basis.TRAVEL,
        [booking(1, BookingStatus.CONFIRMED, (unit_line(0, was),))],
        CATALOG,
    ).lines
    assert (line.original, line.discount, line.retail) == (2500, 0, 2500)


money = st.builds(
    ChannelSales,
    st.sampled_from((CONNECTION, "connection-b", "web-shop")),
    st.sampled_from(("EUR", "GBP", "JPY")),
    st.integers(0, 5),
    st.integers(0, 10**9),
    st.integers(0, 5),
    st.integers(0, 10**9),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(bookings, max_size=25, unique_by=lambda b: b.id),
    st.lists(money, max_size=6, unique_by=lambda m: (m.connection_id, m.currency)),
)
def test_the_channel_report_sells_what_the_statements_sell_and_its_totals_add_up(
    found: list[Booking], moved: list[ChannelSales]
) -> None:
    """The channel report's sold columns are each channel's statement totals, one line per
    channel and currency that sold or took money; its totals per currency are the sums of its
    lines; original - discount = retail on every line and total."""
    statements = [
        statement(connection, connection, JUNE, Basis.TRAVEL, found, CATALOG)
        for connection in (CONNECTION, "connection-b")
    ]
    lines = channel_lines(moved, statements)
    keys = [(line.connection_id, line.currency) for line in lines]
    expected = {(m.connection_id, m.currency) for m in moved}
    expected |= {(s.connection_id, t.currency or "") for s in statements for t in s.totals}
    assert sorted(keys) == keys and set(keys) == expected and len(keys) == len(expected)
    for line in lines:
        assert line.moved == next(
            (m for m in moved if (m.connection_id, m.currency) == (line.connection_id, line.currency)), None
        )
        own = [t for s in statements if s.connection_id == line.connection_id for t in s.totals]
        assert line.sold == next((t for t in own if (t.currency or "") == line.currency), None)
    totals = sold_totals(lines)
    assert [t.currency for t in totals] == sorted(
        {line.sold.currency for line in lines if line.sold}, key=lambda c: c or ""
    )
    for total in totals:
        sold = [line.sold for line in lines if line.sold is not None and line.sold.currency == total.currency]
        for field in (
            "count",
            "original",
            "discount",
            "retail",
            "net",
            "commission",
            "tax_retail",
            "tax_net",
        ):
            assert getattr(total, field) == sum(getattr(t, field) for t in sold), field
        assert total.original - total.discount == total.retail
        assert total.commission == total.retail - total.net
    for line in lines:
        if line.sold is not None:
            assert line.sold.original - line.sold.discount == line.sold.retail
