from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.catalog import (
    AvailabilityType,
    CapacityOverride,
    DeliveryFormat,
    DeliveryMethod,
    DurationUnit,
    OpeningHours,
    Option,
    Product,
    Schedule,
    Unit,
    UnitType,
    Weekday,
)
from berth.domain.slots import Slot, cancellation_cutoff, opening_hours_on, slot_for_id, slots_between
from berth.domain.times import add_duration, format_local, format_utc, local_datetime

LONDON = ZoneInfo("Europe/London")
SPRING = date(2026, 3, 29)  # Europe/London: 01:00 GMT -> 02:00 BST
AUTUMN = date(2026, 10, 25)  # Europe/London: 02:00 BST -> 01:00 GMT
ADULT = Unit(id="adult", internal_name="Adult", type=UnitType.ADULT)


def make_option(
    *schedules: Schedule,
    duration_minutes: int = 60,
    sales_cutoff_minutes: int = 0,
    cancellation_cutoff_amount: int = 0,
    cancellation_cutoff_unit: DurationUnit = DurationUnit.hour,
    closed_dates: tuple[date, ...] = (),
    capacity_overrides: tuple[CapacityOverride, ...] = (),
) -> Option:
    return Option(
        id="main",
        internal_name="Main",
        units=(ADULT,),
        duration_minutes=duration_minutes,
        sales_cutoff_minutes=sales_cutoff_minutes,
        cancellation_cutoff_amount=cancellation_cutoff_amount,
        cancellation_cutoff_unit=cancellation_cutoff_unit,
        schedules=schedules,
        closed_dates=closed_dates,
        capacity_overrides=capacity_overrides,
    )


def make_product(
    option: Option,
    availability_type: AvailabilityType = AvailabilityType.START_TIME,
    time_zone: str = "Europe/London",
) -> Product:
    return Product(
        id="tour",
        internal_name="Tour",
        time_zone=time_zone,
        availability_type=availability_type,
        delivery_formats=(DeliveryFormat.QRCODE,),
        delivery_methods=(DeliveryMethod.TICKET,),
        options=(option,),
    )


def departures(*start_times: str, capacity: int | None = 10, **limits: date) -> Schedule:
    return Schedule(
        start_times=start_times,
        capacity=capacity,
        valid_from=limits.get("valid_from"),
        valid_until=limits.get("valid_until"),
    )


def hours(*periods: tuple[str, str], capacity: int | None = 100) -> Schedule:
    return Schedule(
        opening_hours=tuple(OpeningHours(opens=opens, closes=closes) for opens, closes in periods),
        capacity=capacity,
    )


def day_slots(product: Product, day: date) -> list[Slot]:
    return slots_between(product, product.options[0], day, day)


def ids(slots: list[Slot]) -> list[str]:
    return [s.id for s in slots]


# --- times ------------------------------------------------------------------------------------


def test_format_local_and_utc() -> None:
    moment = datetime(2026, 7, 1, 9, 5, 7, 123456, tzinfo=LONDON)
    assert format_local(moment) == "2026-07-01T09:05:07+01:00"
    assert format_utc(moment) == "2026-07-01T08:05:07Z"
    assert format_local(datetime(2026, 1, 1, 0, 0, tzinfo=UTC)) == "2026-01-01T00:00:00+00:00"
    assert format_local(datetime(2026, 1, 1, 0, 0, tzinfo=ZoneInfo("Asia/Kolkata"))) == (
        "2026-01-01T00:00:00+05:30"
    )
    with pytest.raises(ValueError):
        format_local(datetime(2026, 1, 1))
    with pytest.raises(ValueError):
        format_utc(datetime(2026, 1, 1))


