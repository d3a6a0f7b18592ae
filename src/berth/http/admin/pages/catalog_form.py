"""The catalogue editor's forms: a product document read from the form fields, and the import's
problems put back next to the fields they concern, in words.

A field's name is the path of its value in the product document (`options.0.units.1.type`), so
a problem's path (`products[3].options[0].units[1].type`) names its field. The form is read
into a copy of the stored document: a field sent back as the template showed it (the same
`as_text`, `money`, ... writes it and reads it back) leaves its key as stored, a changed one
writes its key, and a key the form does not show is never touched. Each list item carries the
index it had in the stored document (`….source`); a list is written back only when one of its
items changed, was added (a blank new item is left out) or removed (`remove` ticked).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, TypeGuard

from starlette.datastructures import FormData

from berth.capabilities.base import EditorPart
from berth.domain.catalog import Weekday
from berth.domain.catalog.document import CatalogFileError, read_yaml, to_yaml
from berth.domain.catalog.taxes import AMOUNT_KEYS, included_tax, rate_of
from berth.domain.catalog_history import field_words
from berth.domain.price_lines import scaled_shares

Document = dict[str, Any]

# What staff call the file's keys (the others are their words: `salesCutoffMinutes` reads
# "sales cutoff minutes").
FIELD_LABELS = {
    "id": "Id",
    "internalName": "Name",
    "timeZone": "Time zone",
    "locale": "Main language",
    "availabilityType": "Sold by",
    "deliveryFormats": "Ticket formats",
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
    "rate": "Rate (%)",
    "shortDescription": "Short description",
}
CONTENT_TEXTS = ("title", "shortDescription", "description")
WEEKDAYS = tuple(day.value for day in Weekday)
_ITEM_WORDS = {"options": "Option", "units": "Unit", "schedules": "Schedule", "prices": "Price"}


def field_name(path: str) -> str:
    """`options[0].units[1].type` -> `options.0.units.1.type`."""
    return re.sub(r"\[(\d+)\]", r".\1", path).lstrip(".")


def field_id(name: str) -> str:
    return "f-" + re.sub(r"[^A-Za-z0-9_-]", "-", name)


def in_words(name: str, document: Document) -> str:
    """Where a field is, as staff read it: `Option 1 "DEFAULT" > Unit 2 "child" > Price 1 (EUR) > Price`."""
    parts = name.replace("tax.retail", "tax.amount").split(".") if name else []
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
    return to_yaml(_plain(value))


def part_yaml(item: Document, part: EditorPart) -> str:
    return dump_yaml({key: item[key] for key in part.keys if key in item})


# --- what the form shows --------------------------------------------------------------------------
# The template writes each value with these, and the reader compares what comes back with them:
# a field sent back as it was shown keeps its stored value exactly.


def as_text(value: Any) -> str:
    return "" if value is None else str(value)


def as_list(values: Any) -> str:
    return ", ".join(map(str, values)) if isinstance(values, list) else as_text(values)


def as_hours(hours: Any) -> str:
    if not isinstance(hours, list):
        return as_text(hours)
    return ", ".join(f"{h.get('from')}-{h.get('to')}" if isinstance(h, dict) else str(h) for h in hours)


def money(amount: Any, precision: Any) -> str:
    """Minor units as an amount to type (`2550` -> `25.50`)."""
    if not isinstance(amount, int):
        return "" if amount is None else str(amount)
    scale = precision if isinstance(precision, int) else 2
    return f"{Decimal(amount) / 10**scale:.{scale}f}"


def tax_amount(price: Any, tax: Any) -> str:
    """The tax's amount as the form shows it: with a rate, the one it works out to."""
    if not isinstance(tax, dict) or not isinstance(price, dict):
        return ""
    precision = price.get("currencyPrecision", 2)
    rate = rate_of(tax.get("rate"))
    retail = price.get("retail")
    if tax.get("rate") is None:
        return money(tax.get("retail"), precision)
    if rate is None or not isinstance(retail, int) or isinstance(retail, bool):
        return ""
    return money(included_tax(retail, rate), precision)


def _or(default: str) -> Callable[[Any], str]:
    """A choice shown with its default selected when the document leaves it out."""
    return lambda value: as_text(value) or default


