"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="questions",
        title="Questions for every option",
        level="product",
        keys=("questions",),
        help="Questions guests answer when booking any option of the product (octo/questions).",
        example="questions:\n  - {id: diet, title: Any dietary needs?}\n",
    ),
    EditorPart(
        id="option-questions",
        title="Questions",
        level="option",
        keys=("questions",),
        help="Questions guests answer when booking this option (octo/questions).",
        example="questions:\n  - {id: diet, title: Any dietary needs?}\n",
    ),
)