def test_local_datetime_on_daylight_saving_days() -> None:
    # The gap: 01:30 does not exist on the spring day and moves forward by the hour.
    assert format_local(local_datetime(SPRING, "01:30", LONDON)) == "2026-03-29T02:30:00+01:00"
    assert format_local(local_datetime(SPRING, "00:59", LONDON)) == "2026-03-29T00:59:00+00:00"
    assert format_local(local_datetime(SPRING, "02:00", LONDON)) == "2026-03-29T02:00:00+01:00"
    # The fold: 01:30 happens twice on the autumn day; the first (BST) one is taken.
    assert format_local(local_datetime(AUTUMN, "01:30", LONDON)) == "2026-10-25T01:30:00+01:00"
    assert format_utc(local_datetime(AUTUMN, "01:30", LONDON)) == "2026-10-25T00:30:00Z"
    assert format_local(local_datetime(AUTUMN, "02:00", LONDON)) == "2026-10-25T02:00:00+00:00"


def test_add_duration() -> None:
    assert add_duration(90, DurationUnit.minute) == timedelta(minutes=90)
    assert add_duration(2, DurationUnit.hour) == timedelta(hours=2)
    assert add_duration(3, DurationUnit.day) == timedelta(days=3)
    assert add_duration(0, DurationUnit.day) == timedelta(0)


# --- schedules --------------------------------------------------------------------------------


def test_weekdays_and_date_range_select_the_days() -> None:
    schedule = Schedule(
        valid_from=date(2026, 6, 1),
        valid_until=date(2026, 6, 14),
        weekdays=(Weekday.MON, Weekday.WED),
        start_times=("10:00",),
        capacity=10,
    )
    product = make_product(make_option(schedule))
    slots = slots_between(product, product.options[0], date(2026, 5, 25), date(2026, 6, 30))
    assert ids(slots) == [
        "2026-06-01T10:00:00+01:00",
        "2026-06-03T10:00:00+01:00",
        "2026-06-08T10:00:00+01:00",
        "2026-06-10T10:00:00+01:00",
    ]
    assert [s.local_date for s in slots] == [date(2026, 6, d) for d in (1, 3, 8, 10)]
    assert slots_between(product, product.options[0], date(2026, 6, 2), date(2026, 6, 2)) == []
    assert slots_between(product, product.options[0], date(2026, 6, 3), date(2026, 6, 1)) == []


def test_a_start_time_slot() -> None:
    product = make_product(make_option(departures("14:15", capacity=12), duration_minutes=150))
    (slot,) = day_slots(product, date(2026, 7, 1))
    assert slot.id == "2026-07-01T14:15:00+01:00"
    assert slot.start == datetime(2026, 7, 1, 14, 15, tzinfo=LONDON)
    assert format_local(slot.end) == "2026-07-01T16:45:00+01:00"
    assert (slot.all_day, slot.opening_hours, slot.capacity, slot.closed) == (False, (), 12, False)
    assert slot.cutoff_utc == datetime(2026, 7, 1, 13, 15, tzinfo=UTC)
    assert slot.cutoff_utc.tzinfo is UTC


def test_schedules_merge_and_the_first_wins_on_a_shared_start() -> None:
    product = make_product(
        make_option(
            departures("16:00", "14:00", capacity=5),
            departures("14:00", "09:00", capacity=9),
        )
    )
    slots = day_slots(product, date(2026, 7, 1))
    assert [(s.start.strftime("%H:%M"), s.capacity) for s in slots] == [
        ("09:00", 9),
        ("14:00", 5),
        ("16:00", 5),
    ]


def test_a_schedule_outside_its_dates_does_not_claim_a_shared_start() -> None:
    product = make_product(
        make_option(
            departures("10:00", capacity=5, valid_until=date(2026, 6, 30)),
            departures("10:00", capacity=9),
        )
    )
    assert [s.capacity for s in day_slots(product, date(2026, 6, 30))] == [5]
    assert [s.capacity for s in day_slots(product, date(2026, 7, 1))] == [9]


def test_closed_dates_are_listed_but_flagged() -> None:
    product = make_product(make_option(departures("10:00", "15:00"), closed_dates=(date(2026, 7, 2),)))
    slots = slots_between(product, product.options[0], date(2026, 7, 1), date(2026, 7, 3))
    assert [(s.local_date.day, s.closed) for s in slots] == [
        (1, False),
        (1, False),
        (2, True),
        (2, True),
        (3, False),
        (3, False),
    ]


