"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="resources",
        title="Resources and seat maps",
        level="option",
        keys=("resourceGroups",),
        help="Boats, vehicles, rooms or guides the option's bookings take, with capacities or seat maps (octo/resources).",
        example="resourceGroups:\n  - id: boats\n    title: Boats\n    resources:\n      - {id: boat-1, title: Boat 1, capacity: 12}\n",
    ),
)
