"""The catalogue's history: every saved catalogue is a version, with who saved it, through which
door, a short summary and the whole document; and what differs between two versions, in words
and as a YAML diff."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from berth.domain.catalog_changes import CatalogChanges, Change, ItemChange
from berth.domain.errors import OctoError

SUMMARY_LENGTH = 300


class Door(StrEnum):
    """How a catalogue came in."""

    EDITOR = "editor"  # the back office's forms
    API = "api"  # PUT /admin/api/catalog
    CLI = "cli"  # berth catalog import / restore
    SETUP = "setup"  # the demo loader, or the catalogue as it was before the history began


@dataclass(frozen=True)
class CatalogVersion:
    version: int
    created_at: datetime
    actor: str
    actor_role: str
    door: Door
    summary: str


_CAPITAL = re.compile(r"(?<!^)(?=[A-Z])")
_VERBS = {Change.ADDED: "Added", Change.CHANGED: "Changed", Change.REMOVED: "Removed"}


def field_words(key: str) -> str:
    """`cancellationCutoffAmount` -> `cancellation cutoff amount`."""
    return _CAPITAL.sub(" ", key).lower()


def change_words(item: ItemChange) -> str:
    """`Changed unit walk/DEFAULT/adult: prices EUR 25.00 -> 27.00` - one line a person reads."""
    fields = f": {', '.join(field_words(f) for f in item.fields)}" if item.fields else ""
    values = f" ({'; '.join(item.values)})" if item.values else ""
    return f"{_VERBS[item.change]} {item.kind} {item.name}{fields}{values}"


def changes_words(changes: CatalogChanges) -> list[str]:
    lines = ["Changed the supplier"] if changes.supplier_changed else []
    lines.extend(change_words(item) for item in changes.items)
    return lines


def summary_of(changes: CatalogChanges, prefix: str = "") -> str:
    """A version's summary: what it changed, cut to SUMMARY_LENGTH characters."""
    words = "; ".join(changes_words(changes)) or "No change"
    text = f"{prefix}{words}"
    return text if len(text) <= SUMMARY_LENGTH else text[: SUMMARY_LENGTH - 1] + "\N{HORIZONTAL ELLIPSIS}"


def yaml_diff(before: str, after: str, before_name: str, after_name: str) -> list[str]:
    """The unified diff of two catalogue documents, line by line."""
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), before_name, after_name, n=3
        )
    ]


class CatalogConflict(OctoError):
    """A save based on a version that is no longer the current one: someone saved in between."""

    code = "CONFLICT"

    def __init__(
        self, base_version: int, current: CatalogVersion | None, current_version: int, since: Iterable[str]
    ) -> None:
        by = (
            f" by {current.actor} ({current.door.value}) at {current.created_at.isoformat()}"
            if current
            else ""
        )
        self.since = list(since)
        super().__init__(
            f"The catalogue changed since version {base_version}, which this save was based on: "
            f"version {current_version} was saved{by}. Nothing was saved; start again from version "
            f"{current_version}",
            baseVersion=base_version,
            currentVersion=current_version,
            changedSince=self.since,
        )
        self.base_version = base_version
        self.current = current
        self.current_version = current_version