def test_capacity_overrides_by_date_and_by_start_time() -> None:
    day, other_day = date(2026, 7, 2), date(2026, 7, 3)
    product = make_product(
        make_option(
            departures("10:00", "14:00", "18:00", capacity=10),
            capacity_overrides=(
                CapacityOverride(date=day, start_time="14:00", capacity=7),
                CapacityOverride(date=day, capacity=3),
                CapacityOverride(date=other_day, start_time="10:00", capacity=None),
                CapacityOverride(date=other_day, start_time="18:00", capacity=0),
            ),
        )
    )
    assert [s.capacity for s in day_slots(product, date(2026, 7, 1))] == [10, 10, 10]
    # The start-time override beats the whole-date one, whatever their order.
    assert [s.capacity for s in day_slots(product, day)] == [3, 7, 3]
    # capacity null: that slot is freesale.
    assert [s.capacity for s in day_slots(product, other_day)] == [None, 10, 0]


def test_a_freesale_schedule_and_a_limiting_override() -> None:
    product = make_product(
        make_option(
            departures("10:00", capacity=None),
            capacity_overrides=(CapacityOverride(date=date(2026, 7, 2), capacity=4),),
        )
    )
    slots = slots_between(product, product.options[0], date(2026, 7, 1), date(2026, 7, 2))
    assert [s.capacity for s in slots] == [None, 4]


# --- OPENING_HOURS ----------------------------------------------------------------------------


def test_an_opening_hours_day() -> None:
    product = make_product(
        make_option(hours(("09:30", "12:00"), ("13:00", "17:30"), capacity=50), sales_cutoff_minutes=60),
        AvailabilityType.OPENING_HOURS,
    )
    (slot,) = day_slots(product, date(2026, 7, 1))
    assert slot.id == "2026-07-01T00:00:00+01:00"
    assert format_local(slot.end) == "2026-07-02T00:00:00+01:00"
    assert slot.all_day
    assert slot.opening_hours == (("09:30", "12:00"), ("13:00", "17:30"))
    assert slot.capacity == 50
    # The sales cutoff counts back from the closing time, 17:30 BST = 16:30 UTC.
    assert format_utc(slot.cutoff_utc) == "2026-07-01T15:30:00Z"


def test_the_first_applying_opening_hours_schedule_gives_the_day() -> None:
    weekend = Schedule(
        weekdays=(Weekday.SAT, Weekday.SUN),
        opening_hours=(OpeningHours(opens="10:00", closes="16:00"),),
        capacity=20,
    )
    no_hours = Schedule(capacity=1)
    product = make_product(
        make_option(no_hours, weekend, hours(("09:00", "18:00"))), AvailabilityType.OPENING_HOURS
    )
    saturday, monday = slots_between(product, product.options[0], date(2026, 7, 4), date(2026, 7, 6))[::2]
    assert (saturday.local_date, saturday.opening_hours, saturday.capacity) == (
        date(2026, 7, 4),
        (("10:00", "16:00"),),
        20,
    )
    assert (monday.local_date, monday.opening_hours, monday.capacity) == (
        date(2026, 7, 6),
        (("09:00", "18:00"),),
        100,
    )


def test_opening_hours_days_take_whole_date_overrides_and_closures() -> None:
    day = date(2026, 7, 2)
    product = make_product(
        make_option(
            hours(("09:00", "18:00"), capacity=100),
            closed_dates=(date(2026, 7, 3),),
            capacity_overrides=(
                CapacityOverride(date=day, start_time="00:00", capacity=1),
                CapacityOverride(date=day, capacity=40),
            ),
        ),
        AvailabilityType.OPENING_HOURS,
    )
    slots = slots_between(product, product.options[0], date(2026, 7, 1), date(2026, 7, 3))
    assert [(s.capacity, s.closed) for s in slots] == [(100, False), (40, False), (100, True)]


# --- daylight saving: Europe/London -----------------------------------------------------------


