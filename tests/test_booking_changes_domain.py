"""What a change of a booking sells (domain/bookings.py `sold_anew`) and which of its price lines
it keeps (domain/price_lines.py), without I/O (issue 47)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.bookings import Booking, BookingStatus, Contact, UnitItem, sold_anew
from berth.domain.catalog import Price
from berth.domain.price_lines import LineKind, Priceable, PriceLine, price_lines

T0 = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
ADULT = Price.model_validate({"currency": "EUR", "retail": 2500, "net": 2000})
HALF = Price.model_validate({"currency": "EUR", "retail": 1250, "net": 1000})
CHILD = Price.model_validate({"currency": "EUR", "retail": 750, "net": 600})


def _item(uuid: str, unit_id: str = "adult") -> UnitItem:
    return UnitItem(uuid=uuid, unit_id=unit_id, supplier_reference=f"S-{uuid}")


def _line(item: UnitItem, price: Price = ADULT) -> PriceLine:
    return PriceLine(LineKind.UNIT, item.uuid, item.unit_id, price)


def _booking(*items: UnitItem) -> Booking:
    return Booking(
        id="b", uuid="u", connection_id="c", test_mode=False, status=BookingStatus.CONFIRMED,
        product_id="cruise", option_id="evening", availability_id="2026-06-04T19:30:00+01:00",
        slot_start=T0 + timedelta(days=3), local_date=None, pax=len(items), reseller_reference=None,
        supplier_reference="S", notes=None, contact=Contact(), unit_items=items, currency="EUR",
        freesale=False, request_fingerprint="f", created_at=T0,
        price_lines=tuple(_line(i) for i in items),
    )  # fmt: skip


SOLD = _booking(_item("a1"), _item("a2"))


def test_what_only_a_sale_gives_a_booking() -> None:
    a1, a2 = SOLD.unit_items
    child = _item("c1", "child")
    assert sold_anew(SOLD, replace(SOLD, option_id="DEFAULT")) == "another option"
    assert sold_anew(SOLD, replace(SOLD, availability_id="2026-06-05T19:30:00+01:00")) == "another departure"
    assert sold_anew(SOLD, replace(SOLD, slot_end=T0)) == "another rental duration"
    assert sold_anew(SOLD, replace(SOLD, unit_items=(a1, a2, _item("a3")), pax=3)) == "more places"
    # As many places, but a ticket it did not have: a child for an adult, or an adult made a child.
    assert sold_anew(SOLD, replace(SOLD, unit_items=(a1, child))) == "a unit item it did not have"
    assert sold_anew(SOLD, replace(SOLD, unit_items=(a1, replace(a2, unit_id="child")))) == (
        "a unit item it did not have"
    )
    picnic = PriceLine(LineKind.EXTRA, "piece-1", "picnic", CHILD)
    assert sold_anew(SOLD, replace(SOLD, price_lines=(*SOLD.price_lines, picnic))) == "a part priced now"


def test_fewer_places_notes_and_contact_sell_nothing() -> None:
    a1, _ = SOLD.unit_items
    fewer = replace(SOLD, unit_items=(a1,), pax=1, price_lines=SOLD.price_lines[:1])
    assert sold_anew(SOLD, fewer) is None
    assert sold_anew(SOLD, replace(SOLD, notes="window", contact=Contact({"firstName": "Ada"}))) is None
    assert (
        sold_anew(SOLD, replace(SOLD, unit_items=(replace(a1, reseller_reference="R"), SOLD.unit_items[1])))
        is None
    )
    assert sold_anew(SOLD, SOLD) is None


@given(kept=st.lists(st.booleans(), min_size=1, max_size=6), added=st.integers(min_value=0, max_value=3))
def test_a_change_sells_exactly_when_it_adds_a_unit_item(kept: list[bool], added: int) -> None:
    had = tuple(_item(f"a{i}") for i in range(len(kept)))
    before = _booking(*had)
    items = (
        *(item for item, keep in zip(had, kept, strict=True) if keep),
        *(_item(f"n{i}") for i in range(added)),
    )
    after = _booking(*items)
    assert (sold_anew(before, after) is None) == (added == 0)


def test_a_part_keeps_its_line_while_it_is_the_same_item() -> None:
    a1, a2 = SOLD.unit_items
    wanted = [
        Priceable(LineKind.UNIT, a1.uuid, "adult", HALF),
        Priceable(LineKind.UNIT, a2.uuid, "child", CHILD),
    ]
    lines = price_lines(wanted, SOLD.price_lines)
    # The adult keeps the price it was sold at; the item that became a child is sold now.
    assert [(line.item, line.price.retail) for line in lines] == [("adult", 2500), ("child", 750)]
    assert price_lines(wanted, SOLD.price_lines, reprice=True)[0].price.retail == 1250
