"""octo/extras without I/O: the catalogue rules of extras, and how a request changes the pieces
a booking and its unit items have."""

from __future__ import annotations

from typing import Any

import pytest

from berth.capabilities.extras.extension import BookedExtras, Piece, merge
from berth.domain.bookings import UnitItem
from berth.domain.catalog.document import CatalogFileError
from berth.domain.errors import BadRequest, UnprocessableEntity
from tests.builders import catalog, extra, option, price, product
from tests.extras_helpers import extras_catalog

CRUISE = extras_catalog().products[-1]
DEFAULT, DECK = CRUISE.options
ITEMS = (UnitItem("u1", "guest", "R1"), UnitItem("u2", "guest", "R2"))


def problems(*extras: dict[str, Any], **extra_fields: Any) -> list[str]:
    with pytest.raises(CatalogFileError) as raised:
        catalog(product("boat", options=[option(extras=list(extras))], **extra_fields))
    return [p.message for p in raised.value.problems]


def test_catalogue_rules() -> None:
    assert problems(extra("tea", [price(100)]), extra("tea", [price(100)])) == ["duplicate extra id 'tea'"]
    assert problems(extra("tea", [price(100)], minQuantity=3, maxQuantity=2)) == [
        "minQuantity is above maxQuantity (2)"
    ]
    assert problems(extra("tea")) == ["prices are required: the product is priced in EUR"]
    assert problems(extra("tea", [price(100), price(90, currency="USD")])) == [
        "the product is not priced in USD"
    ]
    assert problems(extra("tea", [price(100)], stock=3), availabilityRequired=False) == [
        "a stock per departure needs availability"
    ]


def test_merge_keeps_ids_and_drops_what_is_no_longer_offered() -> None:
    kept = BookedExtras(
        (Piece("p1", "champagne"), Piece("p2", "blanket")),
        {"u1": (Piece("p3", "lunch"),), "u0": (Piece("p4", "lunch"),)},
    )
    merged = merge(CRUISE, DEFAULT, ITEMS, kept, None, complete=False)
    assert merged == BookedExtras((Piece("p1", "champagne"),), {"u1": (Piece("p3", "lunch"),), "u2": ()})
    more = merge(
        CRUISE, DEFAULT, ITEMS, merged, {"extraItems": [{"extraId": "champagne"}] * 2}, complete=False
    )
    assert more.booking[0] == Piece("p1", "champagne") and more.booking[1].id != "p1"
    assert more.counts() == {"champagne": 2, "lunch": 1}
    cleared = merge(CRUISE, DEFAULT, ITEMS, more, {"unitItems": [{"extraItems": []}, {}]}, complete=False)
    assert cleared.items == {"u1": (), "u2": ()} and cleared.to_document() is not None
    assert BookedExtras.from_document(more.to_document()) == BookedExtras(
        more.booking, {"u1": more.items["u1"]}
    )
    assert BookedExtras().to_document() is None


def test_quantities() -> None:
    with pytest.raises(BadRequest, match="at most 1 of extra 'photos' per booking; 2 given"):
        merge(
            CRUISE,
            DEFAULT,
            ITEMS,
            BookedExtras(),
            {"extraItems": [{"extraId": "photos"}] * 2},
            complete=False,
        )
    merge(CRUISE, DECK, ITEMS, BookedExtras(), None, complete=False)  # a hold may choose later
    with pytest.raises(UnprocessableEntity, match="at least 1 of extra 'blanket' per booking; 0 given"):
        merge(CRUISE, DECK, ITEMS, BookedExtras(), None, complete=True)
