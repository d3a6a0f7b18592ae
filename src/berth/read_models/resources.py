"""octo/resources: one availability's resource groups, resources and seats, as staff and
the `/availability/resources` route see them."""

from __future__ import annotations

from dataclasses import dataclass

from berth.domain.availability import AvailabilityStatus, SlotState
from berth.domain.catalog import Option, Product, Resource, ResourceGroup, Seat
from berth.domain.resources import Allocation
from berth.domain.slots import Slot


@dataclass(frozen=True)
class ResourceState:
    group: ResourceGroup
    resource: Resource
    serving: bool  # the resource works this slot
    free: int
    status: AvailabilityStatus  # for the request's party, when it named units
    available_seats: tuple[Seat, ...]
    selected_seats: tuple[Seat, ...]
    allocation: Allocation | None  # the previewed allocation on this resource


@dataclass(frozen=True)
class GroupState:
    group: ResourceGroup
    capacity: int
    free: int
    status: AvailabilityStatus
    resources: tuple[ResourceState, ...]


@dataclass(frozen=True)
class SlotResources:
    product: Product
    option: Option
    slot: Slot
    state: SlotState
    groups: tuple[GroupState, ...]
    preview: tuple[Allocation, ...]