def _typed(text: str) -> str:
    """What a field holds, as the browser sends it (a textarea's lines end in CR LF)."""
    return text.replace("\r\n", "\n").strip()


# --- reading the form ---------------------------------------------------------------------------


class ProductForm:
    """One submitted product form, read into a copy of the stored product document: each field
    the form shows writes its key back when it was changed; every other key stays as stored."""

    def __init__(self, form: FormData, stored: Document, parts: Iterable[EditorPart]) -> None:
        self.form = form
        self.stored = stored
        self.parts = tuple(parts)
        self.problems: list[tuple[str, str]] = []  # (field name, message) found reading the form

    def text(self, name: str) -> str:
        value = self.form.get(name)
        return _typed(value) if isinstance(value, str) else ""

    def changed(self, name: str, shown: str) -> bool:
        """Whether the field `name` is in the form and holds something else than it showed."""
        return name in self.form and self.text(name) != _typed(shown)

    def _field(
        self,
        item: Document,
        key: str,
        name: str,
        show: Callable[[Any], str] = as_text,
        read: Callable[[str], Any] = str,
    ) -> None:
        if self.changed(name, show(item.get(key))):
            _set(item, key, read(self.text(name)))

    def _checked(self, item: Document, key: str, name: str, default: bool) -> None:
        """A checkbox: the key is written when the box says otherwise than the stored value."""
        checked = self.form.get(name) == "on"
        if checked != item.get(key, default):
            _set(item, key, "" if checked == default else checked)

    def _chosen(self, item: Document, key: str, name: str, every: Iterable[str] | None = None) -> None:
        """Checkboxes of one list; `every` ticked is the default (the key left out)."""
        chosen = [value for value in self.form.getlist(name) if isinstance(value, str)]
        stored = item.get(key, list(every) if every is not None else [])
        if not (isinstance(stored, list) and sorted(chosen) == sorted(map(str, stored))):
            item[key] = chosen

    def document(self) -> Document:
        doc = copy.deepcopy(self.stored)
        for key in ("id", "internalName", "reference", "timeZone", "defaultCurrency"):
            self._field(doc, key, key)
        for key, default in (
            ("locale", "en-GB"),
            ("availabilityType", ""),
            ("redemptionMethod", "DIGITAL"),
            ("pricingPer", "UNIT"),
        ):
            self._field(doc, key, key, show=_or(default))
        for key in ("deliveryFormats", "deliveryMethods"):
            self._chosen(doc, key, key)
        self._checked(doc, "instantConfirmation", "instantConfirmation", True)
        self._checked(doc, "allowFreesale", "allowFreesale", False)
        self._parts(doc, "", "product")
        self._content(doc)  # after the content part: a title field changed wins over its YAML
        self._list(doc, "options", "options", self._option)
        return doc

    def _content(self, doc: Document) -> None:
        content = doc.get("content")
        content = content if isinstance(content, dict) else {}
        stored = self.stored.get("content")
        stored = stored if isinstance(stored, dict) else {}
        for tag, texts in content.items():
            shown_texts = stored.get(tag)
            shown_texts = shown_texts if isinstance(shown_texts, dict) else {}
            for key in CONTENT_TEXTS:
                name = f"content.{tag}.{key}"
                if isinstance(texts, dict) and self.changed(name, as_text(shown_texts.get(key))):
                    _set(texts, key, self.text(name))
        new_tag = self.text("content.new.language")
        if new_tag:
            added = content.setdefault(new_tag, {})
            for key in CONTENT_TEXTS:
                _set(added, key, self.text(f"content.new.{key}"))
        # A language whose texts the form emptied goes; one stored empty stays as it is.
        _set(
            doc,
            "content",
            {tag: texts for tag, texts in content.items() if texts or texts == stored.get(tag)},
        )

    def _parts(self, item: Document, prefix: str, level: str) -> None:
        for part in self.parts:
            name = f"{prefix}part.{part.id}"
            if part.level != level or not self.changed(name, part_yaml(item, part)):
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

    def _list(
        self, item: Document, key: str, prefix: str, read: Callable[[str, Document, bool], Document | None]
    ) -> None:
        """The list at `prefix` as the form has it: stored items changed, new ones added,
        ticked ones removed; the key is written back only when the list changed."""
        stored = item.get(key)
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
            base = {} if is_new else copy.deepcopy(stored_list[int(source)])
            read_item = read(name, base, is_new)
            if read_item is not None:
                items.append(read_item)
        if items != stored_list:
            _set(item, key, items)

    def _blank(self, name: str, keys: Iterable[str]) -> bool:
        return not any(self.text(f"{name}.{key}") for key in keys)

    def _option(self, name: str, option: Document, is_new: bool) -> Document | None:
        if is_new and self._blank(name, ("id", "internalName")):
            return None
        for key in ("id", "internalName", "reference"):
            self._field(option, key, f"{name}.{key}")
        # The radio's value is the option's place in the form (`options.N` -> N).
        is_default = self.text("defaultOption") == name.rsplit(".", 1)[1]
        if is_default != bool(option.get("default")):
            _set(option, "default", is_default or "")
        for key in ("durationMinutes", "cancellationCutoffAmount", "salesCutoffMinutes"):
            self._field(option, key, f"{name}.{key}", read=_number)
        self._field(
            option,
            "cancellationCutoffUnit",
            f"{name}.cancellationCutoffUnit",
            show=_or("hour"),
        )
        restrictions = option.get("restrictions")
        restrictions = dict(restrictions) if isinstance(restrictions, dict) else {}
        for key in ("minUnits", "maxUnits"):
            self._field(restrictions, key, f"{name}.restrictions.{key}", read=_number)
        if restrictions != option.get("restrictions", {}):
            _set(option, "restrictions", restrictions)
        self._field(option, "closedDates", f"{name}.closedDates", show=as_list, read=_listed)
        self._parts(option, f"{name}.", "option")
        self._list(option, "schedules", f"{name}.schedules", self._schedule)
        self._list(option, "units", f"{name}.units", self._unit)
        return option

    def _schedule(self, name: str, schedule: Document, is_new: bool) -> Document | None:
        fields = ("from", "until", "startTimes", "openingHours", "capacity")
        if is_new and self._blank(name, fields):
            return None
        for key in ("from", "until"):
            self._field(schedule, key, f"{name}.{key}")
        self._chosen(schedule, "weekdays", f"{name}.weekdays", WEEKDAYS)
        self._field(schedule, "startTimes", f"{name}.startTimes", show=as_list, read=_listed)
        self._field(schedule, "openingHours", f"{name}.openingHours", show=as_hours, read=_hours)
        if is_new or self.changed(f"{name}.capacity", as_text(schedule.get("capacity"))):
            capacity = self.text(f"{name}.capacity")
            schedule["capacity"] = _number(capacity) if capacity else None
        return schedule

    def _unit(self, name: str, unit: Document, is_new: bool) -> Document | None:
        if is_new and self._blank(name, ("id", "internalName")):
            return None
        for key in ("id", "internalName", "type"):
            self._field(unit, key, f"{name}.{key}")
        restrictions = unit.get("restrictions")
        restrictions = dict(restrictions) if isinstance(restrictions, dict) else {}
        for key in ("minAge", "maxAge", "minQuantity", "maxQuantity", "paxCount"):
            self._field(restrictions, key, f"{name}.restrictions.{key}", read=_number)
        if restrictions != unit.get("restrictions", {}):
            _set(unit, "restrictions", restrictions)
        self._list(unit, "prices", f"{name}.prices", self._price)
        return unit

    def _price(self, name: str, price: Document, is_new: bool) -> Document | None:
        if is_new and self._blank(name, ("currency", "retail")):
            return None
        stored_price = copy.deepcopy(price)
        self._field(price, "currency", f"{name}.currency", read=str.upper)
        precision = price.get("currencyPrecision", 2)
        scale = precision if isinstance(precision, int) else 2
        retail_changed = self.changed(f"{name}.retail", money(price.get("retail"), scale))
        taxes = price.get("includedTaxes")
        shown_tax = tax_amount(price, taxes[0]) if isinstance(taxes, list) and taxes else ""
        for key in ("retail", "original", "net"):
            self._field(
                price,
                key,
                f"{name}.{key}",
                show=lambda value: money(value, scale),
                read=lambda text: _minor(text, scale),
            )
        self._tax(name, price, scale, shown_tax, retail_changed)
        _taxes_follow(price, stored_price)
        return price

    def _tax(self, name: str, price: Document, scale: int, shown_amount: str, retail_changed: bool) -> None:
        """The price's first included tax: its name, and its rate or its amount (`shown_amount`:
        the amount the form showed, worked out from the rate for a tax given by one)."""
        taxes = [dict(tax) if isinstance(tax, dict) else tax for tax in price.get("includedTaxes") or []]
        stored = taxes[0] if taxes and isinstance(taxes[0], dict) else {}
        tax = dict(stored)
        self._field(tax, "name", f"{name}.tax.name")
        self._field(tax, "rate", f"{name}.tax.rate", read=_rate)
        if "rate" in tax:
            for key in AMOUNT_KEYS:
                tax.pop(key, None)
        elif "rate" in stored or self.changed(f"{name}.tax.retail", shown_amount):
            amount = _minor(self.text(f"{name}.tax.retail"), scale)
            tax["retail"] = amount
            if "original" not in tax or "rate" in stored:
                tax["original"] = amount
        elif retail_changed and isinstance(tax.get("retail"), int) and tax["retail"] > 0:
            self.problems.append(
                (
                    f"{name}.tax.retail",
                    "the tax amount is the one of the old price: give the tax's rate, "
                    "or its amount in the new price",
                )
            )
        if tax == stored:
            return
        if not any(self.text(f"{name}.tax.{key}") for key in ("name", "rate", "retail")):
            taxes = taxes[1:]
        else:
            taxes[:1] = [tax]
        _set(price, "includedTaxes", taxes)


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _taxes_follow(price: Document, stored: Document) -> None:
    """A changed price's taxes given as amounts follow it where the form does not show them,
    scaled like a contract's taxes (`scaled_shares`): the taxes after the first in the proportion
    new retail / old retail; each tax's price before discount and net in the proportion original
    / retail and net / retail of the price (its retail when the price has no original; none when
    it has no net). A price the form sent back unchanged keeps its taxes as stored."""
    taxes = price.get("includedTaxes")
    if price == stored or not isinstance(taxes, list) or not taxes:
        return
    if not all(isinstance(tax, dict) and "rate" not in tax for tax in taxes):
        return  # a tax given by a rate gets its amounts from the price when loaded
    retail, old_retail = price.get("retail"), stored.get("retail")
    if not _whole(retail) or not all(_whole(tax.get("retail")) for tax in taxes):
        return  # for the import to say what is wrong
    taxes = [dict(tax) for tax in taxes]
    if _whole(old_retail) and retail != old_retail and len(taxes) > 1:
        hidden = scaled_shares([tax["retail"] for tax in taxes[1:]], retail, old_retail)
        for tax, amount in zip(taxes[1:], hidden, strict=True):
            tax["retail"] = amount
    retails = [tax["retail"] for tax in taxes]
    original, net = price.get("original"), price.get("net")
    originals = scaled_shares(retails, original, retail) if _whole(original) else retails
    nets = scaled_shares(retails, net, retail) if _whole(net) else [None] * len(taxes)
    for tax, tax_original, tax_net in zip(taxes, originals, nets, strict=True):
        tax["original"] = tax_original
        _set(tax, "net", tax_net)
    price["includedTaxes"] = taxes


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


def _hours(text: str) -> list[Document]:
    """`09:00-12:00, 13:00-17:00` as opening hours."""
    hours = []
    for span in _listed(text):
        opens, _, closes = span.partition("-")
        hours.append({"from": opens.strip(), "to": closes.strip()})
    return hours


def _rate(text: str) -> int | str:
    """A rate as typed (`20`, `5.5`, `20 %`): a whole one as an integer, else the text, which the
    catalogue reads exactly."""
    typed = text.removesuffix("%").strip()
    return int(typed) if typed.isdigit() else typed


def reading_problems(problems: list[tuple[str, str]], document: Document) -> FieldProblems:
    found = FieldProblems()
    for name, message in problems:
        found.add(name, message, document)
    return found
