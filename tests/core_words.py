"""The capability words of a piece of code (issue 50): the lines of the booking core that name
a capability, outside comments and docstrings.

A line names a capability when one of its tokens is
- a string holding a capability id (the values of `berth.capabilities.ids`, e.g. "octo/rentals")
  or a request field a capability adds to reserve, update or confirm (`REQUEST_FIELDS`);
- a name that is, or contains, a field name of a capability (`FIELD_NAMES`, `FIELD_STEMS`): the
  booking's fields octo/rentals, octo/resources and octo/packages own (`rental_duration_id`,
  `resource_allocations`, `package_booking_id`, `package_include_id`), the option's
  (`rental_durations`, `resource_groups`, `package_includes`, `includes`), the request's
  (`rental_duration_id`, `resource_ids`, `package_bookings`) and their types (`RentalDuration`,
  `Allocation`, `PackageBookingInput`): every name with `rental`, `resource`, `package` or
  `allocation` in it, and the few that carry none of those stems.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from berth.capabilities import ids

CAPABILITY_IDS = tuple(
    value for name, value in vars(ids).items() if name.isupper() and isinstance(value, str)
)
# The OCTO names of the request fields octo/rentals, octo/resources and octo/packages add.
REQUEST_FIELDS = ("rentalDurationId", "resourceAllocations", "resourceId", "packageBookings", "includeId")
# Names (compared lowercased) that contain a capability's field stem.
FIELD_STEMS = ("rental", "resource", "package", "allocation")
# Capability field names without one of the stems.
FIELD_NAMES = ("includes", "include_id", "include")


def _docstrings(tokens: list[tokenize.TokenInfo]) -> set[int]:
    """Indexes of the string tokens that are a statement of their own (docstrings)."""
    found: set[int] = set()
    starts_line = True
    for index, token in enumerate(tokens):
        if token.type == tokenize.STRING and starts_line:
            rest = next(
                (t for t in tokens[index + 1 :] if t.type not in (tokenize.NL, tokenize.COMMENT)), None
            )
            if rest is None or rest.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                found.add(index)
        if token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            starts_line = True
        elif token.type not in (tokenize.NL, tokenize.COMMENT):
            starts_line = False
    return found


def _names_capability(token: tokenize.TokenInfo) -> bool:
    if token.type == tokenize.NAME:
        lowered = token.string.lower()
        return lowered in FIELD_NAMES or any(stem in lowered for stem in FIELD_STEMS)
    if token.type == tokenize.STRING:
        return any(word in token.string for word in (*CAPABILITY_IDS, *REQUEST_FIELDS))
    return False


def capability_lines(source: str) -> list[tuple[int, str]]:
    """(line number, line) of each line of `source` that names a capability."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    docstrings = _docstrings(tokens)
    lines = source.splitlines()
    numbers = sorted(
        {
            token.start[0]
            for index, token in enumerate(tokens)
            if index not in docstrings and _names_capability(token)
        }
    )
    return [(number, lines[number - 1].strip()) for number in numbers]


def capability_words(folder: Path) -> dict[str, list[tuple[int, str]]]:
    """Each Python file of `folder` (and below) with the lines of it that name a capability."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        lines = capability_lines(path.read_text(encoding="utf-8"))
        if lines:
            found[path.relative_to(folder).as_posix()] = lines
    return found