def test_start_times_on_the_spring_day() -> None:
    product = make_product(
        make_option(
            departures("00:30", "01:30", "03:00", "10:00"), duration_minutes=90, sales_cutoff_minutes=30
        )
    )
    slots = day_slots(product, SPRING)
    assert ids(slots) == [
        "2026-03-29T00:30:00+00:00",
        "2026-03-29T02:30:00+01:00",  # 01:30 does not exist: moved forward by the gap
        "2026-03-29T03:00:00+01:00",
        "2026-03-29T10:00:00+01:00",
    ]
    assert [format_utc(s.start) for s in slots] == [
        "2026-03-29T00:30:00Z",
        "2026-03-29T01:30:00Z",
        "2026-03-29T02:00:00Z",
        "2026-03-29T09:00:00Z",
    ]
    # 90 elapsed minutes; the first departure crosses the change.
    assert [format_local(s.end) for s in slots] == [
        "2026-03-29T03:00:00+01:00",
        "2026-03-29T04:00:00+01:00",
        "2026-03-29T04:30:00+01:00",
        "2026-03-29T11:30:00+01:00",
    ]
    assert [format_utc(s.cutoff_utc) for s in slots] == [
        "2026-03-29T00:00:00Z",
        "2026-03-29T01:00:00Z",
        "2026-03-29T01:30:00Z",
        "2026-03-29T08:30:00Z",
    ]


def test_a_start_time_in_the_gap_meets_a_real_one() -> None:
    # The departure that really is at 02:30 keeps the slot, even from a later schedule.
    both = make_product(make_option(departures("01:30", capacity=4), departures("02:30", capacity=8)))
    assert [(s.id, s.capacity) for s in day_slots(both, SPRING)] == [("2026-03-29T02:30:00+01:00", 8)]
    # Overrides address the slot's actual start time: 02:30, not the 01:30 that never came.
    alone = make_product(
        make_option(
            departures("01:30", capacity=4),
            capacity_overrides=(
                CapacityOverride(date=SPRING, start_time="01:30", capacity=1),
                CapacityOverride(date=SPRING, start_time="02:30", capacity=2),
            ),
        )
    )
    assert [(s.id, s.capacity) for s in day_slots(alone, SPRING)] == [("2026-03-29T02:30:00+01:00", 2)]
    # On other days 01:30 is an ordinary time.
    assert [(s.id, s.capacity) for s in day_slots(alone, date(2026, 3, 28))] == [
        ("2026-03-28T01:30:00+00:00", 4)
    ]
    assert ids(day_slots(alone, date(2026, 3, 30))) == ["2026-03-30T01:30:00+01:00"]


def test_start_times_on_the_autumn_day() -> None:
    product = make_product(make_option(departures("00:30", "01:30", "02:30", "10:00"), duration_minutes=90))
    slots = day_slots(product, AUTUMN)
    assert ids(slots) == [
        "2026-10-25T00:30:00+01:00",
        "2026-10-25T01:30:00+01:00",  # the first 01:30
        "2026-10-25T02:30:00+00:00",
        "2026-10-25T10:00:00+00:00",
    ]
    assert [format_utc(s.start) for s in slots] == [
        "2026-10-24T23:30:00Z",
        "2026-10-25T00:30:00Z",
        "2026-10-25T02:30:00Z",
        "2026-10-25T10:00:00Z",
    ]
    assert [format_local(s.end) for s in slots] == [
        "2026-10-25T01:00:00+00:00",  # the second 01:00
        "2026-10-25T02:00:00+00:00",
        "2026-10-25T04:00:00+00:00",
        "2026-10-25T11:30:00+00:00",
    ]
    assert all(s.end.astimezone(UTC) - s.start.astimezone(UTC) == timedelta(minutes=90) for s in slots)


