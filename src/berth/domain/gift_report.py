"""The monthly gifts report: per currency, what the supplier owed in unspent vouchers when the
month opened (the liability), what the month's movements of the gift ledger did to it (issued,
redeemed, reversed, expired, cancelled) and what it owed when the month closed.

The report reads the ledger (domain.gifts), so opening + issued - redeemed + reversed - expired -
cancelled = closing, always. A voucher past its validity still counts until the expiry sweep
writes its EXPIRY movement; the dashboard's outstanding balance leaves it out at once."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from berth.domain.gifts import Movement, MovementKind


@dataclass(frozen=True)
class LiabilityLine:
    """One currency's month, in its minor units; every movement column counted positive."""

    currency: str
    opening: int
    issued: int
    redeemed: int
    reversed: int
    expired: int
    cancelled: int
    closing: int


def liability_lines(
    movements: Iterable[tuple[str, Movement]], starts_at: datetime, ends_at: datetime
) -> list[LiabilityLine]:
    """The month [starts_at, ends_at) of `movements` (each with its gift's currency), by currency
    in alphabetical order; a currency with neither a balance nor a movement is left out. Movements
    from `ends_at` on are not counted."""
    opening: dict[str, int] = {}
    moved: dict[str, dict[MovementKind, int]] = {}
    for currency, movement in movements:
        if movement.at >= ends_at:
            continue
        opening.setdefault(currency, 0)
        kinds = moved.setdefault(currency, dict.fromkeys(MovementKind, 0))
        if movement.at < starts_at:
            opening[currency] += movement.amount
        else:
            kinds[movement.kind] += movement.amount
    lines = []
    for currency in sorted(opening):
        kinds = moved[currency]
        if opening[currency] == 0 and not any(kinds.values()):
            continue
        lines.append(
            LiabilityLine(
                currency=currency,
                opening=opening[currency],
                issued=kinds[MovementKind.ISSUE],
                redeemed=-kinds[MovementKind.REDEMPTION],
                reversed=kinds[MovementKind.REVERSAL],
                expired=-kinds[MovementKind.EXPIRY],
                cancelled=-kinds[MovementKind.CANCELLATION],
                closing=opening[currency] + sum(kinds.values()),
            )
        )
    return lines
