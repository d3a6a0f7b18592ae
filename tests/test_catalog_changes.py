"""What a catalogue import changes, and which live bookings it would take places from
(domain/catalog_changes.py), without I/O."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from berth.capabilities.registry import CATALOG_RULES
from berth.demo.loader import demo_catalog_text
from berth.domain.bookings import BookingStatus
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import parse_catalog
from berth.domain.catalog_changes import (
    BookedPlaces,
    CatalogChanges,
    Change,
    Conflict,
    DepartureLoss,
    HeldBooking,
    ItemChange,
    LossReason,
    compare_catalogs,
)
from berth.domain.connections import Connection
from berth.domain.contracts import parse_contract
from berth.domain.resources import Allocation
from tests.bookings_helpers import booking_catalog
from tests.builders import catalog as catalog_of
from tests.test_sale_keeps_its_price import halved_products

NOW = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)  # Monday 09:00 in London

WALK = """\
supplier: {id: acme, name: Acme Tours}
products:
  - id: walk
    internalName: City walk
    timeZone: Europe/London
    availabilityType: START_TIME
    deliveryFormats: [QRCODE]
    deliveryMethods: [TICKET]
    options:
      - id: DEFAULT
        internalName: Walk
        schedules:
          - startTimes: ["10:00", "14:30"]
            capacity: 12
        units:
          - {id: adult, internalName: Adult, type: ADULT}
          - {id: child, internalName: Child, type: CHILD}
  - id: museum
    internalName: Museum
    timeZone: Europe/London
    availabilityType: OPENING_HOURS
    deliveryFormats: [QRCODE]
    deliveryMethods: [TICKET]
    options:
      - id: DEFAULT
        internalName: Admission
        schedules:
          - openingHours: [{from: "09:00", to: "17:00"}]
            capacity: 100
        units:
          - {id: adult, internalName: Adult, type: ADULT}
