"""The catalogue editor's forms: a product document read from the form fields, and the import's
problems put back next to the fields they concern, in words.

A field's name is the path of its value in the product document (`options.0.units.1.type`), so
a problem's path (`products[3].options[0].units[1].type`) names its field. Each list item of the
form carries the index it had in the stored document (`….source`): the form changes the keys it
shows and keeps every other key of the item as stored, so nothing it does not show is lost. A
blank new item is left out; an item with `remove` ticked is removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml
from starlette.datastructures import FormData

from berth.capabilities.base import EditorPart
from berth.domain.catalog.document import CatalogFileError, read_yaml
from berth.domain.catalog_history import field_words

Document = dict[str, Any]

# What staff call the file's keys (the others are their words: `salesCutoffMinutes` reads
# "sales cutoff minutes").
FIELD_LABELS = {
    "id": "Id",
    "internalName": "Name",
    "timeZone": "Time zone",
    "locale": "Main language",
    "availabilityType": "Sold by",
    "deliveryFormats": "Ticket codes",
    "deliveryMethods": "Delivered as",
    "redemptionMethod": "Redeemed by",
    "pricingPer": "Priced per",
    "defaultCurrency": "Default currency",
    "durationMinutes": "Duration (minutes)",
    "cancellationCutoffAmount": "Cancellation cutoff",
    "salesCutoffMinutes": "Sales close (minutes before)",
    "minUnits": "Fewest units per booking",
    "maxUnits": "Most units per booking",
    "closedDates": "Closed dates",
    "from": "From",
    "until": "Until",
    "weekdays": "Days",
    "startTimes": "Start times",
    "openingHours": "Opening hours",
    "capacity": "Places",
    "minAge": "Youngest age",
    "maxAge": "Oldest age",
    "minQuantity": "Fewest per booking",
    "maxQuantity": "Most per booking",
    "paxCount": "People it counts as",
    "retail": "Price",
    "original": "Price before discount",
    "net": "Net price",
    "includedTaxes": "Tax included",
    "shortDescription": "Short description",
}
_ITEM_WORDS = {"options": "Option", "units": "Unit", "schedules": "Schedule", "prices": "Price"}


def field_name(path: str) -> str:
    """`options[0].units[1].type` -> `options.0.units.1.type`."""
    return re.sub(r"\[(\d+)\]", r".\1", path).lstrip(".")


def field_id(name: str) -> str:
    return "f-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


def in_words(name: str, document: Document) -> str:
    """Where a field is, as staff read it: `Option 1 "DEFAULT" > Unit 2 "child" > Price 1 (EUR) > Price`."""
    parts = name.split(".") if name else []
    words: list[str] = []
    node: Any = document
    index = 0
    while index < len(parts):
        key = parts[index]
        node = node.get(key) if isinstance(node, dict) else None
        if key in _ITEM_WORDS and index + 1 < len(parts) and parts[index + 1].isdigit():
            position = int(parts[index + 1])
            item = node[position] if isinstance(node, list) and position < len(node) else None
            item_id = item.get("id") if isinstance(item, dict) else None
            currency = item.get("currency") if isinstance(item, dict) else None
            label = f'{position + 1} "{item_id}"' if isinstance(item_id, str) else f"{position + 1}"
            if key == "prices" and isinstance(currency, str):
                label = f"{position + 1} ({currency})"
            words.append(f"{_ITEM_WORDS[key]} {label}")
            node = item
            index += 2
            continue
        if key.isdigit():
            words.append(f"item {int(key) + 1}")
        elif key not in ("restrictions",):
            words.append(FIELD_LABELS.get(key, field_words(key).capitalize()))
        index += 1
    return " \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} ".join(words) or "The product"


@dataclass
class FieldProblems:
    """The import's problems of one product, by the field they concern."""

    by_field: dict[str, list[str]] = field(default_factory=dict)
    summary: list[tuple[str, str, str]] = field(default_factory=list)  # where in words, message, field id

    def at(self, name: str) -> list[str]:
        return self.by_field.get(name, [])

    def under(self, prefix: str, keys: Iterable[str]) -> list[str]:
        """The problems of `prefix`'s keys `keys` and everything in them (a capability part)."""
        starts = tuple(f"{prefix}{key}" for key in keys)
        return [
            message
            for name, messages in self.by_field.items()
            if any(name == start or name.startswith(start + ".") for start in starts)
            for message in messages
        ]

    def add(self, name: str, message: str, document: Document) -> None:
        self.by_field.setdefault(name, []).append(message)
        self.summary.append((in_words(name, document), message, field_id(name)))

    def __bool__(self) -> bool:
        return bool(self.by_field)


def product_problems(error: CatalogFileError, product_index: int, document: Document) -> FieldProblems:
    """The problems of the product at `product_index` of the saved file, by field; a problem
    elsewhere in the file (the supplier, another product) is named as a whole."""
    found = FieldProblems()
    own = f"products[{product_index}]"
    for problem in error.problems:
        if problem.path == own or problem.path.startswith(own + ".") or problem.path.startswith(own + "["):
            found.add(field_name(problem.path[len(own) :]), problem.message, document)
        else:
            found.by_field.setdefault("", []).append(f"{problem.path or 'the catalogue'}: {problem.message}")
            found.summary.append(("Elsewhere in the catalogue", f"{problem.path}: {problem.message}", ""))
    return found


