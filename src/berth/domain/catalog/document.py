"""The catalogue file: YAML in, validated `Catalog` out, with every problem located by line.

A file is accepted whole or not at all: `parse_catalog` either returns a valid catalogue or
raises `CatalogFileError` listing every problem it found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from berth.domain.catalog.model import Catalog
from berth.domain.catalog.rules import CatalogRule, Path, catalog_problems, duplicate_ids
from berth.domain.catalog.salvage import salvage
from berth.domain.input_errors import expectation

_TAG_INT = "tag:yaml.org,2002:int"
_TAG_FLOAT = "tag:yaml.org,2002:float"
_TAG_BOOL = "tag:yaml.org,2002:bool"
_TAG_TIMESTAMP = "tag:yaml.org,2002:timestamp"
MAX_DEPTH = 100  # nested collections and values; a catalogue's deepest path has about 12


@dataclass(frozen=True)
class Problem:
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "file"
        return f"{where}: {self.path or '(root)'}: {self.message}"


class CatalogFileError(Exception):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def format_path(path: Path) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class _Builder:
    """Turns a composed YAML node tree into plain values, remembering each path's line.

    YAML 1.1 quirks that bite catalogues are switched off: `10:30` stays a string (not the
    base-60 integer 630) and only true/false are booleans (so the country `NO` stays `NO`).
    """

    def __init__(self) -> None:
        self.lines: dict[Path, int] = {}
        self.problems: list[Problem] = []
        self.unreadable: set[Path] = set()  # values reported already: the schema's word is not needed
        self._loader = yaml.SafeLoader("")

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.build(key_node, (*path, "<key>"))
                if not isinstance(key, str):
                    key = str(key)
                if key in result:
                    self.problems.append(
                        Problem(key_node.start_mark.line + 1, format_path((*path, key)), "duplicate key")
                    )
                result[key] = self.build(value_node, (*path, key))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        assert isinstance(node, yaml.ScalarNode)
        if "\x00" in node.value:  # written as an escape ("\0", "\x00"): PostgreSQL cannot store it
            self.problems.append(
                Problem(
                    self.lines[path],
                    format_path(path),
                    "holds the NUL character (U+0000), which no field accepts",
                )
            )
            self.unreadable.add(path)
            return node.value.replace("\x00", "")
        if node.tag in (_TAG_INT, _TAG_FLOAT) and ":" in node.value:
            return node.value
        if node.tag == _TAG_BOOL and node.value.lower() not in ("true", "false"):
            return node.value
        try:
            return self._loader.construct_object(node, deep=True)
        except (ValueError, yaml.YAMLError) as exc:
            reason = getattr(exc, "problem", None) or str(exc)
            expected = "a valid date" if node.tag == _TAG_TIMESTAMP else "a value YAML can read"
            self.problems.append(
                Problem(self.lines[path], format_path(path), f"is not {expected} ({reason})")
            )
            self.unreadable.add(path)
            return node.value

    def line_of(self, path: Path) -> int | None:
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def _in_file_order(problem: Problem) -> tuple[int, str]:
    return (problem.line or 0, problem.path)


ALIASES_REFUSED = "YAML anchors (&name) and aliases (*name) are not accepted: write each value out in full"


class _AliasRefused(yaml.composer.ComposerError):
    """An anchor or alias in a document: refused, not 'not valid YAML' (it is valid)."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document nested deeper than MAX_DEPTH: composing and
    building are recursive, and a deeper one ran out of Python's stack (RecursionError).

    It refuses anchors and aliases at the first one, before anything is built: an alias is
    composed as a shared node, and building it out copies it at each use, so a few hundred
    bytes of nested aliases ("billion laughs") grew to gigabytes."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _AliasRefused(None, None, ALIASES_REFUSED, event.start_mark)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                message = f"nested deeper than {MAX_DEPTH} levels"
                raise yaml.composer.ComposerError(None, None, message, event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _compose(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", exc)
        message = str(problem) if isinstance(exc, _AliasRefused) else f"not valid YAML: {problem}"
        raise CatalogFileError([Problem(line, "", message)]) from None


def read_yaml(text: str) -> Any:
    """A piece of a catalogue file (the editor's YAML fields) as plain values, read as the
    file is (`10:30` stays a string); CatalogFileError for what YAML cannot read."""
    root = _compose(text)
    if root is None:
        return None
    builder = _Builder()
    data = builder.build(root, ())
    if builder.problems:
        raise CatalogFileError(builder.problems)
    return data


def parse_catalog(text: str, rules: Sequence[CatalogRule]) -> Catalog:
    """The catalogue a file describes, checked by the core rules and the capabilities' `rules`;
    CatalogFileError lists every problem, in file order."""
    root = _compose(text)
    if root is None:
        raise CatalogFileError([Problem(None, "", "the file is empty")])
    builder = _Builder()
    data = builder.build(root, ())
    # A repeated key keeps its last value: the checks below go on with it.
    problems = list(builder.problems)
    if not isinstance(data, dict):
        raise CatalogFileError(
            [*problems, Problem(1, "", "the file must be a mapping with 'supplier' and 'products'")]
        )
    try:
        catalog: Catalog | None = Catalog.model_validate(data)
    except ValidationError as exc:
        catalog = None
        problems.extend(_schema_problems(exc, builder))
    problems.extend(_rule_problems(catalog, data, builder, rules))
    if problems:
        raise CatalogFileError(sorted(problems, key=_in_file_order))
    assert catalog is not None
    return catalog


def _schema_problems(exc: ValidationError, builder: _Builder) -> list[Problem]:
    errors = exc.errors()
    locs = [tuple(error["loc"]) for error in errors]
    problems = []
    for error, loc in zip(errors, locs, strict=True):
        if loc in builder.unreadable:
            continue
        # A list whose items all failed is also reported "too short"; the items say more.
        if error["type"] == "too_short" and any(other[: len(loc)] == loc and other != loc for other in locs):
            continue
        problems.append(Problem(builder.line_of(loc), format_path(loc), expectation(error)))
    return problems


def _rule_problems(
    catalog: Catalog | None, data: dict[str, Any], builder: _Builder, rules: Sequence[CatalogRule]
) -> list[Problem]:
    """The cross-field rules, also when the schema check failed: then they run on what it
    accepted (`salvage`), and only on the products it accepted unchanged."""
    if catalog is not None:
        return [
            Problem(builder.line_of(path), format_path(path), message)
            for path, message in catalog_problems(catalog, rules)
        ]
    # Repeated ids of products, options and units do not depend on anything the schema refused:
    # they are read from the file as it is, so that they are reported in the same pass.
    found = _repeated_ids(data)
    salvaged = salvage(data)
    if salvaged is not None:
        for path, message in catalog_problems(salvaged.catalog, rules):
            if not salvaged.artefact(path):
                found.append((salvaged.original_path(path), message))
    unique = dict.fromkeys(found)  # a repeat the salvaged catalogue also has is said once
    return [Problem(builder.line_of(path), format_path(path), message) for path, message in unique]


def _ids(items: Any) -> list[tuple[int, dict[str, Any]]]:
    if not isinstance(items, list):
        return []
    return [
        (index, item)
        for index, item in enumerate(items)
        if isinstance(item, dict) and isinstance(item.get("id"), str)
    ]


def _repeated_ids(data: dict[str, Any]) -> list[tuple[Path, str]]:
    """Repeated product ids, option ids of a product and unit ids of an option, in the raw file."""

    def repeats(items: list[tuple[int, dict[str, Any]]], path: Path, what: str) -> list[tuple[Path, str]]:
        indexes = [index for index, _ in items]
        found = duplicate_ids([item["id"] for _, item in items], path, what)
        # duplicate_ids counts the items it is given, which skip those without an id
        return [((*path, indexes[int(where[len(path)])], "id"), message) for where, message in found]

    products = _ids(data.get("products"))
    problems = repeats(products, ("products",), "product")
    for p_index, product in products:
        options = _ids(product.get("options"))
        problems.extend(repeats(options, ("products", p_index, "options"), "option"))
        for o_index, option in options:
            units = _ids(option.get("units"))
            problems.extend(repeats(units, ("products", p_index, "options", o_index, "units"), "unit"))
    return problems


class _PlainDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, writing a list or mapping used twice out twice: an anchor and
    alias would make what Berth writes unreadable to Berth."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(document: Any) -> str:
    """Plain values as YAML, in their order, without anchors or aliases."""
    return yaml.dump(document, Dumper=_PlainDumper, sort_keys=False, allow_unicode=True, width=100)


def catalog_to_yaml(catalog: Catalog) -> str:
    return to_yaml(catalog.model_dump(mode="json", by_alias=True, exclude_defaults=True))
