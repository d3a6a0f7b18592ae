"""octo/resources in the shop: the guest may choose which boat or vehicle of each group takes
the party (optional: without a choice Berth allocates, as for any booking), among those with
room for it on the departure."""

from __future__ import annotations

from dataclasses import dataclass

from berth.capabilities.resources.service import ResourcesQuery
from berth.container import Services
from berth.domain.availability import AvailabilityStatus
from berth.http.shop.selection import Selection
from berth.services.shop import Shop


@dataclass(frozen=True)
class Boat:
    id: str
    title: str
    free: int


@dataclass(frozen=True)
class Boats:
    """One resource group the guest may choose in, and its resources with room for the party."""

    id: str
    title: str
    choices: list[Boat]


async def boats(svc: Services, shop: Shop, selection: Selection, slot_id: str) -> list[Boats]:
    query = ResourcesQuery(
        selection.product.id, selection.option.id, slot_id, units=tuple(selection.units.items()) or None
    )
    found = await svc.resources.slot_resources(shop.catalog, query)
    groups = []
    for group in found.groups:
        choices = [
            Boat(r.resource.id, r.resource.title, r.free)
            for r in group.resources
            if r.serving and r.status in (AvailabilityStatus.AVAILABLE, AvailabilityStatus.LIMITED)
        ]
        if len(choices) > 1:  # one alone is no choice
            groups.append(Boats(group.group.id, group.group.title, choices))
    return groups
