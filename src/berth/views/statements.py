"""A monthly statement as JSON (amounts in minor units, as OCTO's pricing) and as CSV rows
(amounts as decimal numbers in the currency's precision), through the one CSV writer; both
made and sent in batches of lines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Any

from berth.domain.statements import Statement, StatementLine, Total, amount_value
from berth.views.encoding import json_bytes
from berth.views.exports import Row, csv_file

# Lines made and sent at a time, in the CSV and the JSON.
BATCH = 500


def statement_file_name(statement: Statement) -> str:
    """The statement's file name without its extension, the same from the back office, the
    admin API and `berth statements`: `statement-Reseller-A-2026-06` (only letters, digits,
    '-', '_' and '.' kept)."""
    text = f"statement-{statement.connection_name}-{statement.month}"
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)


def csv_header(statement: Statement) -> tuple[str, ...]:
    """The CSV's columns; retail - net is the commission, or under a net rate the margin;
    Original - Discount = Retail (the retail before and after the booking's offer); Owed = Net -
    Paid by gift voucher. The columns added since the first statements come last (Kind, ...),
    so a reader of the older columns by position still reads them."""
    margin = statement.margin_label
    return (
        "Supplier reference", "Reseller reference", "Product", "Option", "Travel date", "Local time",
        "Time zone", "Units", "Unit count", "Includes", "Status", "Currency", "Original", "Discount",
        "Retail", "Net", margin, f"{margin} %", "Tax in retail", "Tax in net", "Net missing",
        "Kind", "Paid by gift voucher", "Owed",
    )  # fmt: skip


def _line_json(line: StatementLine) -> dict[str, Any]:
    return {
        "supplierReference": line.supplier_reference,
        "resellerReference": line.reseller_reference,
        "productId": line.product_id,
        "product": line.product,
        "optionId": line.option_id,
        "option": line.option,
        "travelDate": line.travel_date.isoformat() if line.travel_date else None,
        "localTime": line.travel_time,
        "timeZone": line.time_zone,
        "units": [{"unit": name, "quantity": count} for name, count in line.units],
        "unitCount": line.unit_count,
        "status": line.status.value,
        "currency": line.currency,
        "currencyPrecision": line.precision,
        "original": line.original,
        "discount": line.discount,
        "retail": line.retail,
        "net": line.net,
        "commission": line.commission,
        "rate": line.rate_text,
        "taxRetail": line.tax_retail,
        "taxNet": line.tax_net,
        "includes": list(line.includes),
        "netMissing": line.net_missing,
        "kind": line.kind.value,
        "giftPaid": line.gift_paid,
        "owed": line.owed,
    }


def _total_json(total: Total) -> dict[str, Any]:
    return {
        "currency": total.currency,
        "currencyPrecision": total.precision,
        "original": total.original,
        "discount": total.discount,
        "retail": total.retail,
        "net": total.net,
        "commission": total.commission,
        "taxRetail": total.tax_retail,
        "taxNet": total.tax_net,
        "giftPaid": total.gift_paid,
        "owed": total.owed,
        "count": total.count,
    }


async def statement_json(statement: Statement) -> AsyncIterator[bytes]:
    """The statement as one JSON object (`connection`, `month`, `basis`, `rateKind`,
    `paymentTerms`, `createdAt`, `lines`, `totals`), chunk by chunk: a month of thousands of
    lines is made and sent `BATCH` lines at a time, the event loop free in between."""
    head = {
        "connection": {
            "id": statement.connection_id,
            "name": statement.connection_name,
            "address": statement.reseller_address or None,
        },
        "month": str(statement.month),
        "basis": statement.basis.value,
        "rateKind": statement.rate_kind,
        "paymentTerms": statement.payment_terms.value,
        "createdAt": statement.created_at.isoformat() if statement.created_at else None,
    }
    yield json_bytes(head)[:-1] + b',"lines":['
    for start in range(0, len(statement.lines), BATCH):
        lines = b",".join(json_bytes(_line_json(line)) for line in statement.lines[start : start + BATCH])
        await asyncio.sleep(0)
        yield (b"," if start else b"") + lines
    yield b'],"totals":' + json_bytes([_total_json(total) for total in statement.totals]) + b"}"


def statement_rows(lines: Iterable[StatementLine]) -> list[Row]:
    return [
        [
            line.supplier_reference,
            line.reseller_reference or "",
            line.product,
            line.option,
            line.travel_date.isoformat() if line.travel_date else "",
            line.travel_time or "",
            line.time_zone or "",
            line.units_text,
            line.unit_count,
            "; ".join(line.includes),
            line.status.value,
            line.currency or "",
            amount_value(line.original, line.precision),
            amount_value(line.discount, line.precision),
            amount_value(line.retail, line.precision),
            amount_value(line.net, line.precision),
            amount_value(line.commission, line.precision),
            line.rate_text,
            amount_value(line.tax_retail, line.precision),
            amount_value(line.tax_net, line.precision),
            "yes" if line.net_missing else "",
            line.kind.value,
            amount_value(line.gift_paid, line.precision),
            amount_value(line.owed, line.precision),
        ]
        for line in lines
    ]


async def _batches(statement: Statement) -> AsyncIterator[Iterable[Row]]:
    for start in range(0, len(statement.lines), BATCH):
        yield statement_rows(statement.lines[start : start + BATCH])


def statement_csv(statement: Statement) -> AsyncIterator[bytes]:
    """The statement's lines as a CSV file (the one CSV writer's chunks, `BATCH` lines each)."""
    return csv_file(csv_header(statement), _batches(statement))
