from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.diff import apply_diff, diff

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


def test_booking_confirmation_diff() -> None:
    before = {
        "status": "ON_HOLD",
        "utcExpiresAt": "2026-06-01T08:30:00Z",
        "unitItems": [{"status": "ON_HOLD"}],
    }
    after = {"status": "CONFIRMED", "utcExpiresAt": None, "unitItems": [{"status": "CONFIRMED"}], "x/y": 1}
    assert diff(before, after) == [
        {"op": "replace", "path": "/status", "was": "ON_HOLD", "value": "CONFIRMED"},
        {"op": "replace", "path": "/utcExpiresAt", "was": "2026-06-01T08:30:00Z", "value": None},
        {"op": "replace", "path": "/unitItems/0/status", "was": "ON_HOLD", "value": "CONFIRMED"},
        {"op": "add", "path": "/x~1y", "was": None, "value": 1},
    ]
    assert diff(after, after) == []
    assert diff({"a": [1, 2]}, {"a": [1]}) == [{"op": "replace", "path": "/a", "was": [1, 2], "value": [1]}]
    assert diff({"a": 1}, {}) == [{"op": "remove", "path": "/a", "was": 1, "value": None}]
    assert diff({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "was": 1, "value": True}]


@given(documents, documents)
def test_applying_the_diff_to_the_old_document_gives_the_new_one(old: Any, new: Any) -> None:
    assert apply_diff(old, diff(old, new)) == new


@given(documents)
def test_no_difference_no_operations(document: Any) -> None:
    assert diff(document, document) == []
