"""octo/pickups' catalogue rules: pickup points of an option."""

from __future__ import annotations

import uuid

from berth.domain.catalog import Option, Product
from berth.domain.catalog.rules import CatalogRule, Path, Problem, duplicate_ids


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return len(value) == 36


class PickupRules(CatalogRule):
    def option_problems(self, product: Product, option: Option, path: Path) -> list[Problem]:
        problems: list[Problem] = []
        points_path: Path = (*path, "pickupPoints")
        if option.pickup_required and not option.pickup_points:
            problems.append(
                ((*path, "pickupRequired"), f"option {option.id!r} requires pickup but has no pickupPoints")
            )
        if option.pickup_points and not product.availability_required:
            problems.append(
                (points_path, "pickups need availability: a pickup time is counted back from the departure")
            )
        problems.extend(duplicate_ids([p.id for p in option.pickup_points], points_path, "pickup point"))
        for index, point in enumerate(option.pickup_points):
            p_path: Path = (*points_path, index)
            if not _is_uuid(point.id):
                problems.append(
                    (
                        (*p_path, "id"),
                        f"pickup point ids are UUIDs (OCTO PickupPoint.id); {point.id!r} is not",
                    )
                )
            if point.window_minutes > point.minutes_before:
                problems.append(
                    (
                        (*p_path, "windowMinutes"),
                        f"the pickup window closes at the departure at the latest: at most "
                        f"{point.minutes_before} (minutesBefore)",
                    )
                )
            if (point.latitude is None) != (point.longitude is None):
                problems.append((p_path, "give latitude and longitude together, or neither"))
        return problems
