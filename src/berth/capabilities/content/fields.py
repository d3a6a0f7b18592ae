"""octo/content: titles, descriptions, features, media and locations, per language.

Each field has the type OCTO core gives it: a string that core does not let be null is "" when
the catalogue has none (a unit's and an availability's `shortDescription`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from berth.capabilities.base import JSON, Capability, Nested, View, pick_language
from berth.capabilities.ids import CONTENT
from berth.domain.catalog import Content, Option, Product, Supplier, SupplierContent, Unit, UnitContent

if TYPE_CHECKING:
    from berth.read_models.availability import SlotAvailability


def _dump(items: tuple[Any, ...]) -> list[Any]:
    return [item.model_dump(mode="json", by_alias=True) for item in items]


def _content(contents: dict[str, Content], view: View, fallback: str) -> Content:
    language = pick_language(contents, view, fallback)
    return contents[language] if language else Content()


def _content_fields(
    content: Content, default_title: str, duration_from: int, duration_to: int | None
) -> JSON:
    return {
        "title": content.title or default_title,
        "shortDescription": content.short_description,
        "description": content.description,
        "features": _dump(content.features),
        "faqs": _dump(content.faqs),
        "media": _dump(content.media),
        "locations": _dump(content.locations),
        "categoryLabels": [str(label) for label in content.category_labels],
        "durationMinutesFrom": duration_from,
        "durationMinutesTo": duration_to,
        "commentary": _dump(content.commentary),
    }


class ContentCapability(Capability):
    id = CONTENT
    docs = "https://docs.octo.travel/octo-api-core/content"

    def supplier_fields(self, supplier: Supplier, out: JSON, view: View) -> None:
        language = pick_language(supplier.content, view, "")
        content = supplier.content[language] if language else SupplierContent()
        out["shortDescription"] = content.short_description
        out["media"] = _dump(content.media)

    def product_fields(self, product: Product, out: JSON, view: View) -> None:
        durations = [o.duration_minutes for o in product.options]
        shortest, longest = min(durations), max(durations)
        content = _content(product.content, view, product.locale)
        out.update(
            _content_fields(
                content, product.internal_name, shortest, longest if longest != shortest else None
            )
        )

    def option_fields(self, product: Product, option: Option, out: JSON, view: View) -> None:
        content = _content(option.content, view, product.locale)
        out.update(_content_fields(content, option.internal_name, option.duration_minutes, None))

    def unit_fields(self, product: Product, option: Option, unit: Unit, out: JSON, view: View) -> None:
        language = pick_language(unit.content, view, product.locale)
        content = unit.content[language] if language else UnitContent()
        out["title"] = content.title or unit.internal_name
        out["shortDescription"] = content.short_description or ""
        out["features"] = _dump(content.features)
        restrictions = out["restrictions"]
        r = unit.restrictions
        for key, value in (
            ("minHeight", r.min_height),
            ("maxHeight", r.max_height),
            ("heightUnit", r.height_unit),
            ("minWeight", r.min_weight),
            ("maxWeight", r.max_weight),
            ("weightUnit", r.weight_unit),
        ):
            if value is not None:
                restrictions[key] = value

    def availability_fields(
        self, item: SlotAvailability, out: JSON, view: View, nested: Nested[SlotAvailability]
    ) -> None:
        # The catalogue has no content per departure: no title (core allows null), and an
        # empty shortDescription (core: a string).
        out["title"] = None
        out["shortDescription"] = ""
