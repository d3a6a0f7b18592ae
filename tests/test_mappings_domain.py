"""The mapping rules without I/O: upload planning, the null rules, matching, notification."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.mappings import (
    MappedRows,
    MappingRow,
    MappingUpload,
    apply_upload,
    needs_notification,
    new_row,
    plan_upload,
)

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
LATER = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def stored(reference: str, position: int = 0, **fields: object) -> MappingRow:
    row = new_row(f"id-{reference}", "connection", position, MappingUpload(reference), NOW)
    return replace(row, **fields)  # type: ignore[arg-type]


def test_null_rules_and_completeness() -> None:
    row = stored("R", product_id="p", option_id="o", unit_id="u")
    assert row.mapped and row.resolution == ("p", "o", None)  # a unit is not required by default
    product_level = replace(row, option_required=False)
    assert product_level.resolution == ("p", None, None)
    assert replace(row, unit_required=True).resolution == ("p", "o", "u")
    assert not replace(row, unit_required=True, unit_id=None).mapped
    assert not replace(row, option_id=None).mapped
    assert not replace(row, product_id=None).mapped


def test_which_rows_belong_to_an_object() -> None:
    exact = stored("EXACT", product_id="p", option_id="o")
    whole_product = stored("WHOLE", product_id="p", option_id="o", option_required=False)
    other_option = stored("OTHER", product_id="p", option_id="x")
    waiting = stored("WAITING", product_id="p")  # an option is required and missing
    rows = MappedRows((exact, whole_product, other_option, waiting))
    assert [r.reseller_reference for r in rows.matching("p", "o")] == ["EXACT", "WHOLE"]
    assert rows.matching("q", "o") == []
    assert hash(rows) == hash(MappedRows((exact, whole_product, other_option, waiting)))


def test_notification_only_when_the_resolution_changes() -> None:
    waiting = stored("R", webhook_url="https://r.example/m")
    done = replace(waiting, product_id="p", option_id="o")
    assert needs_notification(waiting, done)
    assert not needs_notification(done, done)
    assert needs_notification(done, replace(done, option_id="o2"))
    assert not needs_notification(waiting, replace(done, webhook_url=None))  # nowhere to send it
    # A unit the row does not require is not part of what the reseller is told.
    assert not needs_notification(done, replace(done, unit_id="u"))


def test_an_upload_never_writes_the_suppliers_side() -> None:
    row = stored("R", product_id="p", option_id="o", unit_id="u", mapped_at=NOW)
    changed = apply_upload(row, 3, MappingUpload("R", "CONFIRMED", option_required=False), LATER)
    assert (changed.product_id, changed.option_id, changed.unit_id, changed.mapped_at) == ("p", "o", "u", NOW)
    assert (changed.position, changed.reseller_status, changed.option_required) == (3, "CONFIRMED", False)
    assert changed.updated_at == LATER
    moved = apply_upload(row, 5, MappingUpload("R"), LATER)
    assert moved.position == 5 and moved.updated_at == NOW  # a move alone is not a change


references = st.lists(st.sampled_from("ABCDEFGH"), unique=True, max_size=8)


@given(before=references, after=references, status=st.sampled_from([None, "CONFIRMED"]))
def test_plan_turns_any_stored_set_into_the_uploaded_one(
    before: list[str], after: list[str], status: str | None
) -> None:
    existing = [stored(ref, position) for position, ref in enumerate(before)]
    uploads = [MappingUpload(ref, status) for ref in after]
    plan = plan_upload(existing, uploads)
    kept = {row.reseller_reference: row for row in existing if row not in plan.removals}
    for row, position, upload in plan.updates:
        kept[row.reseller_reference] = apply_upload(row, position, upload, LATER)
    for position, upload in plan.inserts:
        kept[upload.reseller_reference] = new_row("new", "connection", position, upload, LATER)
    result = sorted(kept.values(), key=lambda r: r.position)
    assert [r.reseller_reference for r in result] == after
    assert all(r.reseller_status == status for r in result)
    assert {r.reseller_reference for r in plan.removals} == set(before) - set(after)
    assert plan_upload(result, uploads).empty  # sending the same set again changes nothing
