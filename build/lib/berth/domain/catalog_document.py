"""The catalogue file: YAML in, validated `Catalog` out, with every problem located by line.

A file is accepted whole or not at all: `parse_catalog` either returns a valid catalogue or
raises `CatalogFileError` listing every problem it found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from berth.domain.catalog import Catalog, Path, catalog_problems
from berth.domain.input_errors import expectation

_TAG_INT = "tag:yaml.org,2002:int"
_TAG_FLOAT = "tag:yaml.org,2002:float"
_TAG_BOOL = "tag:yaml.org,2002:bool"


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
        if node.tag in (_TAG_INT, _TAG_FLOAT) and ":" in node.value:
            return node.value
        if node.tag == _TAG_BOOL and node.value.lower() not in ("true", "false"):
            return node.value
        return self._loader.construct_object(node, deep=True)

    def line_of(self, path: Path) -> int | None:
        for end in range(len(path), -1, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return None


def _in_file_order(problem: Problem) -> tuple[int, str]:
    return (problem.line or 0, problem.path)


def parse_catalog(text: str) -> Catalog:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise CatalogFileError(
            [Problem(line, "", f"not valid YAML: {getattr(exc, 'problem', exc)}")]
        ) from None
    if root is None:
        raise CatalogFileError([Problem(None, "", "the file is empty")])
    builder = _Builder()
    data = builder.build(root, ())
    if builder.problems:
        raise CatalogFileError(builder.problems)
    if not isinstance(data, dict):
        raise CatalogFileError([Problem(1, "", "the file must be a mapping with 'supplier' and 'products'")])
    try:
        catalog = Catalog.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        locs = [tuple(error["loc"]) for error in errors]
        problems = []
        for error, loc in zip(errors, locs, strict=True):
            # A list whose items all failed is also reported "too short"; the items say more.
            if error["type"] == "too_short" and any(
                other[: len(loc)] == loc and other != loc for other in locs
            ):
                continue
            problems.append(Problem(builder.line_of(loc), format_path(loc), expectation(error)))
        raise CatalogFileError(sorted(problems, key=_in_file_order)) from None
    rule_problems = catalog_problems(catalog)
    if rule_problems:
        raise CatalogFileError(
            sorted(
                (
                    Problem(builder.line_of(path), format_path(path), message)
                    for path, message in rule_problems
                ),
                key=_in_file_order,
            )
        )
    return catalog


def catalog_to_yaml(catalog: Catalog) -> str:
    document = catalog.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
