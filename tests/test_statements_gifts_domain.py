"""Gift vouchers on the monthly statement (domain.statements, issue 51), as properties: for random
bookings, some paid in part with vouchers, and random vouchers (held, confirmed, cancelled,
expired, test, another reseller's), a voucher sold in the month is a GIFT line (its amount as
retail, its net, zero once cancelled), a booking shows what vouchers paid of it (zero once
cancelled), and every total, Owed too, is the sum of its lines."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.domain.bookings import Booking, BookingStatus, Contact
from berth.domain.contracts import PaymentTerms
from berth.domain.gifts import Gift, GiftStatus
from berth.domain.statements import (
    Basis,
    LineStatus,
    Month,
    StatementKind,
    gift_month,
    statement,
)
from tests.test_statements_domain import CATALOG, CONNECTION, JUNE, booking, bookings, price, unit_line


def gift(
    number: int,
    status: GiftStatus,
    amount: int,
    share: int,
    currency: str,
    confirmed_at: datetime | None,
    test_mode: bool = False,
    connection_id: str = CONNECTION,
) -> Gift:
    at = datetime(2026, 5, 1, tzinfo=UTC)
    return Gift(
        id=f"gift-{number}", uuid=f"gift-uuid-{number}", connection_id=connection_id, status=status,
        supplier_reference=f"G{number:07d}", currency=currency, currency_precision=0 if currency == "JPY" else 2,
        amount=amount, net=amount * share // 100, contact=Contact(), created_at=at, updated_at=at,
        expires_at=datetime(2027, 6, 1, tzinfo=UTC), request_fingerprint="", test_mode=test_mode,
        confirmed_at=None if status is GiftStatus.ON_HOLD else confirmed_at,
    )  # fmt: skip


gifts = st.builds(
    lambda n, status, amount, share, currency, confirmed, test, other: gift(
        n, status, amount, share, currency, confirmed, test, "connection-b" if other else CONNECTION
    ),
    st.integers(0, 10**6),
    st.sampled_from(list(GiftStatus)),
    st.integers(1, 10**9),
    st.integers(0, 100),
    st.sampled_from(("EUR", "GBP", "JPY")),
    st.one_of(st.none(), st.datetimes(datetime(2026, 5, 25), datetime(2026, 7, 5), timezones=st.just(UTC))),
    st.booleans(),
    st.booleans(),
)


def _paid(found: list[Booking], shares: list[int]) -> dict[str, dict[str, int]]:
    """What vouchers paid of each booking: a share of its retail in its currency, up to all of it."""
    paid: dict[str, dict[str, int]] = {}
    for sold, share in zip(found, shares, strict=False):
        for line in sold.price_lines:
            currency = line.price.currency
            per = paid.setdefault(sold.id, {})
            per[currency] = per.get(currency, 0) + line.price.retail * share // 100
    return paid


@settings(max_examples=300, deadline=None)
@given(
    st.lists(bookings, max_size=20, unique_by=lambda b: b.id),
    st.lists(st.integers(0, 100), max_size=20),
    st.lists(gifts, max_size=10, unique_by=lambda g: g.id),
    st.sampled_from(list(Basis)),
)
def test_gift_lines_and_what_vouchers_paid_add_up(
    found: list[Booking], shares: list[int], sold: list[Gift], basis: Basis
) -> None:
    paid = _paid(found, shares)
    made = statement(CONNECTION, "Reseller A", JUNE, basis, found, CATALOG, gifts=sold, gift_paid=paid)
    listed = [g for g in sold if g.connection_id == CONNECTION and gift_month(g) == JUNE]
    gift_lines = [line for line in made.lines if line.kind is StatementKind.GIFT]
    assert sorted(line.supplier_reference for line in gift_lines) == sorted(
        g.supplier_reference for g in listed
    )
    kinds = [line.kind for line in made.lines]
    assert kinds == sorted(kinds, key=lambda kind: kind is StatementKind.GIFT)  # gifts last
    for voucher in listed:
        line = next(line for line in gift_lines if line.supplier_reference == voucher.supplier_reference)
        cancelled = voucher.status is GiftStatus.CANCELLED
        assert line.status is (LineStatus.CANCELLED if cancelled else LineStatus.ISSUED)
        expected = (0, 0) if cancelled else (voucher.amount, voucher.net)
        assert (line.retail, line.net, line.original, line.discount, line.gift_paid) == (
            *expected,
            *expected[:1],
            0,
            0,
        )
        assert line.commission == line.retail - line.net and line.owed == line.net
    for line in made.lines:
        if line.kind is StatementKind.BOOKING:
            owner = next(b for b in found if b.supplier_reference == line.supplier_reference)
            expected_paid = paid.get(owner.id, {}).get(line.currency or "", 0)
            assert line.gift_paid == (0 if owner.status is BookingStatus.CANCELLED else expected_paid)
        assert line.owed == line.net - line.gift_paid
    for total in made.totals:
        lines = [line for line in made.lines if line.currency == total.currency]
        assert total.count == len(lines)
        for field in ("original", "discount", "retail", "net", "commission", "gift_paid", "owed"):
            assert getattr(total, field) == sum(getattr(line, field) for line in lines), field
        assert total.owed == total.net - total.gift_paid
        assert total.original - total.discount == total.retail
    assert sum(t.count for t in made.totals) == len(made.lines)


@given(gifts)
def test_a_voucher_counts_in_the_month_of_its_confirmation(voucher: Gift) -> None:
    """Under either basis: a voucher has no travel date. Holds never confirmed and test
    vouchers are never on a statement."""
    month = gift_month(voucher)
    assert (month is not None) == (voucher.confirmed_at is not None and not voucher.test_mode)
    if month is not None and voucher.confirmed_at is not None:
        assert month == Month.of(voucher.confirmed_at.date())


def test_the_terms_say_the_reseller_owes_the_net_less_what_vouchers_paid() -> None:
    voucher = gift(1, GiftStatus.CONFIRMED, 5000, 80, "EUR", datetime(2026, 6, 3, tzinfo=UTC))
    made = statement(CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, [], CATALOG, gifts=[voucher])
    assert "owes Supplier the net total (EUR 40.00)" in made.settlement("Supplier")
    sold = [booking(7, BookingStatus.CONFIRMED, (unit_line(0, price(6500, 5200)),))]
    paid = {sold[0].id: {"EUR": 1000}}
    made = statement(
        CONNECTION, "Reseller A", JUNE, Basis.TRAVEL, sold, CATALOG, gifts=[voucher], gift_paid=paid,
        payment_terms=PaymentTerms.MONTHLY_INVOICE,
    )  # fmt: skip
    (total,) = made.totals
    assert total.owed == total.net - 1000
    assert f"net total less what gift vouchers paid (EUR {total.owed / 100:.2f})" in made.settlement(
        "Supplier"
    )
