"""The payments ledger as CSV, through the one CSV writer (views.exports): its movements, with
the columns a supplier matches to Stripe's balance and payout reports (the provider's id, the
type, the signed gross in the currency's units, the time in UTC), and a month's sales report
per channel: the money that moved, then what each channel sold as its statement counts it."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping

from berth.domain.ledger import ChannelLine, ChannelSales, Movement
from berth.domain.statements import Month, Total, amount_value
from berth.translations import currency_precision
from berth.views.exports import Row, csv_file

MOVEMENTS_HEADER = (
    "Type", "Provider id", "Payment intent", "Gross", "Currency", "Time (UTC)", "Booking reference",
    "Channel", "Method", "Status", "Provider", "Berth id", "Desk reference", "Reason", "Failure reason",
    "By",
)  # fmt: skip
# The money that moved, then what was sold (the statements' totals; Original - Discount = Retail,
# Commission = Retail - Net).
SALES_HEADER = (
    "Month", "Channel", "Currency", "Payments", "Gross", "Refunds", "Refunded", "Net of refunds",
    "Lines sold", "Original", "Discount", "Retail", "Net", "Commission", "Paid by gift voucher", "Owed",
)  # fmt: skip


def utc_text(movement: Movement) -> str:
    """`2026-06-01 08:00:00`: Stripe's reports write their UTC times so."""
    return f"{movement.at:%Y-%m-%d %H:%M:%S}"


def movement_row(movement: Movement, channels: Mapping[str, str]) -> Row:
    precision = currency_precision(movement.currency)
    return [
        movement.kind.value,
        movement.provider_id or "",
        movement.payment_provider_id or "",
        amount_value(movement.gross, precision),
        movement.currency,
        utc_text(movement),
        movement.supplier_reference,
        channels.get(movement.connection_id, movement.connection_id),
        movement.method,
        movement.status,
        movement.provider,
        movement.id,
        movement.reference or "",
        movement.reason or "",
        movement.failure_reason or "",
        movement.actor,
    ]


async def _movement_rows(
    batches: AsyncIterable[list[Movement]], channels: Mapping[str, str]
) -> AsyncIterator[Iterable[Row]]:
    async for batch in batches:
        yield [movement_row(movement, channels) for movement in batch]


def movements_csv(
    batches: AsyncIterable[list[Movement]], channels: Mapping[str, str]
) -> AsyncIterator[bytes]:
    """The movements as a CSV file, a chunk per batch read; `channels` names connections."""
    return csv_file(MOVEMENTS_HEADER, _movement_rows(batches, channels))


def _moved_cells(moved: ChannelSales | None, precision: int) -> Row:
    if moved is None:
        return [0, amount_value(0, precision), 0, amount_value(0, precision), amount_value(0, precision)]
    return [
        moved.payments,
        amount_value(moved.gross, precision),
        moved.refunds,
        amount_value(moved.refunded, precision),
        amount_value(moved.net, precision),
    ]


def _sold_cells(sold: Total | None, precision: int) -> Row:
    if sold is None:
        return [0, *(amount_value(0, precision) for _ in range(7))]
    amounts = (
        sold.original,
        sold.discount,
        sold.retail,
        sold.net,
        sold.commission,
        sold.gift_paid,
        sold.owed,
    )
    return [sold.count, *(amount_value(amount, sold.precision) for amount in amounts)]


def sales_rows(month: Month, lines: list[ChannelLine], channels: Mapping[str, str]) -> list[Row]:
    """A row per line, at zero where the channel took no money, or sold nothing, in the currency."""
    rows: list[Row] = []
    for line in lines:
        precision = currency_precision(line.currency)
        rows.append(
            [
                str(month),
                channels.get(line.connection_id, line.connection_id),
                line.currency,
                *_moved_cells(line.moved, precision),
                *_sold_cells(line.sold, precision),
            ]
        )
    return rows


async def _once(rows: list[Row]) -> AsyncIterator[Iterable[Row]]:
    yield rows


def sales_csv(month: Month, lines: list[ChannelLine], channels: Mapping[str, str]) -> AsyncIterator[bytes]:
    """A month's sales report as a CSV file: one line per channel and currency."""
    return csv_file(SALES_HEADER, _once(sales_rows(month, lines, channels)))