def test_opening_hours_days_of_23_and_25_hours() -> None:
    product = make_product(
        make_option(hours(("09:30", "17:30")), sales_cutoff_minutes=30), AvailabilityType.OPENING_HOURS
    )
    slots = slots_between(product, product.options[0], date(2026, 3, 28), date(2026, 3, 30))
    assert ids(slots) == [
        "2026-03-28T00:00:00+00:00",
        "2026-03-29T00:00:00+00:00",
        "2026-03-30T00:00:00+01:00",
    ]
    assert [s.end.astimezone(UTC) - s.start.astimezone(UTC) for s in slots] == [
        timedelta(hours=24),
        timedelta(hours=23),
        timedelta(hours=24),
    ]
    assert [format_local(s.end) for s in slots] == [
        "2026-03-29T00:00:00+00:00",
        "2026-03-30T00:00:00+01:00",
        "2026-03-31T00:00:00+01:00",
    ]
    assert [format_utc(s.cutoff_utc) for s in slots] == [
        "2026-03-28T17:00:00Z",
        "2026-03-29T16:00:00Z",
        "2026-03-30T16:00:00Z",
    ]
    (autumn,) = day_slots(product, AUTUMN)
    assert (autumn.id, format_local(autumn.end)) == ("2026-10-25T00:00:00+01:00", "2026-10-26T00:00:00+00:00")
    assert autumn.end.astimezone(UTC) - autumn.start.astimezone(UTC) == timedelta(hours=25)
    assert format_utc(autumn.cutoff_utc) == "2026-10-25T17:00:00Z"


def test_cancellation_cutoff_across_the_spring_change() -> None:
    product = make_product(
        make_option(
            departures("10:00"), cancellation_cutoff_amount=1, cancellation_cutoff_unit=DurationUnit.day
        )
    )
    option = product.options[0]
    before, on, after = slots_between(product, option, date(2026, 3, 28), date(2026, 3, 30))
    assert format_utc(cancellation_cutoff(option, before)) == "2026-03-27T10:00:00Z"
    # A day is 24 elapsed hours: 09:00 UTC is 09:00 GMT, not 10:00 wall-clock the day before.
    assert format_utc(cancellation_cutoff(option, on)) == "2026-03-28T09:00:00Z"
    assert format_utc(cancellation_cutoff(option, after)) == "2026-03-29T09:00:00Z"
    in_hours = option.model_copy(update={"cancellation_cutoff_amount": 2, "cancellation_cutoff_unit": "hour"})
    assert format_utc(cancellation_cutoff(in_hours, before)) == "2026-03-28T08:00:00Z"
    assert format_utc(cancellation_cutoff(in_hours, on)) == "2026-03-29T07:00:00Z"
    no_cutoff = option.model_copy(update={"cancellation_cutoff_amount": 0})
    assert cancellation_cutoff(no_cutoff, on) == on.start
    assert cancellation_cutoff(no_cutoff, on).tzinfo is UTC


def test_cancellation_cutoff_across_the_autumn_change() -> None:
    product = make_product(
        make_option(
            departures("01:30"), cancellation_cutoff_amount=90, cancellation_cutoff_unit=DurationUnit.minute
        )
    )
    option = product.options[0]
    before, on, after = slots_between(product, option, date(2026, 10, 24), date(2026, 10, 26))
    # 01:30 is 00:30 UTC in summer time (and on the autumn day, whose first 01:30 is taken),
    # 01:30 UTC in winter.
    assert format_utc(cancellation_cutoff(option, before)) == "2026-10-23T23:00:00Z"
    assert format_utc(cancellation_cutoff(option, on)) == "2026-10-24T23:00:00Z"
    assert format_utc(cancellation_cutoff(option, after)) == "2026-10-26T00:00:00Z"


def test_opening_hours_cutoffs_count_from_the_closing_time() -> None:
    product = make_product(
        make_option(
            hours(("09:00", "12:00"), ("14:00", "18:00")),
            sales_cutoff_minutes=15,
            cancellation_cutoff_amount=2,
            cancellation_cutoff_unit=DurationUnit.hour,
        ),
        AvailabilityType.OPENING_HOURS,
    )
    option = product.options[0]
    for day, sales, cancel in [
        (date(2026, 3, 28), "2026-03-28T17:45:00Z", "2026-03-28T16:00:00Z"),
        (SPRING, "2026-03-29T16:45:00Z", "2026-03-29T15:00:00Z"),
        (date(2026, 10, 24), "2026-10-24T16:45:00Z", "2026-10-24T15:00:00Z"),
        (AUTUMN, "2026-10-25T17:45:00Z", "2026-10-25T16:00:00Z"),
    ]:
        (slot,) = day_slots(product, day)
        assert format_utc(slot.cutoff_utc) == sales
        assert format_utc(cancellation_cutoff(option, slot)) == cancel


