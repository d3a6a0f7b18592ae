"""Availability of one slot, and one calendar day, as the availability service answers them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from berth.domain.availability import SlotState
from berth.domain.catalog import Option, Product, RentalDuration
from berth.domain.offer_rules import OfferChoice
from berth.domain.offers import Offer
from berth.domain.slots import Slot


@dataclass(frozen=True)
class SlotAvailability:
    """`rental`: the rental duration the slot was checked for (its `end` is the due time)."""

    product: Product
    option: Option
    slot: Slot
    state: SlotState
    units: tuple[tuple[str, int], ...]
    currency: str | None
    rental: RentalDuration | None = None
    # octo/packages: for a package option's slot, its includes' slots on the same local date.
    includes: tuple[SlotAvailability, ...] = ()
    # octo/offers: the offers the asking channel is shown here, and the one its prices are at.
    offer_choices: tuple[OfferChoice, ...] = ()
    offer: Offer | None = None


@dataclass(frozen=True)
class CalendarDay:
    product: Product
    option: Option
    local_date: date
    slots: tuple[Slot, ...]
    state: SlotState
    units: tuple[tuple[str, int], ...]
    currency: str | None
    rental: RentalDuration | None = None
    # octo/offers: the offers the asking channel is shown on the day, and the one its prices are at.
    offer_choices: tuple[OfferChoice, ...] = ()
    offer: Offer | None = None
