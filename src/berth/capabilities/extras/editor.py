"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="extras",
        title="Extras",
        level="option",
        keys=("extras",),
        help="Add-ons sold with the option's bookings, with prices and stock (octo/extras).",
        example="extras:\n  - id: lunch\n    internalName: Lunch\n    prices: [{currency: GBP, retail: 1200}]\n",
    ),
)
