"""The catalogue editor's part for this capability's declarations (berth.capabilities.base.EditorPart)."""

from __future__ import annotations

from berth.capabilities.base import EditorPart

EDITOR_PARTS = (
    EditorPart(
        id="content",
        title="Content per language",
        level="product",
        keys=("content",),
        help="Titles, descriptions, features, FAQs, media, locations and category labels per language (octo/content); the title and descriptions in the product's languages are also in the form above.",
        example="en-GB:\n  title: City walk\n  features:\n    - {type: INCLUSION, shortDescription: A guide}\n",
    ),
    EditorPart(
        id="option-content",
        title="Option content per language",
        level="option",
        keys=("content",),
        help="The option's title and descriptions per language (octo/content).",
        example="en-GB:\n  title: Morning walk\n",
    ),
)
