"""Category labels from OCTO core's list: stored product documents written with Berth's own
labels get the nearest core label, or lose the label when no core label is near.

The downgrade keeps only the labels the earlier list had, so the earlier code can load the
catalogue (labels only core has are dropped).

Revision ID: 0011
Revises: 0010
"""

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from berth.store.types import JSONDocument

revision = "0011"
down_revision = "0010"

# Berth's earlier labels and their nearest OCTO core label (None: none is near enough to say).
EARLIER: dict[str, str | None] = {
    "adventure": "outdoors",
    "animals-and-wildlife": "animals",
    "attractions": None,
    "bike-tours": "bike-tours",
    "boat-tours": "boat-tours",
    "bus-tours": None,
    "city-tours": None,
    "classes-and-workshops": "classes",
    "concerts-and-shows": "live-music",
    "culture-and-history": "history",
    "day-trips": "day-trips",
    "family-friendly": "family-friendly",
    "food-and-drink": "food",
    "guided-tours": "guided-tours",
    "museums": "museums",
    "outdoor-activities": "outdoors",
    "private-tours": "private-tours",
    "sightseeing": None,
    "skip-the-line": "fast-track",
    "sports": "sports",
    "theme-parks": "theme-parks",
    "transfers": None,
    "walking-tours": "walking-tours",
    "water-activities": "outdoors",
    "nightlife": "nightlife",
    "wellness": None,
    "shopping": None,
    "seasonal": None,
    "romantic": "romantic",
    "luxury": None,
    "accessible": None,
    "educational": None,
    "art": None,
    "nature": "outdoors",
}

_products = sa.table("products", sa.column("id", sa.String), sa.column("document", JSONDocument))


def _to_core(label: str) -> str | None:
    return EARLIER.get(label, label)


def _to_earlier(label: str) -> str | None:
    return label if label in EARLIER else None


Relabel = Callable[[str], str | None]


def _relabel(document: dict[str, Any], change: Relabel) -> bool:
    """Relabel the content of the product and of its options, in every language; True if any
    label changed."""
    changed = False
    for holder in (document, *document.get("options", ())):
        for content in (holder.get("content") or {}).values():
            labels = content.get("categoryLabels")
            if not labels:
                continue
            relabelled: list[str] = []
            for label in labels:
                new = change(label)
                if new is not None and new not in relabelled:
                    relabelled.append(new)
            if relabelled != labels:
                content["categoryLabels"] = relabelled
                changed = True
    return changed


def _rewrite(change: Relabel) -> None:
    bind = op.get_bind()
    for row in bind.execute(sa.select(_products.c.id, _products.c.document)).all():
        document = dict(row.document)
        if _relabel(document, change):
            bind.execute(_products.update().where(_products.c.id == row.id).values(document=document))


def upgrade() -> None:
    _rewrite(_to_core)


def downgrade() -> None:
    _rewrite(_to_earlier)
