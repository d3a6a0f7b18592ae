"""The catalogue file reference (docs/catalog.md), written from the catalogue model itself
(`berth.domain.catalog.model`) so the document cannot leave a field out or state a rule the
model does not hold: `python scripts/catalog_reference.py` rewrites it, and a test fails when
the file and the model disagree."""

from __future__ import annotations

import datetime
import decimal
import enum
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from berth.domain.catalog import model

HEADER = """# Catalogue file reference

The catalogue is one YAML file: the supplier and its products, each with options, units,
schedules and prices, and what the capabilities add (content, resources, rentals, packages,
pickups, questions, extras). `berth catalog new FILE` writes a small commented one to start
from; `berth catalog import FILE --dry-run` checks a file and lists every problem with its line;
the demo's catalogue (`src/berth/demo/catalog.yaml`) uses every feature. The rules that tie
fields together (a unit's `accompaniedBy` names units of its option, one default option, ...)
are checked on import and explained in [decisions.md](decisions.md).

Keys are camelCase; a key that is not listed here is refused. *Required* fields must be given;
the others take the default shown. Amounts are integers in the currency's minor unit (`2500`
is 25.00 EUR), each at most 1,000,000,000,000 ([decisions.md](decisions.md)). Dates are
`YYYY-MM-DD`; times of day `HH:MM` (quote them in YAML: `"10:00"`), local to the product's
`timeZone`. YAML anchors and aliases (`&name`, `*name`, `<<:`) are refused, here and in every
YAML Berth reads (contracts, the editor's fields): write each value out in full.

A product's `deliveryFormats` say how its tickets reach guests and resellers:

| Format | What Berth does with it |
| --- | --- |
| `PDF_URL` | Renders a PDF ticket per unit item (and the voucher): OCTO's `deliveryOptions` carry its URL, and the guest's confirmation email attaches it and links each ticket. Without it the email has no tickets. |
| `PKPASS_URL` | An Apple Wallet pass per ticket, linked in OCTO; only with a pass certificate set up (`BERTH_PKPASS_*`, docs/operations.md), else the catalogue is refused. |
| `QRCODE` | The ticket's code as a QR code: drawn on the PDF ticket and the pass, and the code itself in OCTO. |
| `CODE128` | The code as a Code 128 barcode (for scanners that read only 1D codes). |
| `AZTECCODE` | The code as an Aztec code. |

A ticket shows the code formats the product names (a QR code when it names none); the gate
scanner reads each of them.

A price's included tax is given as amounts, or as a rate worked out from the price (see
[Tax](#tax)): `includedTaxes: [{name: VAT, rate: 20}]` on a retail price of 2700 is a tax of 450.

This page is generated from `src/berth/domain/catalog/model.py` by
`python scripts/catalog_reference.py`; `tests/test_catalog_reference.py` fails when it is stale.
"""

# Named value types of the model: their rules once, here, rather than a pattern in every row.
NAMED_TYPES = {
    "identifier": (model.Identifier, "1 to 100 letters, digits, `_`, `.`, `:` or `-`"),
    "time of day": (model.ClockTime, "`HH:MM`, 24-hour clock, `00:00` to `23:59`"),
    "currency": (model.CurrencyCode, "ISO 4217 code in capitals: `EUR`"),
    "language tag": (model.LanguageTag, "BCP 47: `en`, `en-GB`, `de-DE`"),
    "seat id": (model.SeatId, "1 to 40 letters, digits, `_`, `.`, `:` or `-` (numbers are read as text)"),
    "seat label": (model.SeatLabel, "1 to 20 characters (numbers are read as text)"),
}


def _constraints(metadata: list[Any]) -> list[str]:
    rules = []
    for rule in metadata:
        for name, word in (
            ("ge", "at least"), ("gt", "more than"), ("le", "at most"), ("lt", "less than"),
            ("min_length", "at least {} long"), ("max_length", "at most {} long"),
        ):  # fmt: skip
            value = getattr(rule, name, None)
            if value is not None:
                rules.append(word.format(value) if "{}" in word else f"{word} {value}")
        pattern = getattr(rule, "pattern", None)
        if pattern is not None:
            rules.append(f"matches `{pattern}`")
    return rules


