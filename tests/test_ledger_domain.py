"""The ledger's pure rules: amounts staff type (in the currency's units, to minor units, with a
clear refusal), the sales report's totals per currency, a movement's signed gross."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.errors import BadRequest
from berth.domain.ledger import ChannelSales, Kind, Movement, currency_totals, typed_amount


@pytest.mark.parametrize(
    ("text", "precision", "minor"),
    [("25", 2, 2500), ("25.5", 2, 2550), (" 1,250.00 ", 2, 125000), ("1 000", 0, 1000), ("0.125", 3, 125)],
)
def test_typed_amounts(text: str, precision: int, minor: int) -> None:
    assert typed_amount(text, precision) == minor


@pytest.mark.parametrize(
    ("text", "precision", "said"),
    [
        ("abc", 2, "The amount 'abc' is not an amount like 25.00"),
        ("", 2, "The amount '' is not an amount like 25.00"),
        ("NaN", 2, "The amount 'NaN' is not an amount like 25.00"),
        ("Infinity", 2, "The amount 'Infinity' is not an amount like 25.00"),
        ("12.345", 2, "The amount '12.345' has more decimals than its currency (2 decimals)"),
        ("5.5", 0, "The amount '5.5' has more decimals than its currency (no decimals)"),
        ("0", 2, "The amount must be more than 0"),
        ("-5", 2, "The amount must be more than 0"),
        ("1e20", 2, "The amount '1e20' is too large"),
    ],
)
def test_what_is_not_an_amount_is_refused_saying_why(text: str, precision: int, said: str) -> None:
    with pytest.raises(BadRequest) as refused:
        typed_amount(text, precision)
    assert refused.value.message == said


@given(st.integers(1, 10**14), st.integers(0, 3))
def test_an_amount_written_out_reads_back(minor: int, precision: int) -> None:
    assert typed_amount(f"{Decimal(minor).scaleb(-precision):f}", precision) == minor


@given(
    st.lists(
        st.builds(
            ChannelSales,
            connection_id=st.sampled_from(["a", "b", "shop"]),
            currency=st.sampled_from(["EUR", "JPY"]),
            payments=st.integers(0, 50),
            gross=st.integers(0, 10**9),
            refunds=st.integers(0, 50),
            refunded=st.integers(0, 10**9),
        )
    )
)
def test_totals_are_the_exact_sums_of_the_lines(lines: list[ChannelSales]) -> None:
    totals = {t.currency: t for t in currency_totals(lines)}
    assert set(totals) == {line.currency for line in lines}
    for currency, total in totals.items():
        mine = [line for line in lines if line.currency == currency]
        assert total.gross == sum(line.gross for line in mine)
        assert total.refunded == sum(line.refunded for line in mine)
        assert total.net == sum(line.net for line in mine)
        assert (total.payments, total.refunds) == (
            sum(x.payments for x in mine),
            sum(x.refunds for x in mine),
        )


def test_a_refund_is_money_going_out() -> None:
    common = {
        "id": "1", "payment_id": "1", "booking_id": "b", "supplier_reference": "R", "connection_id": "c",
        "provider": "stripe", "method": "card", "provider_id": None, "payment_provider_id": None,
        "amount": 1250, "currency": "EUR", "status": "succeeded", "at": datetime(2026, 6, 1, tzinfo=UTC),
        "reason": None, "failure_reason": None, "reference": None, "actor": "guest",
    }  # fmt: skip
    assert Movement(kind=Kind.PAYMENT, **common).gross == 1250  # type: ignore[arg-type]
    assert Movement(kind=Kind.REFUND, **common).gross == -1250  # type: ignore[arg-type]