"""


def catalog(text: str = WALK, *replacements: tuple[str, str]) -> Catalog:
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    return parse_catalog(text, CATALOG_RULES)


_COUNTER = iter(range(1, 10_000))


def booking(
    availability_id: str | None,
    pax: int = 2,
    status: BookingStatus = BookingStatus.CONFIRMED,
    product_id: str = "walk",
    option_id: str = "DEFAULT",
    units: tuple[str, ...] = (),
    **fields: Any,
) -> HeldBooking:
    number = next(_COUNTER)
    start = datetime.fromisoformat(availability_id) if availability_id else None
    made = HeldBooking(
        supplier_reference=f"S{number}", reseller_reference=f"R{number}", status=status, test_mode=False,
        expires_at=NOW + timedelta(minutes=30) if status is BookingStatus.ON_HOLD else None,
        product_id=product_id, option_id=option_id, availability_id=availability_id,
        slot_start=start.astimezone(UTC) if start else None, slot_end=None,
        local_date=start.date() if start else None, pax=pax, unit_ids=units or ("adult",) * pax,
        rental_duration_id=None, resource_allocations=(),
    )  # fmt: skip
    return replace(made, **fields)


def places(*bookings: HeldBooking) -> tuple[BookedPlaces, ...]:
    return tuple(BookedPlaces(b.supplier_reference, b.reseller_reference, b.status, b.pax) for b in bookings)


def test_identical_catalogues_change_nothing() -> None:
    changes = compare_catalogs(catalog(), catalog(), [booking("2026-06-02T10:00:00+01:00")], NOW)
    assert changes == CatalogChanges(False, (), date(2026, 6, 2), (), ())
    assert not changes.changed


def test_products_options_and_units_added_changed_and_removed() -> None:
    after = catalog(
        WALK,
        ("internalName: City walk", "internalName: Old town walk"),
        ("          - {id: child, internalName: Child, type: CHILD}\n", ""),
        ("{id: adult, internalName: Adult, type: ADULT}", "{id: adult, internalName: Grown-up, type: ADULT}"),
        (
            "  - id: museum",
            "      - id: night\n        internalName: Night walk\n        schedules: [{startTimes: ['21:00'], capacity: 8}]\n"
            "        units: [{id: adult, internalName: Adult, type: ADULT}]\n  - id: boat",
        ),
        ("supplier: {id: acme, name: Acme Tours}", "supplier: {id: acme, name: Acme Walks}"),
    )
    changes = compare_catalogs(catalog(), after, [], NOW)
    assert changes.supplier_changed
    assert changes.items == (
        ItemChange(
            Change.CHANGED,
            "walk",
            fields=("internalName",),
            values=("internalName City walk -> Old town walk",),
        ),
        ItemChange(
            Change.CHANGED,
            "walk",
            "DEFAULT",
            "adult",
            fields=("internalName",),
            values=("internalName Adult -> Grown-up",),
        ),
        ItemChange(Change.REMOVED, "walk", "DEFAULT", "child"),
        ItemChange(Change.ADDED, "walk", "night"),
        ItemChange(Change.REMOVED, "museum"),
        ItemChange(Change.ADDED, "boat"),
    )
    assert [item.name for item in changes.items[:3]] == ["walk", "walk/DEFAULT/adult", "walk/DEFAULT/child"]
    # With no live booking there is no booking horizon: departures are not compared.
    assert changes.horizon_end is None and changes.departures == () and changes.conflicts == ()


def test_a_change_says_what_each_field_was_and_is() -> None:
    """Issue 38: a price change reads `EUR 25.00 -> 27.00`, and its tax's change too; a start
    time added shows the times before and after; a price added or removed says so."""
    priced = catalog(
        WALK,
        (
            "{id: adult, internalName: Adult, type: ADULT}",
            "{id: adult, internalName: Adult, type: ADULT, prices: [{currency: EUR, retail: 2500, net: 2000,"
            " includedTaxes: [{name: VAT, retail: 417, original: 417}]}]}",
        ),
        (
            "{id: child, internalName: Child, type: CHILD}",
            "{id: child, internalName: Child, type: CHILD, prices: [{currency: EUR, retail: 1500}]}",
        ),
    )
    after = catalog(
        WALK,
        ('startTimes: ["10:00", "14:30"]', 'startTimes: ["10:00", "14:30", "17:00"]'),
        (
            "{id: adult, internalName: Adult, type: ADULT}",
            "{id: adult, internalName: Adult, type: ADULT, prices: [{currency: EUR, retail: 2700, net: 2000,"
            " includedTaxes: [{name: VAT, retail: 450, original: 450}]}]}",
        ),
        (
            "{id: child, internalName: Child, type: CHILD}",
            "{id: child, internalName: Child, type: CHILD, prices: [{currency: EUR, retail: 1300, from: 2026-07-01}]}",
        ),
    )
    values = {item.name: item.values for item in compare_catalogs(priced, after, [], NOW).items}
    assert values == {
        "walk/DEFAULT": ("schedules 1 startTimes 10:00, 14:30 -> 10:00, 14:30, 17:00",),
        "walk/DEFAULT/adult": (
            "EUR 25.00 -> 27.00",
            "EUR includedTaxes 1 retail 417 -> 450",
            "EUR includedTaxes 1 original 417 -> 450",
        ),
        "walk/DEFAULT/child": (
            "EUR (2026-07-01 to \N{HORIZONTAL ELLIPSIS}) 13.00 added",
            "EUR 15.00 removed",
        ),
    }


def test_departures_losing_capacity_over_the_booking_horizon() -> None:
    """Capacity lowered, a start time dropped, a date closed: every departure from today to
    the last date with a live booking that loses places, with the places booked on it."""
    after = catalog(
        WALK,
        (
            'startTimes: ["10:00", "14:30"]\n            capacity: 12',
            'startTimes: ["10:00"]\n            capacity: 10',
        ),
        (
            "        units:\n          - {id: adult",
            "        closedDates: [2026-06-02]\n        units:\n          - {id: adult",
        ),
    )
    live = [booking("2026-06-03T10:00:00+01:00", pax=3), booking("2026-06-01T14:30:00+01:00", pax=1)]
    changes = compare_catalogs(catalog(), after, live, NOW)
    assert changes.horizon_end == date(2026, 6, 3)
    assert changes.departures == (
        DepartureLoss("walk", "DEFAULT", "2026-06-01T10:00:00+01:00", LossReason.LOWERED, 12, 10, 0),
        DepartureLoss("walk", "DEFAULT", "2026-06-01T14:30:00+01:00", LossReason.REMOVED, 12, 0, 1),
        DepartureLoss("walk", "DEFAULT", "2026-06-02T10:00:00+01:00", LossReason.CLOSED, 12, 0, 0),
        DepartureLoss("walk", "DEFAULT", "2026-06-02T14:30:00+01:00", LossReason.REMOVED, 12, 0, 0),
        DepartureLoss("walk", "DEFAULT", "2026-06-03T10:00:00+01:00", LossReason.LOWERED, 12, 10, 3),
        DepartureLoss("walk", "DEFAULT", "2026-06-03T14:30:00+01:00", LossReason.REMOVED, 12, 0, 0),
    )
    # Only the booking on the dropped 14:30 is in the way: 3 places still fit in 10.
    assert changes.conflicts == (
        Conflict("walk", "DEFAULT", "2026-06-01T14:30:00+01:00", "the departure is removed", places(live[1])),
    )


def test_capacity_below_the_places_booked_is_a_conflict_naming_every_booking_on_the_departure() -> None:
    slot = "2026-06-02T10:00:00+01:00"
    live = [booking(slot, pax=6), booking(slot, pax=4, status=BookingStatus.ON_HOLD)]
    to = {n: catalog(WALK, ("capacity: 12", f"capacity: {n}")) for n in (8, 10, 4)}
    assert compare_catalogs(catalog(), to[8], live, NOW).conflicts == (
        Conflict("walk", "DEFAULT", slot, "capacity 8 is below the 10 places booked", places(*live)),
    )
    assert compare_catalogs(catalog(), to[10], live, NOW).conflicts == ()  # exactly full is fine
    # Already over capacity (a forced import before): raising it to 8 takes nothing away.
    assert compare_catalogs(to[4], to[8], live, NOW).conflicts == ()
    # Freesale to a number is a limit: below the places booked, it is in the way too.
    freesale = catalog(WALK, ("capacity: 12", "capacity: null"))
    assert (
        compare_catalogs(freesale, to[8], live, NOW).conflicts[0].reason
        == "capacity 8 is below the 10 places booked"
    )


def test_removing_what_live_bookings_use() -> None:
    today, past = "2026-06-01T14:30:00+01:00", "2026-05-30T10:00:00+01:00"
    museum_day = "2026-06-05T00:00:00+01:00"
    live = [
        booking(today, units=("adult", "child")),
        booking(museum_day, product_id="museum"),
        booking(None, product_id="museum", pax=1),  # open-dated: still live
    ]
    not_live = [
        booking(today, status=BookingStatus.CANCELLED),
        booking(today, status=BookingStatus.ON_HOLD, expires_at=NOW - timedelta(minutes=1)),
        booking(today, test_mode=True),
        booking(past, units=("adult", "child")),  # a departure in the past
    ]
    after = catalog(
        WALK,
        ("          - {id: child, internalName: Child, type: CHILD}\n", ""),
        ("  - id: museum", "  - id: gallery"),
    )
    changes = compare_catalogs(catalog(), after, live + not_live, NOW)
    assert changes.conflicts == (
        Conflict("museum", "DEFAULT", None, "product 'museum' is removed", places(live[2])),
        Conflict("walk", "DEFAULT", today, "unit 'child' is removed", places(live[0])),
        Conflict("museum", "DEFAULT", museum_day, "product 'museum' is removed", places(live[1])),
    )
    assert changes.affected_bookings == 3
    option_gone = catalog(
        WALK,
        ("      - id: DEFAULT\n        internalName: Walk", "      - id: SHORT\n        internalName: Walk"),
    )
    assert [c.reason for c in compare_catalogs(catalog(), option_gone, live, NOW).conflicts] == [
        "option 'DEFAULT' is removed"
    ]
    closed = catalog(
        WALK,
        (
            "          - {id: child, internalName: Child, type: CHILD}\n",
            "          - {id: child, internalName: Child, type: CHILD}\n        closedDates: [2026-06-01]\n",
        ),
    )
    assert [c.reason for c in compare_catalogs(catalog(), closed, live, NOW).conflicts] == [
        "the date is closed"
    ]
    # A museum day that stops opening (Fridays dropped) is a closed day, as OPENING_HOURS has it.
    fridays = catalog(
        WALK,
        (
            'openingHours: [{from: "09:00", to: "17:00"}]',
            'weekdays: [MON, TUE, WED, THU, SAT, SUN]\n            openingHours: [{from: "09:00", to: "17:00"}]',
        ),
    )
    assert [
        (c.availability_id, c.reason) for c in compare_catalogs(catalog(), fridays, live, NOW).conflicts
    ] == [(museum_day, "the date is closed")]


def test_a_departure_gone_before_this_import_is_not_its_doing() -> None:
    slot = "2026-06-02T14:30:00+01:00"
    without = catalog(WALK, ('startTimes: ["10:00", "14:30"]', 'startTimes: ["10:00"]'))
    assert compare_catalogs(without, without, [booking(slot)], NOW).conflicts == ()
    gone = catalog(WALK, ("  - id: walk", "  - id: hike"))
    assert compare_catalogs(gone, gone, [booking(slot)], NOW).conflicts == ()


def demo(*replacements: tuple[str, str]) -> Catalog:
    return catalog(demo_catalog_text(), *replacements)


def test_rentals_need_the_stock_for_the_most_items_out_during_each_rental() -> None:
    """A rental holds items from pick-up to return: the new stock must cover, for each live
    rental, the most items out at one instant of it (what the booking was checked against)."""
    day = booking("2026-06-02T09:00:00+01:00", pax=5, product_id="city-bike-hire", units=("bike",) * 5,
                  rental_duration_id="1-day", slot_end=datetime(2026, 6, 3, 8, 0, tzinfo=UTC))  # fmt: skip
    short = booking("2026-06-02T13:00:00+01:00", pax=4, product_id="city-bike-hire", units=("bike",) * 4,
                    rental_duration_id="2-hours", slot_end=datetime(2026, 6, 2, 14, 0, tzinfo=UTC))  # fmt: skip
    alone = booking("2026-06-03T11:00:00+01:00", pax=2, product_id="city-bike-hire", units=("bike",) * 2,
                    rental_duration_id="2-hours", slot_end=datetime(2026, 6, 3, 12, 0, tzinfo=UTC))  # fmt: skip
    stock = ('"15:00", "17:00"]\n            capacity: 12', '"15:00", "17:00"]\n            capacity: {}')
    before = demo()
    changes = compare_catalogs(before, demo((stock[0], stock[1].format(8))), [day, short, alone], NOW)
    assert changes.conflicts == (
        Conflict("city-bike-hire", "DEFAULT", day.availability_id, "a stock of 8 is below the 9 items out during the rental", places(day)),
        Conflict("city-bike-hire", "DEFAULT", short.availability_id, "a stock of 8 is below the 9 items out during the rental", places(short)),
    )  # fmt: skip
    assert (
        compare_catalogs(before, demo((stock[0], stock[1].format(9))), [day, short, alone], NOW).conflicts
        == ()
    )
    no_3_days = demo(
        (
            "          - {id: 3-days, title: 3 days, durationAmount: 3, durationUnit: day, pricingMultiplier: 2.5}\n",
            "",
        )
    )
    three = replace(alone, rental_duration_id="3-days", slot_end=datetime(2026, 6, 6, 10, 0, tzinfo=UTC))
    assert [c.reason for c in compare_catalogs(before, no_3_days, [three], NOW).conflicts] == [
        "rental duration '3-days' is removed"
    ]


def test_resources_keep_what_live_bookings_were_allocated() -> None:
    """On an option with resources, a live booking's allocation must survive: its resource
    still there and serving the departure, with at least the places allocated on it in that
    departure, and its seats neither removed nor blocked."""
    at_4 = "2026-06-02T16:00:00+01:00"
    heron = booking(at_4, product_id="harbour-cruise", resource_allocations=(
        Allocation("boats", "heron", 2, 2, ("1A", "1B")), Allocation("coaches", "coach-2", 2, 2)))  # fmt: skip
    kingfisher = booking(at_4, pax=3, product_id="harbour-cruise", resource_allocations=(
        Allocation("boats", "kingfisher", 3, 3, ("1A", "2B", "2C")), Allocation("coaches", "coach-2", 3, 3)))  # fmt: skip
    live = [heron, kingfisher]  # (the kingfisher's 1A was blocked before: not this import's doing)
    before = demo()
    coach_2 = (
        "id: coach-2\n                title: Coach 2\n                capacity: 12",
        "id: coach-2\n                title: Coach 2\n                capacity: {}",
    )
    assert compare_catalogs(before, demo((coach_2[0], coach_2[1].format(4))), live, NOW).conflicts == (
        Conflict("harbour-cruise", "DEFAULT", at_4, "resource 'coach-2' has 4 places, below the 5 booked on it", places(heron, kingfisher)),
    )  # fmt: skip
    assert compare_catalogs(before, demo((coach_2[0], coach_2[1].format(5))), live, NOW).conflicts == ()
    serves = ('startTimes: ["10:00", "16:00"]  # Heron', 'startTimes: ["10:00"]  # Heron')
    blocked = ("blocked: [1A]  # the guide's seat", "blocked: [1A, 2B, 2C]")
    assert compare_catalogs(before, demo(serves, blocked), live, NOW).conflicts == (
        Conflict("harbour-cruise", "DEFAULT", at_4, "resource 'heron' does not serve this departure any more", places(heron)),
        Conflict("harbour-cruise", "DEFAULT", at_4, "seats 2B, 2C of resource 'kingfisher' are removed or blocked", places(kingfisher)),
    )  # fmt: skip
    text = demo_catalog_text()
    start, end = text.index("              - id: heron"), text.index("          # ... but may ride")
    assert compare_catalogs(before, demo((text[start:end], "")), live, NOW).conflicts == (
        Conflict("harbour-cruise", "DEFAULT", at_4, "resource 'heron' is removed", places(heron)),
    )
    # The departure's capacity comes from its resources: the heron's 12 seats are lost.
    losses = compare_catalogs(before, demo(serves), live, NOW).departures
    assert [(d.availability_id, d.before, d.after, d.booked) for d in losses] == [
        ("2026-06-01T16:00:00+01:00", 27, 15, 0),
        ("2026-06-02T16:00:00+01:00", 27, 15, 5),
    ]


def test_a_departure_that_has_left_is_not_in_the_way_but_a_day_that_has_not_ended_is() -> None:
    noon = NOW + timedelta(hours=3)  # 12:00 in London: the 10:00 walk has left
    left, later = booking("2026-06-01T10:00:00+01:00"), booking("2026-06-01T14:30:00+01:00")
    visit = booking("2026-06-01T00:00:00+01:00", product_id="museum")
    after = catalog(
        WALK,
        ('startTimes: ["10:00", "14:30"]', 'startTimes: ["11:00"]'),
        ("  - id: museum", "  - id: gallery"),
    )
    changes = compare_catalogs(catalog(), after, [left, later, visit], noon)
    assert changes.conflicts == (
        Conflict("museum", "DEFAULT", visit.availability_id, "product 'museum' is removed", places(visit)),
        Conflict("walk", "DEFAULT", later.availability_id, "the departure is removed", places(later)),
    )
    assert [d.availability_id for d in changes.departures] == ["2026-06-01T14:30:00+01:00"]


def test_the_contract_nets_an_import_puts_above_the_retail() -> None:
    """Issue 47, finding 4: reseller B buys the cruise's adult ticket at 18.75; halving it to
    12.50 puts that net above the retail. A revoked connection, an accepted loss and a net
    already above the old retail are not listed."""
    before = booking_catalog()
    after = catalog_of(*halved_products())
    entry = {"product": "thames-sightseeing", "option": "DEFAULT", "unit": "adult", "currency": "EUR"}

    def connection(name: str, net: int, revoked: bool = False, **extra: Any) -> Connection:
        contract = parse_contract({"rate": {"netPrices": [{**entry, "net": net, **extra}]}})
        return Connection(name, name, "…", NOW, NOW if revoked else None, contract, 1)

    connections = [
        connection("B", 1875),
        connection("revoked", 1875, revoked=True),
        connection("accepted", 1875, allowAboveRetail=True),
        connection("already", 3000),
        connection("below", 1250),
    ]
    changes = compare_catalogs(before, after, [], NOW, connections)
    assert [str(found) for found in changes.nets_above_retail] == [
        "B: rate.netPrices[0].net: EUR 18.75 is above the retail EUR 12.50 of thames-sightseeing / DEFAULT / adult"
    ]
    assert compare_catalogs(before, before, [], NOW, connections).nets_above_retail == ()