def test_opening_hours_closing_in_the_gap() -> None:
    product = make_product(make_option(hours(("00:15", "01:30"))), AvailabilityType.OPENING_HOURS)
    (slot,) = day_slots(product, SPRING)
    # 01:30 does not exist that night; the day closes at 02:30 BST, 01:30 UTC.
    assert format_utc(slot.cutoff_utc) == "2026-03-29T01:30:00Z"
    assert format_utc(cancellation_cutoff(product.options[0], slot)) == "2026-03-29T01:30:00Z"


# --- a gap just before midnight: America/Nuuk springs forward from 23:00 to 00:00 ----------------


def test_a_departure_pushed_past_midnight_belongs_to_the_next_date() -> None:
    nuuk = make_product(
        make_option(departures("23:30"), closed_dates=(date(2026, 3, 28),)), time_zone="America/Nuuk"
    )
    option = nuuk.options[0]
    assert day_slots(nuuk, date(2026, 3, 28)) == []
    moved, own = day_slots(nuuk, date(2026, 3, 29))
    assert (moved.id, moved.local_date, moved.closed) == (
        "2026-03-29T00:30:00-01:00",
        date(2026, 3, 29),
        False,
    )
    assert format_utc(moved.start) == "2026-03-29T01:30:00Z"
    assert own.id == "2026-03-29T23:30:00-01:00"
    assert slot_for_id(nuuk, option, moved.id) == moved
    # When the next date has a real 00:30 departure, that one keeps the slot.
    both = make_product(
        make_option(departures("23:30", capacity=3), departures("00:30", capacity=5)),
        time_zone="America/Nuuk",
    )
    slots = slots_between(both, both.options[0], date(2026, 3, 28), date(2026, 3, 29))
    assert [(s.id, s.capacity) for s in slots] == [
        ("2026-03-28T00:30:00-02:00", 5),
        ("2026-03-29T00:30:00-01:00", 5),
        ("2026-03-29T23:30:00-01:00", 3),
    ]


# --- slot_for_id ------------------------------------------------------------------------------


def test_slot_for_id_finds_slots_and_only_slots() -> None:
    product = make_product(make_option(departures("10:00", "01:30")))
    option = product.options[0]
    slot = slot_for_id(product, option, "2026-03-29T10:00:00+01:00")
    assert slot is not None
    assert slot == day_slots(product, SPRING)[1]
    # The same instant written with another offset finds the same slot.
    assert slot_for_id(product, option, "2026-03-29T09:00:00+00:00") == slot
    assert slot_for_id(product, option, "2026-03-29T04:00:00-05:00") == slot
    assert slot_for_id(product, option, "2026-03-29T01:30:00+00:00") == day_slots(product, SPRING)[0]
    assert slot_for_id(product, option, "2026-03-29T11:00:00+01:00") is None
    assert slot_for_id(product, option, "2026-03-29T10:00:00+00:00") is None
    assert slot_for_id(product, option, "2026-03-29T10:00:01+01:00") is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-03-29",
        "2026-03-29T10:00:00",
        "2026-03-29T10:00:00Z",
        "2026-03-29T10:00+01:00",
        "2026-03-29T10:00:00.000+01:00",
        "2026-03-29 10:00:00+01:00",
        "2026-03-29T10:00:00+0100",
        "2026-03-29T10:00:00+01:00\n",
        " 2026-03-29T10:00:00+01:00",
        "2026-02-30T10:00:00+00:00",
        "2026-13-01T10:00:00+00:00",
        "2026-03-29T24:00:00+00:00",
        "2026-03-29T10:00:00+24:00",
        "2026-03-29T10:00:00+01:60",
        "0000-01-01T00:00:00+00:00",
        "0001-01-01T00:00:00+23:59",
        "9999-12-31T23:59:59-23:59",
        "\u0662\u0660\u0662\u0666-03-29T10:00:00+01:00",
    ],
)
def test_slot_for_id_rejects_what_is_not_a_slot_id(text: str) -> None:
    product = make_product(make_option(departures("00:00", "10:00")))
    assert slot_for_id(product, product.options[0], text) is None


# --- properties -------------------------------------------------------------------------------

