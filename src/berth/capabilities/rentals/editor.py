"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="rentals",
        title="Rental durations",
        level="option",
        keys=("rentalDurations", "defaultRentalDurationId"),
        help="How long an item may be rented and the price factor of each duration (octo/rentals).",
        example="rentalDurations:\n  - {id: 2h, title: 2 hours, durationAmount: 2, durationUnit: hour}\n",
    ),
)
