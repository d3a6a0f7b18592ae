"""Differences between two JSON documents as operations on JSON Pointer paths.

Each operation is `{op, path, was, value}`: `replace` (both given), `add` (`was` null) or
`remove` (`value` null). Objects are compared key by key, arrays of equal length item by
item; an array whose length changed is replaced whole (what a reseller needs is the new list,
not an edit script). `apply_diff(old, diff(old, new)) == new` always holds.
"""

from __future__ import annotations

import copy
from typing import Any

JSONValue = Any


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def diff(old: JSONValue, new: JSONValue, path: str = "") -> list[dict[str, JSONValue]]:
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, JSONValue]] = []
        for key in old:
            child = f"{path}/{_escape(key)}"
            if key not in new:
                ops.append({"op": "remove", "path": child, "was": old[key], "value": None})
            else:
                ops.extend(diff(old[key], new[key], child))
        for key in new:
            if key not in old:
                ops.append({"op": "add", "path": f"{path}/{_escape(key)}", "was": None, "value": new[key]})
        return ops
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        ops = []
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            ops.extend(diff(before, after, f"{path}/{index}"))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": path, "was": old, "value": new}]


def apply_diff(document: JSONValue, operations: list[dict[str, JSONValue]]) -> JSONValue:
    result = copy.deepcopy(document)
    for operation in operations:
        tokens = [_unescape(t) for t in operation["path"].split("/")[1:]]
        if not tokens:
            result = copy.deepcopy(operation["value"])
            continue
        parent = result
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        if operation["op"] == "remove":
            del parent[last]
        elif isinstance(parent, list):
            parent[int(last)] = copy.deepcopy(operation["value"])
        else:
            parent[last] = copy.deepcopy(operation["value"])
    return result
