"""The booking core names no capability (issue 50, docs/architecture.md "The booking core and
its extension points"): no capability id and no capability's field name in
src/berth/services/bookings/ outside comments and docstrings (the rule: tests/core_words.py),
but for the availability service's interval hooks of the capacity policy, named here."""

from __future__ import annotations

from pathlib import Path

from tests.core_words import capability_lines, capability_words

CORE = Path(__file__).resolve().parents[1] / "src" / "berth" / "services" / "bookings"

# The words the core keeps, each for a reason of its own (docs/decisions.md "The booking core
# names no capability"): the availability service asks the option's policy how long a check's
# rental lasts (`duration`) and the interval it makes of a start slot (`stretch`); those hooks
# are typed with the catalogue's RentalDuration and refuse a duration on an option that has none.
KEPT = {
    "capacity.py": [
        "from berth.domain.catalog import Catalog, Option, Product, RentalDuration",
        "def duration(self, option: Option, wanted: str | None, kept: str | None) -> RentalDuration | None:",
        'raise BadRequest(f"Option {option.id!r} is not a rental option: rentalDurationId is not accepted")',
        "def stretch(self, slot: Slot, duration: RentalDuration | None) -> Slot:",
    ]
}


def test_the_booking_core_names_no_capability() -> None:
    found = {path: [line for _, line in lines] for path, lines in capability_words(CORE).items()}
    assert found == KEPT


def test_the_rule_sees_ids_fields_and_stems_but_not_comments_or_docstrings() -> None:
    source = '''"""octo/rentals: rental_duration_id in a docstring."""
# resource_allocations in a comment
CAPABILITY = "octo/resources"
x = booking.rental_duration_id
policy.stretch(slot, rental)
sent = {"rentalDurationId": 1}
members = package_members(ids)
given = booking.includes
plain = booking.pax  # octo/packages
'''
    assert [number for number, _ in capability_lines(source)] == [3, 4, 5, 6, 7, 8]
