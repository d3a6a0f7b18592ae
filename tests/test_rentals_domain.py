"""Rental interval arithmetic (berth.domain.rentals): when an item is due back, across
daylight-saving changes and day boundaries, and the peak of items out over an interval,
checked against brute force. Also the price multiplier and the catalogue's rental rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.capabilities.registry import CATALOG_RULES
from berth.domain.catalog import (
    AvailabilityType,
    DurationUnit,
    OpeningHours,
    Price,
    RentalDuration,
    Schedule,
    Tax,
)
from berth.domain.catalog.document import parse_catalog
from berth.domain.errors import BadRequest, InvalidRentalDurationId
from berth.domain.pricing import scale_price
from berth.domain.rentals import (
    HeldInterval,
    affected_starts,
    peak_held,
    rental_duration_for,
    rental_end,
    rental_slot,
)
from berth.domain.slots import slots_between
from tests.test_catalog_import import MINIMAL, problems_of
from tests.test_slots import LONDON, SPRING, departures, make_option, make_product

NEW_YORK = ZoneInfo("America/New_York")
BASE = datetime(2026, 10, 24, 22, 0, tzinfo=UTC)  # the night London and Europe fall back


def duration(amount: float, unit: DurationUnit, multiplier: float = 1, id: str = "d") -> RentalDuration:
    return RentalDuration(
        id=id, title=id, duration_amount=amount, duration_unit=unit, pricing_multiplier=multiplier
    )


HOURS_2 = duration(2, DurationUnit.hour, 0.4, "2-hours")
DAY_1 = duration(1, DurationUnit.day, 1, "1-day")
DAYS_3 = duration(3, DurationUnit.day, 2.5, "3-days")


# --- when an item is due back --------------------------------------------------------------


def elapsed(start: datetime, end: datetime) -> timedelta:
    """Real time between two instants (subtracting two datetimes of one zone gives wall time)."""
    return end.astimezone(UTC) - start.astimezone(UTC)


def test_a_day_is_the_same_wall_clock_time_the_next_day_across_dst() -> None:
    spring = datetime(2026, 3, 28, 10, 0, tzinfo=LONDON)
    assert rental_end(spring, DAY_1) == datetime(2026, 3, 29, 10, 0, tzinfo=LONDON)
    assert elapsed(spring, rental_end(spring, DAY_1)) == timedelta(hours=23)
    autumn = datetime(2026, 10, 24, 10, 0, tzinfo=LONDON)
    assert elapsed(autumn, rental_end(autumn, DAY_1)) == timedelta(hours=25)
    three = datetime(2026, 3, 27, 9, 0, tzinfo=LONDON)
    assert rental_end(three, DAYS_3).isoformat() == "2026-03-30T09:00:00+01:00"
    assert elapsed(three, rental_end(three, DAYS_3)) == timedelta(hours=71)


def test_hours_are_elapsed_time_across_dst_and_midnight() -> None:
    before_gap = datetime(2026, 3, 29, 0, 30, tzinfo=LONDON)  # GMT; clocks jump 01:00 -> 02:00
    assert rental_end(before_gap, HOURS_2).isoformat() == "2026-03-29T03:30:00+01:00"
    late = datetime(2026, 6, 1, 23, 0, tzinfo=LONDON)
    assert rental_end(late, HOURS_2).isoformat() == "2026-06-02T01:00:00+01:00"
    first_one_thirty = datetime(2026, 10, 25, 1, 30, tzinfo=LONDON)  # BST, the first 01:30
    assert rental_end(first_one_thirty, HOURS_2).isoformat() == "2026-10-25T02:30:00+00:00"


def test_a_wall_clock_time_the_clocks_skip_moves_forward_and_an_ambiguous_one_is_the_first() -> None:
    skipped = rental_end(datetime(2026, 3, 28, 1, 30, tzinfo=LONDON), DAY_1)
    assert skipped.isoformat() == "2026-03-29T02:30:00+01:00"
    ambiguous = rental_end(datetime(2026, 10, 24, 1, 30, tzinfo=LONDON), DAY_1)
    assert ambiguous.isoformat() == "2026-10-25T01:30:00+01:00"  # the first 01:30 (BST)
    half = rental_end(datetime(2026, 3, 28, 18, 0, tzinfo=LONDON), duration(1.5, DurationUnit.day))
    assert half.isoformat() == "2026-03-30T06:00:00+01:00"  # a calendar day, then 12 elapsed hours


moments = st.datetimes(
    min_value=datetime(2026, 3, 20), max_value=datetime(2026, 11, 5), timezones=st.just(LONDON)
).map(lambda d: d.replace(second=0, microsecond=0))
elapsed_durations = st.builds(
    duration,
    st.integers(min_value=1, max_value=3000),
    st.sampled_from([DurationUnit.minute, DurationUnit.hour]),
)


@given(moments, elapsed_durations)
def test_minutes_and_hours_are_exact_elapsed_time(start: datetime, rental: RentalDuration) -> None:
    minutes = rental.duration_amount * (60 if rental.duration_unit is DurationUnit.hour else 1)
    end = rental_end(start, rental)
    assert end.astimezone(UTC) - start.astimezone(UTC) == timedelta(minutes=minutes)
    assert end.tzinfo is LONDON


@given(moments, st.integers(min_value=1, max_value=14))
def test_days_keep_the_wall_clock_and_last_a_day_give_or_take_the_dst_hour(
    start: datetime, days: int
) -> None:
    end = rental_end(start, duration(days, DurationUnit.day))
    elapsed = end.astimezone(UTC) - start.astimezone(UTC)
    assert abs(elapsed - timedelta(days=days)) <= timedelta(hours=1)
    assert end > start
    wall = start.replace(tzinfo=None, fold=0) + timedelta(days=days)
    exists = wall.replace(tzinfo=LONDON).astimezone(UTC).astimezone(LONDON).replace(tzinfo=None) == wall
    if exists:
        assert end.replace(tzinfo=None) == wall
    else:  # skipped by the clocks: an hour later on the wall
        assert end.replace(tzinfo=None) == wall + timedelta(hours=1)


@given(moments, moments, st.sampled_from([HOURS_2, DAY_1, DAYS_3]))
def test_later_pick_ups_are_never_due_back_earlier(a: datetime, b: datetime, rental: RentalDuration) -> None:
    first, second = sorted((a, b), key=lambda d: d.astimezone(UTC))
    assert rental_end(first, rental).astimezone(UTC) <= rental_end(second, rental).astimezone(UTC)


def test_opening_hours_rentals_hold_whole_days_midnight_to_midnight() -> None:
    option = make_option(Schedule(opening_hours=(OpeningHours(opens="09:00", closes="17:00"),), capacity=5))
    product = make_product(option, AvailabilityType.OPENING_HOURS)
    (day,) = slots_between(product, option, SPRING - timedelta(days=1), SPRING - timedelta(days=1))
    assert rental_slot(day, HOURS_2).end.isoformat() == "2026-03-29T00:00:00+00:00"
    two_days = rental_slot(day, duration(2, DurationUnit.day))
    assert two_days.end.isoformat() == "2026-03-30T00:00:00+01:00"
    assert elapsed(day.start, two_days.end) == timedelta(hours=47)


# --- the peak of items out -----------------------------------------------------------------


def at(minute: int) -> datetime:
    return BASE + timedelta(minutes=minute)


intervals = st.lists(
    st.tuples(st.integers(0, 600), st.integers(1, 300), st.integers(0, 4)).map(
        lambda t: HeldInterval(at(t[0]), at(t[0] + t[1]), t[2])
    ),
    max_size=25,
)
windows = st.lists(
    st.tuples(st.integers(0, 700), st.integers(1, 400)).map(lambda t: (at(t[0]), at(t[0] + t[1]))),
    min_size=1,
    max_size=10,
)


def out_at(held: list[HeldInterval], moment: datetime) -> int:
    return sum(h.pax for h in held if h.start <= moment < h.end)


def brute_peak(held: list[HeldInterval], window: tuple[datetime, datetime]) -> int:
    """Items out at every minute of the window (all instants are whole minutes)."""
    start, end = window
    minutes = int((end - start).total_seconds() // 60)
    return max(out_at(held, start + timedelta(minutes=m)) for m in range(minutes))


@settings(max_examples=300)
@given(intervals, windows)
def test_peak_matches_brute_force(held: list[HeldInterval], wanted: list[tuple[datetime, datetime]]) -> None:
    assert peak_held(held, wanted) == [brute_peak(held, w) for w in wanted]


@given(intervals, windows, st.sampled_from([LONDON, NEW_YORK, UTC]))
def test_peak_does_not_depend_on_the_zone_times_are_written_in(
    held: list[HeldInterval], wanted: list[tuple[datetime, datetime]], zone: ZoneInfo
) -> None:
    """BASE is the night the clocks go back: same-zone comparisons of wall times would get the
    repeated hour wrong."""
    local_held = [HeldInterval(h.start.astimezone(zone), h.end.astimezone(zone), h.pax) for h in held]
    local_windows = [(s.astimezone(zone), e.astimezone(zone)) for s, e in wanted]
    assert peak_held(local_held, local_windows) == peak_held(held, wanted)


@given(intervals, st.tuples(st.integers(0, 700), st.integers(1, 400)), st.integers(1, 3), st.integers(0, 8))
def test_a_rental_fits_exactly_when_the_stock_is_never_exceeded(
    held: list[HeldInterval], window: tuple[int, int], pax: int, stock: int
) -> None:
    start, end = at(window[0]), at(window[0] + window[1])
    fits = peak_held(held, [(start, end)])[0] + pax <= stock
    after = [*held, HeldInterval(start, end, pax)]
    never_exceeded = all(out_at(after, at(m)) <= stock for m in range(0, 1400))
    before_ok = all(out_at(held, at(m)) <= stock for m in range(0, 1400))
    if before_ok:
        assert fits == never_exceeded


def test_intervals_are_half_open() -> None:
    held = [HeldInterval(at(0), at(60), 1), HeldInterval(at(120), at(180), 2)]
    assert peak_held(held, [(at(60), at(120))]) == [0]  # one ends as the window starts, one starts as it ends
    assert peak_held(held, [(at(59), at(121))]) == [2]
    assert peak_held(held, [(at(-30), at(1))]) == [1]
    assert peak_held([], [(at(0), at(10))]) == [0]


def test_a_three_day_rental_blocks_every_start_and_a_short_one_adds_where_it_overlaps() -> None:
    option = make_option(departures("09:00", "13:00", capacity=5))
    product = make_product(option)
    start = datetime(2026, 6, 2, 9, 0, tzinfo=LONDON)
    three = HeldInterval(start, rental_end(start, DAYS_3), 2)
    noon = datetime(2026, 6, 3, 13, 0, tzinfo=LONDON)
    short = HeldInterval(noon, rental_end(noon, HOURS_2), 1)
    slots = [
        rental_slot(s, HOURS_2) for s in slots_between(product, option, date(2026, 6, 1), date(2026, 6, 6))
    ]
    peaks = dict(
        zip([s.id for s in slots], peak_held([three, short], [(s.start, s.end) for s in slots]), strict=True)
    )
    assert peaks["2026-06-01T09:00:00+01:00"] == 0
    assert peaks["2026-06-02T09:00:00+01:00"] == 2
    assert peaks["2026-06-03T13:00:00+01:00"] == 3
    assert peaks["2026-06-05T09:00:00+01:00"] == 0  # due back at 09:00: free again at 09:00
    days = [rental_slot(s, DAY_1) for s in slots]
    day_peaks = peak_held([three, short], [(s.start, s.end) for s in days])
    assert dict(zip([s.id for s in days], day_peaks, strict=True))["2026-06-01T13:00:00+01:00"] == 2


def test_affected_starts_cover_every_start_a_rental_would_overlap() -> None:
    option = make_option(departures("09:00", "13:00", capacity=5)).model_copy(
        update={"rental_durations": (HOURS_2, DAYS_3)}
    )
    product = make_product(option)
    start = datetime(2026, 6, 5, 9, 0, tzinfo=LONDON)
    found = [s.id for s in affected_starts(product, option, start, rental_end(start, HOURS_2))]
    # A 3-day rental from 2 June 13:00 is still out at 9:00 on 5 June; one from 2 June 09:00 is back.
    assert found[0] == "2026-06-02T13:00:00+01:00"
    assert found[-1] == "2026-06-05T09:00:00+01:00"
    assert "2026-06-05T13:00:00+01:00" not in found
    plain = make_option(departures("09:00"))
    assert affected_starts(make_product(plain), plain, start, start + timedelta(hours=1)) == []


def test_choosing_the_duration() -> None:
    plain = make_option(departures("09:00"))
    assert rental_duration_for(plain, None) is None
    with pytest.raises(BadRequest):
        rental_duration_for(plain, "1-day")
    single = plain.model_copy(update={"rental_durations": (DAY_1,)})
    assert rental_duration_for(single, None) == DAY_1
    several = plain.model_copy(update={"rental_durations": (HOURS_2, DAY_1)})
    assert rental_duration_for(several, "2-hours") == HOURS_2
    with pytest.raises(InvalidRentalDurationId) as unknown:
        rental_duration_for(several, "3-days")
    assert unknown.value.body()["rentalDurationId"] == "3-days"


def test_no_duration_named_means_the_default_one() -> None:
    several = make_option(departures("09:00")).model_copy(
        update={"rental_durations": (HOURS_2, DAY_1, DAYS_3)}
    )
    assert several.default_rental_duration == HOURS_2  # not declared: the first listed
    assert rental_duration_for(several, None) == HOURS_2
    declared = several.model_copy(update={"default_rental_duration_id": "3-days"})
    assert declared.default_rental_duration == DAYS_3
    assert rental_duration_for(declared, None) == DAYS_3
    assert rental_duration_for(declared, "1-day") == DAY_1  # a named duration wins
    assert make_option(departures("09:00")).default_rental_duration is None


# --- prices ---------------------------------------------------------------------------------


def test_prices_are_multiplied_and_rounded_half_up() -> None:
    price = Price(
        currency="EUR",
        retail=3500,
        net=2800,
        included_taxes=(Tax(name="VAT", retail=583, original=583, net=467),),
    )
    three_days = scale_price(price, 2.5)
    assert (three_days.retail, three_days.net, three_days.original) == (8750, 7000, None)
    assert three_days.included_taxes[0].retail == 1458  # 1457.5
    two_hours = scale_price(price, 0.4)
    assert (two_hours.retail, two_hours.included_taxes[0].retail, two_hours.included_taxes[0].net) == (
        1400,
        233,
        187,
    )
    assert scale_price(price, 1) is price


@given(
    st.integers(0, 10**7), st.integers(0, 10**6), st.decimals(min_value="0.0001", max_value="100", places=4)
)
def test_scaling_keeps_original_at_least_retail(retail: int, extra: int, factor: object) -> None:
    multiplier = float(str(factor))
    price = Price(currency="GBP", retail=retail, original=retail + extra)
    scaled = scale_price(price, multiplier)
    assert scaled.original is not None and scaled.original >= scaled.retail >= 0
    assert abs(scaled.retail - retail * multiplier) <= 0.5 + 1e-6 * retail


# --- the catalogue --------------------------------------------------------------------------

RENTAL = MINIMAL.replace(
    "        units:\n",
    "        rentalDurations:\n"
    "          - {id: 2h, title: 2 hours, durationAmount: 2, durationUnit: hour, pricingMultiplier: 0.4}\n"
    "          - {id: 1d, title: 1 day, durationAmount: 1, durationUnit: day}\n"
    "        units:\n",
)


def test_rental_durations_load_and_round_trip() -> None:
    from berth.domain.catalog.document import catalog_to_yaml

    catalog = parse_catalog(RENTAL, CATALOG_RULES)
    option = catalog.products[0].options[0]
    assert option.is_rental and catalog.products[0].is_rental
    assert [d.id for d in option.rental_durations] == ["2h", "1d"]
    assert parse_catalog(catalog_to_yaml(catalog), CATALOG_RULES) == catalog


def test_the_default_duration_is_declared_per_option() -> None:
    from berth.domain.catalog.document import catalog_to_yaml

    declared = RENTAL.replace(
        "        rentalDurations:\n", "        defaultRentalDurationId: 1d\n        rentalDurations:\n"
    )
    catalog = parse_catalog(declared, CATALOG_RULES)
    option = catalog.products[0].options[0]
    assert option.default_rental_duration_id == "1d" and option.default_rental_duration is not None
    assert option.default_rental_duration.id == "1d"
    assert "defaultRentalDurationId: 1d" in catalog_to_yaml(catalog)
    assert parse_catalog(catalog_to_yaml(catalog), CATALOG_RULES) == catalog
    assert parse_catalog(RENTAL, CATALOG_RULES).products[0].options[0].default_rental_duration_id is None
    assert problems_of(declared.replace("defaultRentalDurationId: 1d", "defaultRentalDurationId: 2d")) == [
        "line 17: products[0].options[0].defaultRentalDurationId: '2d' is not a rental duration of "
        "option 'DEFAULT': name one of its rentalDurations (2h, 1d)"
    ]
    assert problems_of(
        MINIMAL.replace("        units:\n", "        defaultRentalDurationId: 1d\n        units:\n")
    ) == [
        "line 17: products[0].options[0].defaultRentalDurationId: option 'DEFAULT' has no "
        "rentalDurations: declare them, or leave defaultRentalDurationId out"
    ]


def test_rental_duration_rules() -> None:
    broken = RENTAL.replace("id: 1d,", "id: 2h,").replace("durationAmount: 2,", "durationAmount: 0.0001,")
    assert problems_of(broken) == [
        "line 18: products[0].options[0].rentalDurations[0].durationAmount: "
        "the duration must be a whole number of minutes",
        "line 19: products[0].options[0].rentalDurations[1].id: duplicate rental duration id '2h'",
    ]
    assert problems_of(RENTAL.replace("pricingMultiplier: 0.4", "pricingMultiplier: 0.12345")) == [
        "line 18: products[0].options[0].rentalDurations[0].pricingMultiplier: at most 4 decimal places"
    ]
    assert problems_of(
        RENTAL.replace("durationAmount: 1, durationUnit: day", "durationAmount: 367, durationUnit: day")
    ) == [
        "line 19: products[0].options[0].rentalDurations[1].durationAmount: a rental lasts at most 366 days"
    ]
    assert problems_of(RENTAL.replace("    options:", "    availabilityRequired: false\n    options:")) == [
        "line 11: products[0].availabilityRequired: a rental product needs availability: a rental starts at a time"
    ]
    opening = RENTAL.replace("availabilityType: START_TIME", "availabilityType: OPENING_HOURS").replace(
        '          - startTimes: ["10:00", "14:30"]',
        '          - openingHours: [{from: "09:00", to: "17:00"}]',
    )
    parse_catalog(opening, CATALOG_RULES)
    assert problems_of(
        opening.replace("durationAmount: 1, durationUnit: day", "durationAmount: 1.5, durationUnit: day")
    ) == [
        "line 19: products[0].options[0].rentalDurations[1].durationAmount: "
        "rentals by opening hours last whole days (or hours within a day)"
    ]