ZONES = ["Europe/London", "America/Nuuk", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata", "UTC"]
# Days around 2026's changes in those zones, and others.
INTERESTING_DAYS = [
    date(2026, 3, 28),
    date(2026, 3, 29),
    date(2026, 4, 4),
    date(2026, 4, 5),
    date(2026, 9, 5),
    date(2026, 9, 6),
    date(2026, 10, 3),
    date(2026, 10, 4),
    date(2026, 10, 24),
    date(2026, 10, 25),
]
days = st.one_of(st.sampled_from(INTERESTING_DAYS), st.dates(date(2025, 1, 1), date(2028, 12, 31)))
clocks = st.builds(
    lambda hour, minute: f"{hour:02d}:{minute:02d}",
    st.integers(0, 23),
    st.sampled_from([0, 1, 30, 45, 59]),
)
capacities = st.none() | st.integers(0, 50)


@st.composite
def schedules(draw: st.DrawFn, kind: AvailabilityType) -> Schedule:
    valid_from = draw(st.none() | days)
    valid_until = draw(st.none() | days)
    weekdays = tuple(draw(st.sets(st.sampled_from(list(Weekday)), min_size=1)))
    if kind is AvailabilityType.START_TIME:
        start_times = tuple(draw(st.lists(clocks, min_size=1, max_size=5, unique=True)))
        return Schedule(
            valid_from=valid_from,
            valid_until=valid_until,
            weekdays=weekdays,
            start_times=start_times,
            capacity=draw(capacities),
        )
    edges = sorted(draw(st.sets(clocks, min_size=2, max_size=6)))
    periods = tuple(OpeningHours(opens=a, closes=b) for a, b in zip(edges[::2], edges[1::2], strict=False))
    return Schedule(
        valid_from=valid_from,
        valid_until=valid_until,
        weekdays=weekdays,
        opening_hours=periods,
        capacity=draw(capacities),
    )


@st.composite
def catalogues(draw: st.DrawFn) -> Product:
    kind = draw(st.sampled_from(list(AvailabilityType)))
    overrides = draw(
        st.lists(
            st.builds(
                CapacityOverride,
                date=days,
                start_time=st.none() | clocks,
                capacity=capacities,
            ),
            max_size=6,
        )
    )
    option = make_option(
        *draw(st.lists(schedules(kind), min_size=1, max_size=3)),
        duration_minutes=draw(st.integers(1, 60 * 30)),
        sales_cutoff_minutes=draw(st.integers(0, 60 * 48)),
        closed_dates=tuple(draw(st.lists(days, max_size=4))),
        capacity_overrides=tuple(overrides),
    )
    return make_product(option, kind, draw(st.sampled_from(ZONES)))


@given(catalogues(), days, st.integers(0, 6))
def test_range_is_the_days_one_after_another(product: Product, first: date, length: int) -> None:
    option = product.options[0]
    last = first + timedelta(days=length)
    whole = slots_between(product, option, first, last)
    one_by_one = [
        slot for offset in range(length + 1) for slot in day_slots(product, first + timedelta(days=offset))
    ]
    assert ids(whole) == ids(one_by_one)
    assert whole == one_by_one


@given(catalogues(), days, st.integers(0, 6))
def test_slots_are_unique_ordered_and_well_formed(product: Product, first: date, length: int) -> None:
    option = product.options[0]
    last = first + timedelta(days=length)
    slots = slots_between(product, option, first, last)
    assert len(set(ids(slots))) == len(slots)
    starts = [s.start.astimezone(UTC) for s in slots]
    assert starts == sorted(starts)
    zone = ZoneInfo(product.time_zone)
    all_day = product.availability_type is AvailabilityType.OPENING_HOURS
    for slot in slots:
        assert first <= slot.local_date <= last
        assert slot.local_date == slot.start.date()
        assert slot.id == format_local(slot.start)
        assert slot.start.tzinfo == zone
        assert slot.end.tzinfo == zone
        assert slot.end.astimezone(UTC) > slot.start.astimezone(UTC)
        assert slot.cutoff_utc.tzinfo is UTC
        assert slot.all_day is all_day
        assert bool(slot.opening_hours) is all_day
        # A closed date, or (opening hours) a weekday no schedule of the season opens.
        shut = all_day and not any(s.applies_on(slot.local_date) for s in option.schedules)
        assert slot.closed == (slot.local_date in option.closed_dates or shut)
        if not all_day:
            assert slot.end.astimezone(UTC) - slot.start.astimezone(UTC) == timedelta(
                minutes=option.duration_minutes
            )


@given(catalogues(), days)
def test_every_slot_id_leads_back_to_its_slot(product: Product, day: date) -> None:
    option = product.options[0]
    for slot in day_slots(product, day):
        found = slot_for_id(product, option, slot.id)
        assert found == slot
        assert found is not None
        assert (format_utc(found.start), format_utc(found.end)) == (
            format_utc(slot.start),
            format_utc(slot.end),
        )
        assert cancellation_cutoff(option, found) == cancellation_cutoff(option, slot)


@given(
    st.text()
    | st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}\Z")
)
def test_slot_for_id_never_raises(text: str) -> None:
    for kind in AvailabilityType:
        schedule = (
            departures("00:00", "23:59") if kind is AvailabilityType.START_TIME else hours(("00:00", "23:59"))
        )
        product = make_product(make_option(schedule), kind, "Pacific/Kiritimati")
        found = slot_for_id(product, product.options[0], text)
        assert found is None or found.start.astimezone(UTC) == datetime.fromisoformat(text).astimezone(UTC)


