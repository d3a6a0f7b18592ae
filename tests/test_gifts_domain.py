"""The rules of gift vouchers, pure (berth.domain.gifts): what a payment takes (never more than
the balance, all or nothing when exact), why a voucher cannot pay, its validity in calendar
months, and its net under a contract."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.bookings import Contact
from berth.domain.contracts import Contract, Rate, gift_net
from berth.domain.gift_errors import GiftCurrencyMismatch, GiftInsufficientBalance, InvalidGiftCode
from berth.domain.gifts import Gift, GiftStatus, Movement, MovementKind, add_months, balance, to_take

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)


def voucher(status: GiftStatus = GiftStatus.CONFIRMED, **fields: object) -> Gift:
    values: dict[str, object] = {
        "id": "g", "uuid": "u", "connection_id": "c", "status": status, "supplier_reference": "GX",
        "currency": "EUR", "currency_precision": 2, "amount": 5000, "net": 4000, "contact": Contact(),
        "created_at": NOW, "updated_at": NOW, "expires_at": NOW + timedelta(days=1000), "request_fingerprint": "f",
        "confirmed_at": NOW, **fields,
    }  # fmt: skip
    return Gift(**values)  # type: ignore[arg-type]


def ledger(*amounts: int) -> list[Movement]:
    kinds = [MovementKind.ISSUE, *(MovementKind.REDEMPTION for _ in amounts[1:])]
    return [Movement("g", kind, amount, NOW, "t") for kind, amount in zip(kinds, amounts, strict=True)]


@given(
    st.lists(st.integers(min_value=1, max_value=2000), max_size=8),
    st.integers(min_value=1, max_value=10_000),
    st.booleans(),
)
def test_a_payment_never_takes_more_than_the_balance(spent: list[int], wanted: int, exact: bool) -> None:
    movements = ledger(10_000)
    for amount in spent:
        try:
            taken = to_take(voucher(), movements, "C", "EUR", amount, NOW, exact=True)
        except GiftInsufficientBalance:
            continue
        movements.append(Movement("g", MovementKind.REDEMPTION, -taken, NOW, "t"))
    left = balance(movements)
    assert left >= 0
    try:
        taken = to_take(voucher(), movements, "C", "EUR", wanted, NOW, exact=exact)
    except GiftInsufficientBalance:
        assert left == 0 or (exact and left < wanted)
        return
    assert taken == (wanted if exact else min(left, wanted)) and 0 < taken <= left


@pytest.mark.parametrize(
    ("gift", "why"),
    [
        (voucher(GiftStatus.ON_HOLD, confirmed_at=None), "not issued yet"),
        (voucher(GiftStatus.CANCELLED), "was cancelled"),
        (voucher(expires_at=NOW), "expired on 2026-06-01"),
        (voucher(GiftStatus.ON_HOLD, confirmed_at=None, expires_at=NOW), "never issued"),
    ],
)
def test_why_a_voucher_cannot_pay(gift: Gift, why: str) -> None:
    with pytest.raises(InvalidGiftCode, match=why):
        to_take(gift, ledger(5000), "CODE", "EUR", 100, NOW, exact=True)


def test_another_currency_is_refused() -> None:
    with pytest.raises(GiftCurrencyMismatch):
        to_take(voucher(), ledger(5000), "CODE", "GBP", 100, NOW, exact=True)


def test_validity_counts_calendar_months() -> None:
    assert add_months(datetime(2026, 1, 31, 9, tzinfo=UTC), 1) == datetime(2026, 2, 28, 9, tzinfo=UTC)
    assert add_months(datetime(2028, 2, 29, tzinfo=UTC), 36) == datetime(2031, 2, 28, tzinfo=UTC)
    assert add_months(datetime(2026, 6, 1, 8, tzinfo=UTC), 36) == datetime(2029, 6, 1, 8, tzinfo=UTC)
    assert add_months(datetime(2026, 11, 15, tzinfo=UTC), 14) == datetime(2028, 1, 15, tzinfo=UTC)


def test_a_gifts_net_follows_the_commission_and_no_price_list() -> None:
    assert gift_net(5000, Contract()) == 5000
    assert gift_net(5000, Contract(rate=Rate(commission=Decimal(20)))) == 4000
    assert gift_net(4999, Contract(rate=Rate(commission=Decimal("12.5")))) == 4999 - 625
    assert gift_net(100, Contract(rate=Rate(commission=Decimal("0.5")))) == 99  # 0.5 rounded half up
