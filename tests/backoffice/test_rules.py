"""The back office's rules, without I/O: who counts as a guest, when a slot has departed, and
which actions each booking status offers."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from berth.domain.bookings import BookingStatus, people_of
from berth.domain.slots import slots_between
from berth.http.admin.backoffice import ACTIONS, Action, departed
from tests.every_capability import every_capability_catalog

MONDAY = date(2026, 6, 1)


def test_guests_are_people_and_every_ticket_brings_at_least_one() -> None:
    catalog = every_capability_catalog()
    harbour = catalog.products[[p.id for p in catalog.products].index("harbour-cruise")].default_option
    museum = catalog.products[[p.id for p in catalog.products].index("tower-of-stories")].default_option
    # An infant takes no place, but is someone to expect at the pier.
    assert people_of(harbour, ["adult", "adult", "child", "infant"]) == 4
    # A family ticket is one ticket for four people.
    assert people_of(museum, ["family", "child"]) == 5
    assert people_of(museum, []) == 0


def test_a_departure_has_departed_once_it_started_and_a_day_once_it_closed() -> None:
    catalog = every_capability_catalog()
    cruise = next(p for p in catalog.products if p.id == "thames-sightseeing")
    ten, *_ = slots_between(cruise, cruise.default_option, MONDAY, MONDAY)
    assert ten.id == "2026-06-01T10:00:00+01:00"
    assert not departed(ten, ten.start - timedelta(seconds=1))
    assert departed(ten, ten.start) and departed(ten, ten.start + timedelta(hours=1))
    museum = next(p for p in catalog.products if p.id == "tower-of-stories")
    (day,) = slots_between(
        museum, museum.default_option, MONDAY + timedelta(days=1), MONDAY + timedelta(days=1)
    )
    closing = datetime(2026, 6, 2, 16, 30, tzinfo=UTC)  # 17:30 in London
    assert not departed(day, closing - timedelta(minutes=1))  # open all day until closing time
    assert departed(day, closing)


def test_one_set_of_actions_for_each_booking_status() -> None:
    assert ACTIONS == {
        BookingStatus.ON_HOLD: (Action.RELEASE,),
        BookingStatus.PENDING: (Action.ACCEPT, Action.REJECT),
        BookingStatus.CONFIRMED: (Action.REDEEM, Action.CANCEL),
        BookingStatus.REDEEMED: (),
        BookingStatus.CANCELLED: (),
        BookingStatus.EXPIRED: (),
        BookingStatus.REJECTED: (),
    }
