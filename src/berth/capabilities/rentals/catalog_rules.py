"""octo/rentals' catalogue rules: rental durations and the default duration of an option, and
that a rental product needs availability."""

from __future__ import annotations

from decimal import Decimal

from berth.domain.catalog import AvailabilityType, DurationUnit, Option, Product
from berth.domain.catalog.model import MAX_RENTAL_MINUTES, rental_minutes
from berth.domain.catalog.rules import CatalogRule, Path, Problem, duplicate_ids


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
    return problems


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