def test_a_weekday_an_opening_hours_option_is_shut_is_a_closed_day_with_its_usual_hours() -> None:
    weekdays = Schedule(
        weekdays=(Weekday.TUE, Weekday.WED, Weekday.THU, Weekday.FRI, Weekday.SAT, Weekday.SUN),
        opening_hours=(OpeningHours(opens="09:30", closes="17:30"),),
        capacity=300,
        valid_from=date(2026, 4, 1),
        valid_until=date(2026, 10, 31),
    )
    product = make_product(
        make_option(weekdays, closed_dates=(date(2026, 7, 8),)), AvailabilityType.OPENING_HOURS
    )
    monday, tuesday, holiday = slots_between(product, product.options[0], date(2026, 7, 6), date(2026, 7, 8))[
        :3
    ]
    # The shut weekday and the holiday closure follow one rule: listed, closed, with the hours.
    assert (monday.local_date, monday.closed, monday.opening_hours, monday.capacity) == (
        date(2026, 7, 6), True, (("09:30", "17:30"),), 300,
    )  # fmt: skip
    assert (holiday.local_date, holiday.closed, holiday.opening_hours) == (
        date(2026, 7, 8), True, (("09:30", "17:30"),),
    )  # fmt: skip
    assert not tuesday.closed
    # Out of every schedule's season there is no slot, but the day still has usual hours.
    assert day_slots(product, date(2026, 12, 1)) == []
    assert opening_hours_on(product.options[0], date(2026, 12, 1)) == (("09:30", "17:30"),)
    assert opening_hours_on(product.options[0], date(2026, 7, 6)) == (("09:30", "17:30"),)


def test_usual_opening_hours_prefer_the_schedule_of_the_day_then_of_its_season() -> None:
    summer = Schedule(
        opening_hours=(OpeningHours(opens="09:00", closes="20:00"),),
        capacity=10,
        weekdays=(Weekday.SAT,),
        valid_from=date(2026, 6, 1),
        valid_until=date(2026, 8, 31),
    )
    winter = Schedule(
        opening_hours=(OpeningHours(opens="10:00", closes="16:00"),),
        capacity=10,
        weekdays=(Weekday.SAT,),
        valid_from=date(2026, 11, 1),
        valid_until=date(2027, 2, 28),
    )
    option = make_option(summer, winter)
    assert opening_hours_on(option, date(2026, 7, 4)) == (("09:00", "20:00"),)  # a summer Saturday
    assert opening_hours_on(option, date(2026, 12, 1)) == (("10:00", "16:00"),)  # a winter Tuesday
    assert opening_hours_on(option, date(2026, 9, 15)) == (("09:00", "20:00"),)  # between seasons
