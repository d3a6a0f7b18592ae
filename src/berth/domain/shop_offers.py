"""Why a guest's promo code was refused, as the shop words it. The booking core refuses a code
with `OfferRefused`, whose `reason` is written for resellers' developers (domain.offer_rules:
"it needs at least 2 units it applies to; the booking has 1"); here each reason is read back
into its kind and the values a guest's words name (`OfferProblem`), so that the shop says it in
the guest's language. A reason not known here is `Why.OTHER` (said in general terms)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum

# The weekdays as offer_rules names them, Monday first.
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class Why(StrEnum):
    UNKNOWN = "unknown"  # no such code (or not for this channel)
    PAUSED = "paused"
    NOT_YET = "not yet"  # before it can be sold
    EXPIRED = "expired"
    CHANNEL = "channel"  # not offered on the shop
    PRODUCT = "product"  # not for the booking's product or option (or only for dated travel)
    TRAVEL_FROM = "travel from"  # for travel from `day`
    TRAVEL_UNTIL = "travel until"  # for travel until `day`
    WEEKDAYS = "weekdays"  # for travel on `weekdays` only
    DAYS_AHEAD = "days ahead"  # for bookings made `count` days before travel
    CURRENCY = "currency"  # no discount in `currency`
    NO_UNITS = "no units"  # none of the booking's units
    MIN_UNITS = "min units"  # at least `count` units it applies to
    MAX_UNITS = "max units"  # at most `count` units it applies to
    MIN_TOTAL = "min total"  # a total of at least `amount`
    USED_UP = "used up"
    USED_UP_BY_EMAIL = "used up by email"
    OTHER = "other"


@dataclass(frozen=True)
class OfferProblem:
    """A refused code's kind, with what its words name: a count, a day, the weekdays (0 is
    Monday), a currency, an amount in minor units of `precision` decimals."""

    why: Why
    count: int | None = None
    day: date | None = None
    weekdays: tuple[int, ...] = ()
    currency: str | None = None
    amount: int | None = None
    precision: int = 2


_FIXED = {
    "no offer has this code": Why.UNKNOWN,
    "it is paused": Why.PAUSED,
    "it is not offered on this sales channel": Why.CHANNEL,
    "it is only for dated travel": Why.PRODUCT,
    "it does not apply to any of the booking's units": Why.NO_UNITS,
    "it has been used as many times as it may be": Why.USED_UP,
    "this email address has used it as many times as it may": Why.USED_UP_BY_EMAIL,
}
_STARTS = {
    "it can be used from ": Why.NOT_YET,
    "it expired on ": Why.EXPIRED,
    "it does not apply to product ": Why.PRODUCT,
}
_DAY = {
    re.compile(r"it is for travel from (\d{4}-\d{2}-\d{2})"): Why.TRAVEL_FROM,
    re.compile(r"it is for travel until (\d{4}-\d{2}-\d{2})"): Why.TRAVEL_UNTIL,
}
_COUNT = {
    re.compile(r"it is for bookings made at least (\d+) days before travel"): Why.DAYS_AHEAD,
    re.compile(r"it needs at least (\d+) units it applies to; .*"): Why.MIN_UNITS,
    re.compile(r"it allows at most (\d+) units it applies to; .*"): Why.MAX_UNITS,
}
_WEEKDAYS = re.compile(r"only available on ((?:\w{3})(?:(?:, | and )\w{3})*)")
_CURRENCY = re.compile(r"it has no discount in ([A-Z]{3})")
_TOTAL = re.compile(r"it needs a total of at least ([A-Z]{3}) (\d+)(?:\.(\d+))?; .*")


def offer_problem(reason: str) -> OfferProblem:
    """The kind of `OfferRefused.reason` and its values."""
    if reason in _FIXED:
        return OfferProblem(_FIXED[reason])
    for start, why in _STARTS.items():
        if reason.startswith(start):
            return OfferProblem(why)
    for pattern, why in _DAY.items():
        if found := pattern.fullmatch(reason):
            return OfferProblem(why, day=date.fromisoformat(found.group(1)))
    for pattern, why in _COUNT.items():
        if found := pattern.fullmatch(reason):
            return OfferProblem(why, count=int(found.group(1)))
    if found := _WEEKDAYS.fullmatch(reason):
        names = re.split(r", | and ", found.group(1))
        if all(name in DAY_NAMES for name in names):
            return OfferProblem(Why.WEEKDAYS, weekdays=tuple(DAY_NAMES.index(name) for name in names))
    if found := _CURRENCY.fullmatch(reason):
        return OfferProblem(Why.CURRENCY, currency=found.group(1))
    if found := _TOTAL.fullmatch(reason):
        decimals = found.group(3) or ""
        amount = Decimal(f"{found.group(2)}.{decimals or '0'}").scaleb(len(decimals))
        return OfferProblem(
            Why.MIN_TOTAL, currency=found.group(1), amount=int(amount), precision=len(decimals)
        )
    return OfferProblem(Why.OTHER)
