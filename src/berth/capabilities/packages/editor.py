"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="packages",
        title="Package includes",
        level="option",
        keys=("packageIncludes",),
        help="The products and options a package books together (octo/packages).",
        example="packageIncludes:\n  - id: all\n    includes:\n      - {id: walk, productId: walk, optionId: DEFAULT}\n",
    ),
    EditorPart(
        id="package-product",
        title="Package bookings",
        level="product",
        keys=("packageBookingAvailabilityRequired",),
        help="Whether a package booking names its availability (octo/packages).",
        example="packageBookingAvailabilityRequired: false\n",
    ),
)
