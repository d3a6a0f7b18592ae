"""The extras of the bookings on a departure, for the manifest: how many of each are sold
(against its stock), and who has what."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from berth.capabilities.extras.extension import of_booking
from berth.domain.catalog import Option
from berth.domain.catalog.model import Extra
from berth.read_models.bookings import BookingDetails


@dataclass(frozen=True)
class ExtraTally:
    extra: Extra
    booked: int

    @property
    def name(self) -> str:
        return self.extra.title or self.extra.internal_name


@dataclass(frozen=True)
class DepartureExtras:
    tallies: list[ExtraTally]
    # Each booking that has extras, with (name, pieces) per extra.
    bookings: list[tuple[BookingDetails, list[tuple[str, int]]]]


def extras_on(option: Option, travelling: Sequence[BookingDetails]) -> DepartureExtras | None:
    """The option's extras on a departure (None: the option has none)."""
    if not option.extras:
        return None
    total: Counter[str] = Counter()
    bookings = []
    for details in travelling:
        counts = of_booking(details.booking).counts()
        total.update(counts)
        pieces = [
            (e.title or e.internal_name, counts[e.id]) for e in details.option.extras if counts.get(e.id)
        ]
        if pieces:
            bookings.append((details, pieces))
    return DepartureExtras([ExtraTally(e, total.get(e.id, 0)) for e in option.extras], bookings)