def _rules_of(extra: list[Any]) -> list[str]:
    """The constraints of an Annotated type's extra arguments (FieldInfo or bare rules)."""
    flat = [m for item in extra for m in (item.metadata if isinstance(item, FieldInfo) else [item])]
    return _constraints(flat)


def _named(annotation: Any, metadata: list[Any] | None = None) -> str | None:
    """The value type's name: `annotation` is one of NAMED_TYPES, or (with `metadata`, the
    constraints pydantic took off a field's Annotated alias) its base type."""
    for name, (alias, _) in NAMED_TYPES.items():
        if annotation == alias:
            return name
        base, *extra = typing.get_args(alias)
        if metadata and annotation is base and _rules_of(extra) == _constraints(metadata):
            return name
    return None


def type_name(annotation: Any, metadata: list[Any] | None = None) -> tuple[str, list[str]]:
    """The type in words and the rules that go with it."""
    named = _named(annotation, metadata)
    if named is not None:
        return named, []
    if metadata:
        words, rules = type_name(annotation)
        return words, rules + _constraints(metadata)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        flat = [m for item in extra for m in (item.metadata if isinstance(item, FieldInfo) else [item])]
        return type_name(inner, [m for m in flat if _constraints([m])] or None)
    if origin in (typing.Union, types.UnionType):
        parts = [type_name(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        nullable = type(None) in typing.get_args(annotation)
        names = [part[0] for part in parts if not (part[0] == "integer" and ("number", []) in parts)]
        words = " or ".join(names) + (" or null" if nullable else "")
        return words, [rule for part in parts for rule in part[1]]
    if origin is tuple:
        inner, rules = type_name(typing.get_args(annotation)[0])
        return f"list of {inner}", [f"each {rule}" for rule in rules]
    if origin is dict:
        key, _ = type_name(typing.get_args(annotation)[0])
        value, _ = type_name(typing.get_args(annotation)[1])
        return f"map of {key} to {value}", []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})", []
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(f"`{member.value}`" for member in annotation), []
    plain: dict[Any, str] = {
        str: "text",
        int: "integer",
        float: "number",
        bool: "true/false",
        datetime.date: "date",
        decimal.Decimal: "number",
    }
    return plain.get(annotation, getattr(annotation, "__name__", str(annotation))), []


def _key(name: str, field: FieldInfo) -> str:
    return field.alias or name


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, enum.Enum):
        return f"`{value.value}`"
    if isinstance(value, tuple):
        return "none" if not value else ", ".join(f"`{getattr(v, 'value', v)}`" for v in value)
    if isinstance(value, dict):
        return "none"
    if isinstance(value, BaseModel):
        return "all defaults"
    return f"`{value}`"


def _models() -> list[type[BaseModel]]:
    """Every model the file can hold, the catalogue first, each once, in reading order."""
    found: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation in found:
                return
            found.append(annotation)
            for field in annotation.model_fields.values():
                visit(field.annotation)
            return
        for arg in typing.get_args(annotation):
            visit(arg)

    visit(model.Catalog)
    return found


def _doc(cls: type[BaseModel]) -> str:
    text = cls.__doc__ or ""
    if cls.__module__ != model.__name__ or not text or text.startswith(("Usage docs", "A base class")):
        return ""
    return " ".join(text.split()) + "\n\n"


def catalog_reference() -> str:
    parts = [HEADER]
    parts.append("\n## Value types\n\n| Type | Rule |\n| --- | --- |\n")
    parts.extend(f"| {name} | {rule} |\n" for name, (_, rule) in NAMED_TYPES.items())
    for cls in _models():
        parts.append(
            f"\n## {cls.__name__}\n\n{_doc(cls)}| Key | Type | Default | Rules |\n| --- | --- | --- | --- |\n"
        )
        for name, field in cls.model_fields.items():
            words, rules = type_name(field.annotation, list(field.metadata) or None)
            cells = (f"`{_key(name, field)}`", words, _default(field), "; ".join(dict.fromkeys(rules)))
            parts.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n")
    return "".join(parts)
