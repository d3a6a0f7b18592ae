"""The monthly gifts report (domain.gift_report) as CSV, through the one CSV writer
(views.exports): one line per currency, amounts in the currency's units."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

from berth.domain.gift_report import LiabilityLine
from berth.domain.statements import Month, amount_value
from berth.translations import currency_precision
from berth.views.exports import Row, csv_file

LIABILITY_HEADER = (
    "Month", "Currency", "Opening liability", "Issued", "Redeemed", "Reversed", "Expired", "Cancelled",
    "Closing liability",
)  # fmt: skip


def liability_row(month: Month, line: LiabilityLine) -> Row:
    precision = currency_precision(line.currency)
    amounts = (
        line.opening, line.issued, line.redeemed, line.reversed, line.expired, line.cancelled, line.closing,
    )  # fmt: skip
    return [str(month), line.currency, *(amount_value(a, precision) for a in amounts)]


async def _once(rows: list[Row]) -> AsyncIterator[Iterable[Row]]:
    yield rows


def liability_csv(month: Month, lines: list[LiabilityLine]) -> AsyncIterator[bytes]:
    return csv_file(LIABILITY_HEADER, _once([liability_row(month, line) for line in lines]))
