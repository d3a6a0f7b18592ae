"""octo/rentals' catalogue rules: rental durations and the default duration of an option, and
that a rental product needs availability."""

from __future__ import annotations

from decimal import Decimal

from berth.domain.catalog import (
    AvailabilityType,
    DurationUnit,
    Option,
    Product,
    amount_problem,
    price_amounts,
)
from berth.domain.catalog.model import MAX_RENTAL_MINUTES, rental_minutes
from berth.domain.catalog.rules import CatalogRule, Path, Problem, duplicate_ids
from berth.domain.pricing import scale_price


def _rental_problems(kind: AvailabilityType, option: Option, o_path: Path) -> list[tuple[Path, str]]:
    problems: list[tuple[Path, str]] = []
    default = option.default_rental_duration_id
    if default is not None and not option.rental_durations:
        problems.append(
            (
                (*o_path, "defaultRentalDurationId"),
                f"option {option.id!r} has no rentalDurations: declare them, or leave defaultRentalDurationId out",
            )
        )
    elif default is not None and option.rental_duration(default) is None:
        choices = ", ".join(d.id for d in option.rental_durations)
        problems.append(
            (
                (*o_path, "defaultRentalDurationId"),
                f"{default!r} is not a rental duration of option {option.id!r}: "
                f"name one of its rentalDurations ({choices})",
            )
        )
    durations_path: Path = (*o_path, "rentalDurations")
    problems.extend(duplicate_ids([d.id for d in option.rental_durations], durations_path, "rental duration"))
    for d_index, duration in enumerate(option.rental_durations):
        d_path: Path = (*durations_path, d_index)
        minutes = rental_minutes(duration)
        if minutes != minutes.to_integral_value() or minutes < 1:
            problems.append(((*d_path, "durationAmount"), "the duration must be a whole number of minutes"))
        elif minutes > MAX_RENTAL_MINUTES:
            problems.append(((*d_path, "durationAmount"), "a rental lasts at most 366 days"))
        if (
            kind is AvailabilityType.OPENING_HOURS
            and duration.duration_unit is DurationUnit.day
            and duration.duration_amount != int(duration.duration_amount)
        ):
            problems.append(
                (
                    (*d_path, "durationAmount"),
                    "rentals by opening hours last whole days (or hours within a day)",
                )
            )
        multiplier = Decimal(str(duration.pricing_multiplier))
        if multiplier != multiplier.quantize(Decimal("0.0001")):
            problems.append(((*d_path, "pricingMultiplier"), "at most 4 decimal places"))
        else:
            problems.extend(_scaled_amount_problems(option, duration.pricing_multiplier, d_path))
    return problems


def _scaled_amount_problems(option: Option, multiplier: int | float, d_path: Path) -> list[Problem]:
    """The option's prices times the duration's multiplier are amounts too: each at most the
    maximum. One problem per duration, naming the first price it takes past it."""
    prices = [*option.booking_prices, *(p for u in option.units for p in u.prices)]
    for price in prices:
        for _, amount in price_amounts(scale_price(price, multiplier)):
            if (too_large := amount_problem(amount)) is not None:
                return [((*d_path, "pricingMultiplier"), f"a price of {price.retail} times it: {too_large}")]
    return []


class RentalRules(CatalogRule):
    def product_problems(self, product: Product, path: Path) -> list[Problem]:
        if product.is_rental and not product.availability_required:
            return [
                (
                    (*path, "availabilityRequired"),
                    "a rental product needs availability: a rental starts at a time",
                )
            ]
        return []

    def option_problems(self, product: Product, option: Option, path: Path) -> list[Problem]:
        return _rental_problems(product.availability_type, option, path)
