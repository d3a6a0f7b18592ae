"""Content in a guest's language, field by field: what the language's content leaves out is
taken from the product's default language (a German page without a meeting point still has
the English one)."""

from __future__ import annotations

from typing import TypeVar

from berth.domain.catalog.model import CatalogModel, Feature

C = TypeVar("C", bound=CatalogModel)


def _features(wanted: tuple[Feature, ...], default: tuple[Feature, ...]) -> tuple[Feature, ...]:
    """The language's features, and of each kind it has none of, the default's (per kind: a
    German inclusion does not hide the English redemption instruction)."""
    kinds = {feature.type for feature in wanted}
    return (*wanted, *(feature for feature in default if feature.type not in kinds))


def in_language(contents: dict[str, C], language: str, default: str) -> C | None:
    """The content in `language`, each field it leaves empty taken from `default`'s; the
    default's alone when the language has none; None when neither has content."""
    wanted, fallback = contents.get(language), contents.get(default)
    if wanted is None or fallback is None or wanted is fallback:
        return wanted or fallback
    filled: dict[str, object] = {}
    for name in type(wanted).model_fields:
        value, other = getattr(wanted, name), getattr(fallback, name)
        if name == "features":
            filled[name] = _features(value, other)
        elif value is None or value == () or value == "":
            filled[name] = other
    return wanted.model_copy(update=filled) if filled else wanted
