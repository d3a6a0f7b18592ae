"""The answer of GET/POST /availability/resources: one object per resource group of the
availability (OCTO.md §6.5), with the resources that serve it."""

from __future__ import annotations

from berth.capabilities.base import JSON
from berth.capabilities.resources.fields import group_json, resource_json, seat_json
from berth.domain.availability import SELLABLE
from berth.domain.resources import places_of
from berth.read_models.resources import GroupState, ResourceState, SlotResources


def _resource_view(state: ResourceState) -> JSON:
    return {
        "resourceId": state.resource.id,
        "resource": resource_json(state.resource, seat_map=True),
        "status": str(state.status),
        "available": state.status in SELLABLE,
        "capacity": places_of(state.resource),
        "vacancies": state.free,
        "availableSeats": [seat_json(s) for s in state.available_seats],
        "selectedSeats": [seat_json(s) for s in state.selected_seats],
        "paxCount": state.allocation.pax_count if state.allocation else 0,
    }


def _group_view(state: GroupState) -> JSON:
    working = [r for r in state.resources if r.serving]
    # The group's seat lists are its resources' together; seat ids repeat across resources
    # (two boats each have a 1A), so each seat says whose it is.
    return {
        "resourceGroupId": state.group.id,
        "resourceGroup": group_json(state.group),
        "status": str(state.status),
        "available": state.status in SELLABLE,
        "capacity": state.capacity,
        "vacancies": state.free,
        "resources": [_resource_view(r) for r in working],
        "availableSeats": [
            {**seat_json(s), "resourceId": r.resource.id} for r in working for s in r.available_seats
        ],
        "selectedSeats": [
            {**seat_json(s), "resourceId": r.resource.id} for r in working for s in r.selected_seats
        ],
    }


def slot_resources_view(item: SlotResources) -> list[JSON]:
    return [_group_view(group) for group in item.groups]