class Shown(dict[str, Any]):
    """A document as the editor's template reads it: a key it lacks reads None."""

    def __missing__(self, key: str) -> None:
        return None


def shown(value: Any) -> Any:
    if isinstance(value, dict):
        return Shown({key: shown(item) for key, item in value.items()})
    if isinstance(value, list):
        return [shown(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def dump_yaml(value: Any) -> str:
    if value in (None, {}, []):
        return ""
    return yaml.safe_dump(_plain(value), sort_keys=False, allow_unicode=True, width=100)


def part_yaml(item: Document, part: EditorPart) -> str:
    return dump_yaml({key: item[key] for key in part.keys if key in item})


# --- reading the form ---------------------------------------------------------------------------


class ProductForm:
    """One submitted product form, read into a product document over the stored one."""

    def __init__(self, form: FormData, stored: Document, parts: Iterable[EditorPart]) -> None:
        self.form = form
        self.stored = stored
        self.parts = tuple(parts)
        self.problems: list[tuple[str, str]] = []  # (field name, message) found reading the form

    def text(self, name: str) -> str:
        value = self.form.get(name)
        return value.strip() if isinstance(value, str) else ""

    def document(self) -> Document:
        doc = dict(self.stored)
        if "id" in self.form:
            doc["id"] = self.text("id")
        for key in ("internalName", "reference", "locale", "timeZone", "defaultCurrency"):
            _set(doc, key, self.text(key))
        for key in ("availabilityType", "redemptionMethod", "pricingPer"):
            _set(doc, key, self.text(key))
        for key in ("deliveryFormats", "deliveryMethods"):
            doc[key] = _in_stored_order(self.form.getlist(key), doc.get(key))
        for key, default in (("instantConfirmation", True), ("allowFreesale", False)):
            checked = self.form.get(key) == "on"
            if checked == default:
                doc.pop(key, None)
            else:
                doc[key] = checked
        self._parts(doc, "", "product")
        self._content(doc)  # after the content part: the title fields win over its YAML
        doc["options"] = self._items("options", self.stored.get("options"), self._option)
        return doc

    def _content(self, doc: Document) -> None:
        content = {tag: dict(value) for tag, value in (doc.get("content") or {}).items()}
        for tag in list(content):
            for key in ("title", "shortDescription", "description"):
                name = f"content.{tag}.{key}"
                if name in self.form:
                    _set(content[tag], key, self.text(name))
            if not content[tag]:
                del content[tag]
        new_tag = self.text("content.new.language")
        if new_tag:
            added = content.setdefault(new_tag, {})
            for key in ("title", "shortDescription", "description"):
                _set(added, key, self.text(f"content.new.{key}"))
        if content:
            doc["content"] = content
        else:
            doc.pop("content", None)

    def _parts(self, item: Document, prefix: str, level: str) -> None:
        for part in self.parts:
            name = f"{prefix}part.{part.id}"
            if part.level != level or name not in self.form:
                continue
            for key in part.keys:
                item.pop(key, None)
            try:
                fragment = read_yaml(self.text(name)) if self.text(name) else {}
            except CatalogFileError as exc:
                self.problems.extend((name, str(problem)) for problem in exc.problems)
                continue
            if not isinstance(fragment, dict):
                self.problems.append((name, f"must be a mapping of {', '.join(part.keys)}"))
                continue
            for key, value in fragment.items():
                if key in part.keys:
                    item[key] = value
                else:
                    self.problems.append(
                        (name, f"{key!r} is not part of {part.title} (only {', '.join(part.keys)})")
                    )

    def _items(
        self, prefix: str, stored: Any, read: Callable[[str, Document, bool], Document | None]
    ) -> list[Document]:
        """The list at `prefix` as the form has it: stored items changed, new ones added."""
        stored_list = stored if isinstance(stored, list) else []
        items: list[Document] = []
        index = 0
        while f"{prefix}.{index}.source" in self.form:
            name = f"{prefix}.{index}"
            index += 1
            if self.form.get(f"{name}.remove") == "on":
                continue
            source = self.text(f"{name}.source")
            is_new = not source.isdigit() or int(source) >= len(stored_list)
            base = {} if is_new else dict(stored_list[int(source)])
            item = read(name, base, is_new)
            if item is not None:
                items.append(item)
        return items

    def _blank(self, name: str, keys: Iterable[str]) -> bool:
        return not any(self.text(f"{name}.{key}") for key in keys)

    def _option(self, name: str, option: Document, is_new: bool) -> Document | None:
        if is_new and self._blank(name, ("id", "internalName")):
            return None
        for key in ("id", "internalName", "reference"):
            _set(option, key, self.text(f"{name}.{key}"))
        # The radio's value is the option's place in the form (`options.N` -> N).
        _set(option, "default", self.text("defaultOption") == name.rsplit(".", 1)[1] or "")
        for key in ("durationMinutes", "cancellationCutoffAmount", "salesCutoffMinutes"):
            _set(option, key, _number(self.text(f"{name}.{key}")))
        _set(option, "cancellationCutoffUnit", self.text(f"{name}.cancellationCutoffUnit"))
        restrictions = dict(option.get("restrictions") or {})
        for key in ("minUnits", "maxUnits"):
            _set(restrictions, key, _number(self.text(f"{name}.restrictions.{key}")))
        _set(option, "restrictions", restrictions or "")
        _set(option, "closedDates", _listed(self.text(f"{name}.closedDates")))
        self._parts(option, f"{name}.", "option")
        option["schedules"] = self._items(f"{name}.schedules", option.get("schedules"), self._schedule)
        if not option["schedules"]:
            del option["schedules"]
        option["units"] = self._items(f"{name}.units", option.get("units"), self._unit)
        return option

    def _schedule(self, name: str, schedule: Document, is_new: bool) -> Document | None:
        fields = ("from", "until", "startTimes", "openingHours", "capacity")
        if is_new and self._blank(name, fields):
            return None
        for key in ("from", "until"):
            _set(schedule, key, self.text(f"{name}.{key}"))
        days = _in_stored_order(self.form.getlist(f"{name}.weekdays"), schedule.get("weekdays"))
        if len(days) < 7 or "weekdays" in schedule:  # every day is the default
            schedule["weekdays"] = days
        _set(schedule, "startTimes", _listed(self.text(f"{name}.startTimes")))
        hours = []
        for span in _listed(self.text(f"{name}.openingHours")):
            opens, _, closes = span.partition("-")
            hours.append({"from": opens.strip(), "to": closes.strip()})
        _set(schedule, "openingHours", hours)
        capacity = self.text(f"{name}.capacity")
        schedule["capacity"] = _number(capacity) if capacity else None
        return schedule

    def _unit(self, name: str, unit: Document, is_new: bool) -> Document | None:
        if is_new and self._blank(name, ("id", "internalName")):
            return None
        for key in ("id", "internalName", "type"):
            _set(unit, key, self.text(f"{name}.{key}"))
        restrictions = dict(unit.get("restrictions") or {})
        for key in ("minAge", "maxAge", "minQuantity", "maxQuantity", "paxCount"):
            _set(restrictions, key, _number(self.text(f"{name}.restrictions.{key}")))
        _set(unit, "restrictions", restrictions or "")
        unit["prices"] = self._items(f"{name}.prices", unit.get("prices"), self._price)
        if not unit["prices"]:
            del unit["prices"]
        return unit

    def _price(self, name: str, price: Document, is_new: bool) -> Document | None:
        if is_new and self._blank(name, ("currency", "retail")):
            return None
        _set(price, "currency", self.text(f"{name}.currency").upper())
        precision = price.get("currencyPrecision", 2)
        scale = precision if isinstance(precision, int) else 2
        for key in ("retail", "original", "net"):
            _set(price, key, _minor(self.text(f"{name}.{key}"), scale))
        taxes = [dict(tax) for tax in price.get("includedTaxes") or []]
        tax_name, tax_amount = self.text(f"{name}.tax.name"), self.text(f"{name}.tax.retail")
        if tax_name or tax_amount:
            tax = taxes[0] if taxes else {}
            amount = _minor(tax_amount, scale)
            tax.update({"name": tax_name, "retail": amount})
            if "original" not in tax or not taxes:
                tax["original"] = amount
            taxes[:1] = [tax]
        elif taxes:
            taxes = taxes[1:]
        _set(price, "includedTaxes", taxes)
        return price


def _in_stored_order(chosen: list[Any], stored: Any) -> list[str]:
    """The ticked values; in the stored order when they are the stored ones (a list whose
    order changed is a change)."""
    values = [value for value in chosen if isinstance(value, str)]
    if isinstance(stored, list) and sorted(stored) == sorted(values):
        return list(stored)
    return values


def _set(document: Document, key: str, value: Any) -> None:
    """A blank value leaves the key out (its default)."""
    if value in ("", None, [], {}):
        document.pop(key, None)
    else:
        document[key] = value


def _number(text: str) -> int | str:
    """An integer; what is not one is kept as typed, for the import to say what it should be."""
    try:
        return int(text)
    except ValueError:
        return text


def _minor(text: str, precision: int) -> int | str:
    """`25.50` in minor units (2550); what is not an amount is kept as typed."""
    if not text:
        return ""
    try:
        amount = Decimal(text.replace(",", "")) * 10**precision
    except InvalidOperation:
        return text
    return int(amount) if amount == amount.to_integral_value() else text


def _listed(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,\s]+", text) if part.strip()]


def money(amount: Any, precision: Any) -> str:
    """Minor units as an amount to type (`2550` -> `25.50`)."""
    if not isinstance(amount, int):
        return "" if amount is None else str(amount)
    scale = precision if isinstance(precision, int) else 2
    return f"{Decimal(amount) / 10**scale:.{scale}f}"


def reading_problems(problems: list[tuple[str, str]], document: Document) -> FieldProblems:
    found = FieldProblems()
    for name, message in problems:
        found.add(name, message, document)
    return found
