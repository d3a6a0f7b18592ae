"""The gate's pure rules about days and boarding: another day's ticket, a booking partly
through the gate, and that booking with its other tickets cancelled."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.bookings import Booking, BookingStatus, Contact, UnitItem
from berth.domain.checkin import another_day, boarded_only, not_through, partly_through, with_admitted

AT = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)


def party(guests: int, *, on: date | None = date(2026, 6, 2)) -> Booking:
    return Booking(
        id="b1", uuid="u1", connection_id="c1", test_mode=False, status=BookingStatus.CONFIRMED,
        product_id="p", option_id="o", availability_id="2026-06-02T10:00:00+01:00" if on else None,
        slot_start=AT if on else None, local_date=on, pax=guests, reseller_reference=None,
        supplier_reference="K7P2XQ9M", notes=None, contact=Contact(),
        unit_items=tuple(UnitItem(f"t{n}", "adult", f"T{n:09d}") for n in range(guests)),
        currency="EUR", freesale=on is None, request_fingerprint="", created_at=AT - timedelta(days=3),
    )  # fmt: skip


def test_another_day_is_the_departures_date_against_today() -> None:
    assert another_day(party(1), date(2026, 6, 1)) is True
    assert another_day(party(1), date(2026, 6, 2)) is False
    assert another_day(party(1, on=None), date(2026, 6, 1)) is False  # open-dated: any day
    assert another_day(party(1), None) is False  # its product left the catalogue: no day known


@given(guests=st.integers(1, 6), admitted=st.data())
def test_boarding_and_the_tickets_not_through(guests: int, admitted: st.DataObject) -> None:
    booking = party(guests)
    through = admitted.draw(st.sets(st.sampled_from([i.uuid for i in booking.unit_items])))
    boarded = with_admitted(booking, through, AT) if through else booking
    waiting = [i.uuid for i in not_through(boarded)]
    assert sorted(waiting) == sorted({i.uuid for i in booking.unit_items} - through)
    assert partly_through(boarded) == (0 < len(through) < guests)
    if partly_through(boarded):
        kept = boarded_only(boarded, AT + timedelta(hours=1))
        assert {i.uuid for i in kept.unit_items} == through
        assert kept.status is BookingStatus.REDEEMED and kept.redeemed_at == AT
        assert kept.updated_at == AT + timedelta(hours=1)


def test_a_booking_redeemed_or_cancelled_is_not_partly_through() -> None:
    booking = with_admitted(party(2), {"t0"}, AT)
    assert partly_through(booking)
    assert not partly_through(replace(booking, status=BookingStatus.CANCELLED))
    assert not partly_through(with_admitted(booking, {"t1"}, AT))  # everyone through: REDEEMED
