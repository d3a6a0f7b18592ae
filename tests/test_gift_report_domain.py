"""The monthly gifts report (domain.gift_report), pure: whatever the ledger holds, each
currency's opening liability plus the month's movements is its closing liability, the opening
is every movement before the month and the closing every movement before its end."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.gift_report import LiabilityLine, liability_lines
from berth.domain.gifts import Movement, MovementKind

START = datetime(2026, 6, 1, tzinfo=UTC)
END = datetime(2026, 7, 1, tzinfo=UTC)
SIGN = {
    MovementKind.ISSUE: 1,
    MovementKind.REDEMPTION: -1,
    MovementKind.REVERSAL: 1,
    MovementKind.EXPIRY: -1,
    MovementKind.CANCELLATION: -1,
}


@st.composite
def movements(draw: st.DrawFn) -> tuple[str, Movement]:
    kind = draw(st.sampled_from(list(MovementKind)))
    amount = SIGN[kind] * draw(st.integers(min_value=1, max_value=10**9))
    at = START + timedelta(minutes=draw(st.integers(min_value=-90 * 24 * 60, max_value=90 * 24 * 60)))
    gift = draw(st.sampled_from(["g1", "g2", "g3"]))
    return draw(st.sampled_from(["EUR", "GBP", "JPY"])), Movement(gift, kind, amount, at, "test")


@given(st.lists(movements(), max_size=60))
def test_opening_plus_the_months_movements_is_the_closing(ledger: list[tuple[str, Movement]]) -> None:
    lines = liability_lines(ledger, START, END)
    assert [line.currency for line in lines] == sorted({line.currency for line in lines})
    for line in lines:
        mine = [m for currency, m in ledger if currency == line.currency]
        assert line.opening == sum(m.amount for m in mine if m.at < START)
        assert line.closing == sum(m.amount for m in mine if m.at < END)
        moved = line.issued - line.redeemed + line.reversed - line.expired - line.cancelled
        assert line.opening + moved == line.closing
        assert min(line.issued, line.redeemed, line.reversed, line.expired, line.cancelled) >= 0
    shown = {line.currency for line in lines}
    for currency in {c for c, _ in ledger} - shown:  # left out: nothing owed, nothing moved
        mine = [m for c, m in ledger if c == currency]
        assert sum(m.amount for m in mine if m.at < START) == 0
        assert not [m for m in mine if START <= m.at < END]


def test_a_month_of_one_voucher_reads_as_its_ledger() -> None:
    def at(day: int, month: int = 6) -> datetime:
        return datetime(2026, month, day, 12, tzinfo=UTC)

    ledger = [
        ("EUR", Movement("g", MovementKind.ISSUE, 5000, at(20, 5), "reseller")),
        ("EUR", Movement("g", MovementKind.REDEMPTION, -3000, at(2), "booking", "b1")),
        ("EUR", Movement("g", MovementKind.REVERSAL, 3000, at(3), "booking", "b1")),
        ("EUR", Movement("g", MovementKind.REDEMPTION, -1000, at(4), "booking", "b2")),
        ("EUR", Movement("g", MovementKind.CANCELLATION, -4000, at(2, 7), "staff")),  # July: not counted
    ]
    assert liability_lines(ledger, START, END) == [
        LiabilityLine("EUR", opening=5000, issued=0, redeemed=4000, reversed=3000, expired=0, cancelled=0,
                      closing=4000)
    ]  # fmt: skip
    assert liability_lines(ledger, END, datetime(2026, 8, 1, tzinfo=UTC)) == [
        LiabilityLine("EUR", 4000, 0, 0, 0, 0, 4000, 0)
    ]
    assert liability_lines(ledger, datetime(2026, 8, 1, tzinfo=UTC), datetime(2026, 9, 1, tzinfo=UTC)) == []
