"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="pickups",
        title="Pickup points",
        level="option",
        keys=("pickupPoints", "pickupRequired"),
        help="Hotels and meeting points where guests are collected, and whether every booking must name one (octo/pickups).",
        example="pickupRequired: false\npickupPoints:\n  - {id: hotel, name: Harbour Hotel, minutesBefore: 30}\n",
    ),
)
