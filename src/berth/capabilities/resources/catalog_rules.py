"""octo/resources' catalogue rules: resource groups, resources, seat maps and service rules."""

from __future__ import annotations

from berth.domain.catalog import AvailabilityType, Option, Product, Resource
from berth.domain.catalog.rules import CatalogRule, Path, Problem, duplicate_ids


def _resource_problems(product: Product, option: Option, o_path: Path) -> list[tuple[Path, str]]:
    """Unique group and resource ids (resources across all groups of the option), a capacity
    for every resource, sound seat maps, and service rules that name real start times."""
    problems = duplicate_ids(
        [g.id for g in option.resource_groups], (*o_path, "resourceGroups"), "resource group"
    )
    seen_resources: set[str] = set()
    start_times = set(option.local_start_times)
    for g_index, group in enumerate(option.resource_groups):
        g_path: Path = (*o_path, "resourceGroups", g_index)
        for r_index, resource in enumerate(group.resources):
            r_path: Path = (*g_path, "resources", r_index)
            if resource.id in seen_resources:
                problems.append(
                    ((*r_path, "id"), f"duplicate resource id {resource.id!r} (ids are unique in an option)")
                )
            seen_resources.add(resource.id)
            if resource.seat_map is None and resource.capacity is None:
                problems.append((r_path, "a resource needs a capacity or a seat map"))
            if resource.seat_map is not None:
                problems.extend(_seat_map_problems(resource, (*r_path, "seatMap")))
            for rule_index, rule in enumerate(resource.serves):
                rule_path: Path = (*r_path, "serves", rule_index)
                if rule.valid_from and rule.valid_until and rule.valid_from > rule.valid_until:
                    problems.append((rule_path, "'from' is after 'until'"))
                if not rule.weekdays:
                    problems.append(((*rule_path, "weekdays"), "at least one weekday is required"))
                if rule.start_times and product.availability_type is AvailabilityType.OPENING_HOURS:
                    problems.append(
                        ((*rule_path, "startTimes"), "an OPENING_HOURS product has no start times to serve")
                    )
                for t_index, clock in enumerate(rule.start_times):
                    if product.availability_type is AvailabilityType.START_TIME and clock not in start_times:
                        problems.append(
                            (
                                (*rule_path, "startTimes", t_index),
                                f"option {option.id!r} has no departure at {clock}",
                            )
                        )
    return problems


def _seat_map_problems(resource: Resource, path: Path) -> list[tuple[Path, str]]:
    assert resource.seat_map is not None
    seats = resource.seat_map.seats
    problems = duplicate_ids([seat.id for seat in seats], (*path, "seats"), "seat")
    seen_ids = {seat.id for seat in seats}
    seen_places: set[tuple[str, str]] = set()
    for s_index, seat in enumerate(seats):
        if (seat.row, seat.column) in seen_places:
            problems.append(
                ((*path, "seats", s_index), f"two seats in row {seat.row!r}, column {seat.column!r}")
            )
        seen_places.add((seat.row, seat.column))
    for b_index, blocked in enumerate(resource.seat_map.blocked):
        if blocked not in seen_ids:
            problems.append(((*path, "blocked", b_index), f"{blocked!r} is not a seat of this map"))
    bookable = len(seen_ids - set(resource.seat_map.blocked))
    if bookable == 0:
        problems.append(((*path, "blocked"), "every seat is blocked"))
    elif resource.capacity is not None and resource.capacity != bookable:
        problems.append(
            (
                (*path[:-1], "capacity"),
                f"capacity {resource.capacity} differs from the {bookable} seats that are not blocked "
                "(leave capacity out: the seat map gives it)",
            )
        )
    return problems


class ResourceRules(CatalogRule):
    def option_problems(self, product: Product, option: Option, path: Path) -> list[Problem]:
        problems = _resource_problems(product, option, path)
        if option.resource_groups and option.rental_durations:
            # An option gets one capacity policy: rentals count overlapping rentals, resources
            # allocate resources; both at once would count places two ways.
            problems.append(
                (
                    (*path, "resourceGroups"),
                    f"option {option.id!r} has rentalDurations: a rental option cannot have resource groups",
                )
            )
        return problems
