"""octo/pickups without I/O: the catalogue rules of pickup points, how a request changes a
booking's pickup and what an option accepts, and the times of a point for a departure."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from berth.capabilities.pickups.extension import Pickup, check, merge
from berth.capabilities.pickups.points import point_view
from berth.domain.catalog.document import CatalogFileError
from berth.domain.errors import BadRequest, UnprocessableEntity
from berth.domain.pickups import address_of, pickup_window
from berth.domain.slots import Slot
from tests.builders import catalog, option, pickup_point, product
from tests.pickups_helpers import GRAND, STATION, coach_tour, pickups_catalog

LONDON = ZoneInfo("Europe/London")
CATALOG = pickups_catalog()
COACH = CATALOG.products[-1]
REQUIRED, MEET = COACH.options
PLAIN = COACH.options[0].model_copy(update={"pickup_points": (), "pickup_required": False})


def problems(*options: dict[str, Any], **extra: Any) -> list[str]:
    with pytest.raises(CatalogFileError) as raised:
        catalog(product("coach", options=list(options), **extra))
    return [p.message for p in raised.value.problems]


def test_the_coach_tour_is_a_valid_catalogue() -> None:
    assert [p.id for p in REQUIRED.pickup_points][:2] == [GRAND, STATION]
    assert REQUIRED.pickup_point(GRAND) is not None and REQUIRED.pickup_point("nowhere") is None
    assert coach_tour()["options"][0]["pickupRequired"] is True


def test_catalogue_rules() -> None:
    uuid = "11111111-2222-4333-8444-555555555555"
    assert problems(option(pickupRequired=True)) == [
        "option 'DEFAULT' requires pickup but has no pickupPoints"
    ]
    assert problems(option(pickupPoints=[pickup_point("hotel-1", "Hotel", 30)])) == [
        "pickup point ids are UUIDs (OCTO PickupPoint.id); 'hotel-1' is not"
    ]
    assert problems(
        option(pickupPoints=[pickup_point(uuid, "Hotel", 30), pickup_point(uuid, "Other", 20)])
    ) == [f"duplicate pickup point id {uuid!r}"]
    assert problems(option(pickupPoints=[pickup_point(uuid, "Hotel", 10, window=15)])) == [
        "the pickup window closes at the departure at the latest: at most 10 (minutesBefore)"
    ]
    assert problems(option(pickupPoints=[pickup_point(uuid, "Hotel", 10, latitude=55.9)])) == [
        "give latitude and longitude together, or neither"
    ]
    assert problems(option(pickupPoints=[pickup_point(uuid, "Hotel", 10)]), availabilityRequired=False) == [
        "pickups need availability: a pickup time is counted back from the departure"
    ]


def _slot(hour: int) -> Slot:
    start = datetime(2026, 6, 2, hour, tzinfo=LONDON)
    return Slot("x", date(2026, 6, 2), start, start, False, (), 20, False, start.astimezone(UTC))


def test_a_points_window_counts_back_from_the_departure() -> None:
    grand = REQUIRED.pickup_point(GRAND)
    assert grand is not None
    opens, closes = pickup_window(grand, _slot(10))
    assert (opens.isoformat(), closes.isoformat()) == (
        "2026-06-02T09:15:00+01:00",
        "2026-06-02T09:30:00+01:00",
    )
    view = point_view(grand, None)
    assert (view["localDateTime"], view["localDateTimeTo"]) == (None, None)
    assert address_of(grand) == "1 Princes Street, EH2 2EQ, Edinburgh, GB"


def test_merge_replaces_what_is_sent_and_keeps_the_rest() -> None:
    kept = Pickup(True, GRAND, None, None)
    assert merge(kept, None) == kept
    assert merge(kept, {"pickupHotel": "Balmoral"}) == Pickup(True, GRAND, "Balmoral", None)
    assert merge(kept, {"pickupPointId": None}) == Pickup(True, None, None, None)
    assert merge(Pickup(), {"pickupPointId": STATION}) == Pickup(True, STATION, None, None)
    assert merge(kept, {"pickupRequested": False}) == Pickup()
    with pytest.raises(BadRequest):
        merge(kept, {"pickupRequested": False, "pickupHotel": "Balmoral"})
    assert Pickup().to_document() is None
    assert Pickup.from_document(kept.to_document()) == kept


def test_check_what_an_option_accepts() -> None:
    check(COACH, PLAIN, Pickup(), complete=True)
    check(COACH, REQUIRED, Pickup(), complete=False)  # a hold may choose later
    with pytest.raises(BadRequest, match="offers no pickup"):
        check(COACH, PLAIN, Pickup(True), complete=False)
    with pytest.raises(BadRequest, match="not a pickup point of option 'meet'"):
        check(COACH, MEET, Pickup(True, STATION), complete=False)
    with pytest.raises(UnprocessableEntity, match="requires pickup"):
        check(COACH, REQUIRED, Pickup(), complete=True)
    with pytest.raises(UnprocessableEntity, match="without a place"):
        check(COACH, MEET, Pickup(True), complete=True)
    check(COACH, MEET, Pickup(True, None, "Balmoral", "7"), complete=True)
