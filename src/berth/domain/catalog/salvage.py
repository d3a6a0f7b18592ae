"""What the schema accepts of a catalogue file that fails it, so that the cross-field rules run
in the same pass and one import lists every problem.

Each schema error is repaired by leaving something out, round after round until the rest
validates: an unknown key is dropped; a bad value is dropped (its field takes its default or,
if the field is required, the next round leaves out the object that needs it: a unit, a price,
an option, a product). The supplier is not read by the rules: a stand-in replaces it.

What was left out could make the rules report things that are not so (a child unit "must be
accompanied by" a unit that was left out; a price left out is "missing"). So rule problems of a
product where anything but an unknown key was dropped are not reported, nor those of package
includes naming such a product: they are checked once its schema problems are fixed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from berth.domain.catalog.model import Catalog, PackageInclude
from berth.domain.catalog.rules import Path

_GONE = object()  # a list item left out
_STAND_IN_SUPPLIER = {"id": "supplier", "name": "supplier"}
# Every round leaves out at least one thing; this bounds a pathological file.
_MAX_ROUNDS = 200

# Original path of a list -> the original indices of the items still in it.
Positions = dict[Path, list[int]]


def _to_original(path: Path, positions: Positions) -> Path:
    result: list[str | int] = []
    for part in path:
        kept = positions.get(tuple(result))
        if isinstance(part, int) and kept is not None and part < len(kept):
            part = kept[part]
        result.append(part)
    return tuple(result)


@dataclass(frozen=True)
class Salvaged:
    """The catalogue the rules can run on, and how its paths map back to the file."""

    catalog: Catalog
    positions: Positions
    changed_products: frozenset[int]  # original indices
    changed_product_ids: frozenset[str]

    def original_path(self, path: Path) -> Path:
        return _to_original(path, self.positions)

    def artefact(self, path: Path) -> bool:
        """Whether a rule problem at `path` (of `catalog`) may come from what was left out."""
        original = self.original_path(path)
        if len(original) >= 2 and original[0] == "products" and original[1] in self.changed_products:
            return True
        include = self._include(path)
        return include is not None and include.product_id in self.changed_product_ids

    def _include(self, path: Path) -> PackageInclude | None:
        match path:
            case ("products", int(p), "options", int(o), "packageIncludes", int(g), "includes", int(i), *_):
                return self.catalog.products[p].options[o].package_includes[g].includes[i]
        return None


def salvage(data: dict[str, Any]) -> Salvaged | None:
    """The products of `data` the schema accepts once the parts it refuses are left out (None
    if nothing sensible remains)."""
    work: dict[str, Any] = {"supplier": _STAND_IN_SUPPLIER}
    if "products" in data:
        work["products"] = copy.deepcopy(data["products"])
    changed: set[int] = set()
    for _ in range(_MAX_ROUNDS):
        compact, positions = _compact(work)
        try:
            catalog = Catalog.model_validate(compact)
        except ValidationError as exc:
            targets: dict[Path, bool] = {}
            for error in exc.errors():
                target = _reachable(work, _to_original(tuple(error["loc"]), positions))
                targets[target] = targets.get(target, False) or error["type"] != "extra_forbidden"
            if () in targets:
                return None
            _leave_out(work, targets, changed)
            continue
        products = data.get("products")
        ids = frozenset(
            product["id"]
            for index, product in enumerate(products if isinstance(products, list) else [])
            if index in changed and isinstance(product, dict) and isinstance(product.get("id"), str)
        )
        return Salvaged(catalog, positions, frozenset(changed), ids)
    return None


def _compact(work: dict[str, Any]) -> tuple[Any, Positions]:
    positions: Positions = {}

    def build(value: Any, path: Path) -> Any:
        if isinstance(value, dict):
            return {key: build(item, (*path, key)) for key, item in value.items()}
        if isinstance(value, list):
            kept = [index for index, item in enumerate(value) if item is not _GONE]
            positions[path] = kept
            return [build(value[index], (*path, index)) for index in kept]
        return value

    return build(work, ()), positions


def _reachable(work: Any, path: Path) -> Path:
    """The longest prefix of an error's path that names something in the file: the bad value
    itself, the object that misses a required field, or the value under a type tag."""
    node = work
    for depth, part in enumerate(path):
        in_dict = isinstance(node, dict) and isinstance(part, str) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (in_dict or in_list):
            return path[:depth]
        node = node[part]
    return path


def _leave_out(work: dict[str, Any], targets: dict[Path, bool], changed: set[int]) -> None:
    done: list[Path] = []
    for target in sorted(targets, key=len):  # an ancestor first: its descendants go with it
        if any(target[: len(ancestor)] == ancestor for ancestor in done):
            continue
        parent: Any = work
        for part in target[:-1]:
            parent = parent[part]
        last = target[-1]
        if isinstance(parent, list) and isinstance(last, int):
            parent[last] = _GONE
        else:
            del parent[last]
        done.append(target)
        if targets[target] and len(target) >= 2 and target[0] == "products" and isinstance(target[1], int):
            changed.add(target[1])
