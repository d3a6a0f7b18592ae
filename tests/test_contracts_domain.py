"""A contract's rate arithmetic and the catalogue it sells (domain/contracts.py), without I/O."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.catalog import MAX_AMOUNT, Price, Tax
from berth.domain.contracts import (
    Contract,
    NetPrice,
    Rate,
    catalog_problems,
    commission_price,
    contract_catalog,
    nets_above_retail,
    parse_contract,
    rated_prices,
)
from berth.domain.errors import BadRequest
from berth.domain.price_lines import LineKind, PriceLine, with_net
from berth.domain.pricing import price_on
from tests.bookings_helpers import booking_catalog
from tests.packages_helpers import PASS, packages_catalog


def _price(retail: int, *taxes: int, **dates: date) -> Price:
    return Price.model_validate(
        {
            "currency": "EUR",
            "retail": retail,
            "net": retail * 4 // 5,
            "includedTaxes": [
                {"name": f"T{i}", "retail": t, "original": t, "net": t * 4 // 5} for i, t in enumerate(taxes)
            ],
            **{key: value.isoformat() for key, value in dates.items()},
        }
    )


def test_commission_rounds_half_up_and_puts_the_tax_remainder_on_the_largest_tax() -> None:
    # 2500 at 20 %: commission 500, net 2000; VAT 417 scaled by 2000/2500 = 333.6 -> 334.
    sold = commission_price(_price(2500, 417), Decimal(20))
    assert (sold.retail, sold.net) == (2500, 2000)
    assert [t.net for t in sold.included_taxes] == [334]
    # 999 at 12.5 %: commission 124.875 -> 125, net 874. Taxes 100 and 33 scale by 874/999:
    # 87.49 -> 87 and 28.87 -> 29 make 116, but 133 x 874/999 = 116.36 -> 116: they add up.
    sold = commission_price(_price(999, 100, 33), Decimal("12.5"))
    assert sold.net == 874
    assert sum(t.net or 0 for t in sold.included_taxes) == 116


@given(
    retail=st.integers(min_value=0, max_value=10**9),
    percent=st.decimals(min_value=0, max_value=100, places=2),
    shares=st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=4),
)
def test_commission_parts_add_up_exactly(retail: int, percent: Decimal, shares: list[int]) -> None:
    weight = sum(shares) or 1
    taxes = [retail * s // (weight * 5) for s in shares]  # the taxes are a fifth of retail at most
    price = Price(
        currency="EUR",
        retail=retail,
        included_taxes=tuple(Tax(name=f"T{i}", retail=t, original=t) for i, t in enumerate(taxes)),
    )
    sold = commission_price(price, percent)
    assert isinstance(sold.net, int) and 0 <= sold.net <= retail
    expected_net = retail - int(
        (Decimal(retail) * percent / 100).quantize(Decimal(1), rounding="ROUND_HALF_UP")
    )
    assert sold.net == expected_net
    nets = [t.net for t in sold.included_taxes]
    assert all(isinstance(n, int) for n in nets)
    total_tax = sum(taxes)
    target = (
        0
        if retail == 0
        else int((Decimal(total_tax) * sold.net / retail).quantize(Decimal(1), rounding="ROUND_HALF_UP"))
    )
    assert sum(n or 0 for n in nets) == target


def test_a_price_list_entry_wins_and_its_seasons_are_dated_prices() -> None:
    rate = Rate(
        commission=Decimal(10),
        net_prices=(
            NetPrice(product="p", option="o", unit="adult", currency="EUR", net=1700),
            NetPrice.model_validate(
                {
                    "product": "p",
                    "unit": "adult",
                    "currency": "EUR",
                    "net": 1500,
                    "from": "2026-07-01",
                    "until": "2026-08-31",
                }
            ),
        ),
    )
    prices = rated_prices((_price(2500),), rate, "p", "o", "adult")
    assert price_on(prices, "EUR", date(2026, 6, 30)).net == 1700  # type: ignore[union-attr]
    assert price_on(prices, "EUR", date(2026, 7, 15)).net == 1500  # type: ignore[union-attr]
    assert all(p.retail == 2500 for p in prices)
    # A unit the list does not name falls back to the commission.
    child = rated_prices((_price(1500),), rate, "p", "o", "child")
    assert [p.net for p in child] == [1350]
    # A seasonal catalogue price keeps its own dates, narrowed to the entry's where they meet.
    summer = rated_prices((_price(3000, valid_from=date(2026, 8, 1)),), rate, "p", "o", "adult")
    assert [(p.net, p.valid_from, p.valid_until) for p in summer] == [
        (1500, date(2026, 8, 1), date(2026, 8, 31)),
        (1700, date(2026, 8, 1), None),
    ]


def test_the_catalogue_a_contract_sells() -> None:
    catalog = booking_catalog()
    contract = parse_contract(
        {
            "products": [
                {"product": "thames-sightseeing", "options": ["DEFAULT"]},
                {"product": "tower-of-stories"},
            ],
            "rate": {"commission": 25},
        }
    )
    sold = contract_catalog(catalog, contract, date(2026, 6, 1))
    assert [p.id for p in sold.products] == ["thames-sightseeing", "tower-of-stories"]
    cruise = sold.product("thames-sightseeing")
    assert cruise is not None and [o.id for o in cruise.options] == ["DEFAULT"]
    adult = cruise.options[0].unit("adult")
    assert adult is not None and [(p.retail, p.net) for p in adult.prices] == [(2500, 1875), (2200, 1650)]
    ended = contract.model_copy(update={"valid_until": date(2026, 5, 31)})
    assert contract_catalog(catalog, ended, date(2026, 6, 1)).products == ()
    assert ended.not_in_force(date(2026, 6, 1)) == "this connection's contract ended on 2026-05-31"
    assert contract_catalog(catalog, Contract(), date(2026, 6, 1)) is catalog


def test_a_booking_keeps_its_product_and_option_once_its_contract_no_longer_sells_them() -> None:
    """Its own option at the contract's rate, beside the options the contract sells; the
    product it is on once the contract sells it no longer, or has ended."""
    catalog, today = booking_catalog(), date(2026, 6, 1)
    daytime = parse_contract(
        {"products": [{"product": "thames-sightseeing", "options": ["DEFAULT"]}], "rate": {"commission": 10}}
    )
    sold = contract_catalog(catalog, daytime, today)
    assert sold.sells("thames-sightseeing", "DEFAULT") and not sold.sells("thames-sightseeing", "evening")
    assert sold.booked("thames-sightseeing", "DEFAULT") is sold.product("thames-sightseeing")
    cruise = sold.booked("thames-sightseeing", "evening")
    assert cruise is not None and [o.id for o in cruise.options] == ["DEFAULT", "evening"]
    evening = cruise.option("evening")
    adult = evening.unit("adult") if evening is not None else None
    assert adult is not None and [(p.retail, p.net) for p in adult.prices] == [(3500, 3150), (3000, 2700)]
    only_museum = parse_contract({"products": [{"product": "tower-of-stories"}], "rate": {"commission": 10}})
    kayak = contract_catalog(catalog, only_museum, today).booked("sunset-kayak", "DEFAULT")
    assert kayak is not None and [o.id for o in kayak.options] == ["DEFAULT"]
    assert [(p.retail, p.net) for p in kayak.options[0].booking_prices] == [(24000, 21600)]
    ended = contract_catalog(catalog, daytime.model_copy(update={"valid_until": date(2026, 5, 31)}), today)
    assert ended.products == () and ended.booked("thames-sightseeing", "evening") is not None
    assert sold.booked("thames-sightseeing", "no-such-option") is None
    assert sold.booked("no-such-product", "DEFAULT") is None
    assert catalog.booked("thames-sightseeing", "evening") is catalog.product("thames-sightseeing")


def test_a_bad_contract_names_every_field_in_error() -> None:
    with pytest.raises(BadRequest) as refused:
        parse_contract({"products": [{"prodct": "x"}], "rate": {"commission": 120}, "paymentTerms": "CASH"})
    problems = refused.value.extra["problems"]
    assert any(p.startswith("products[0].product") for p in problems)
    assert any(p.startswith("rate.commission") for p in problems)
    assert any(p.startswith("paymentTerms") for p in problems)


def test_a_package_is_sold_only_with_what_it_includes() -> None:
    pass_only = parse_contract({"products": [{"product": PASS["productId"]}]})
    problems = catalog_problems(pass_only, packages_catalog())
    assert problems and all("includes" in p and "sell both or neither" in p for p in problems)
    everything = parse_contract({"products": [{"product": p.id} for p in packages_catalog().products]})
    assert catalog_problems(everything, packages_catalog()) == []


def test_a_contract_ending_before_it_starts_names_both_dates() -> None:
    with pytest.raises(BadRequest) as refused:
        parse_contract({"validFrom": "2026-12-31", "validUntil": "2026-01-01"})
    assert refused.value.extra["problems"] == [
        "validUntil: 2026-01-01 is before validFrom 2026-12-31: a contract ends on or after the day it starts"
    ]


def _entry(net: int, **extra: object) -> NetPrice:
    return NetPrice.model_validate(
        {"product": "thames-sightseeing", "unit": "adult", "currency": "EUR", "net": net, **extra}
    )


def test_a_net_above_the_retail_is_sold_at_the_retail_unless_the_entry_accepts_it() -> None:
    # The finding: the adult ticket halved to 12.50 while the price list buys it at 18.75.
    halved = _price(1250, 208)
    capped = rated_prices((halved,), Rate(net_prices=(_entry(1875),)), "thames-sightseeing", "o", "adult")
    assert [(p.retail, p.net, [t.net for t in p.included_taxes]) for p in capped] == [(1250, 1250, [208])]
    accepted = rated_prices(
        (halved,), Rate(net_prices=(_entry(1875, allowAboveRetail=True),)), "thames-sightseeing", "o", "adult"
    )
    assert [(p.net, [t.net for t in p.included_taxes]) for p in accepted] == [(1875, [312])]
    summer = _entry(1875, **{"from": "2026-07-01", "until": "2026-08-31"})
    dated = rated_prices((halved,), Rate(net_prices=(summer,)), "thames-sightseeing", "o", "adult")
    assert [(p.net, p.valid_from) for p in dated] == [(1250, date(2026, 7, 1)), (1000, None)]


def test_nets_above_the_retail_are_named_per_entry_and_option() -> None:
    cruise = booking_catalog()  # adult 25.00 on DEFAULT, 35.00 on evening
    contract = Contract(rate=Rate(net_prices=(_entry(3000), _entry(9999, allowAboveRetail=True))))
    found = nets_above_retail(contract, cruise)
    assert [(f.index, f.option, f.retail) for f in found] == [(0, "DEFAULT", 2500)]
    assert str(found[0]) == (
        "rate.netPrices[0].net: EUR 30.00 is above the retail EUR 25.00 of thames-sightseeing / DEFAULT / adult"
    )
    assert catalog_problems(contract, cruise) == [
        f"{found[0]}: lower the net, or set allowAboveRetail: true on the entry to sell at a loss to this reseller"
    ]
    # A season is checked against every price whose travel dates it meets (here the undated ones).
    winter = Contract(rate=Rate(net_prices=(_entry(3000, **{"from": "2026-11-01", "until": "2027-02-28"}),)))
    assert [f.option for f in nets_above_retail(winter, cruise)] == ["DEFAULT"]


def test_a_net_above_the_maximum_amount_is_a_problem() -> None:
    too_large = Contract(rate=Rate(net_prices=(_entry(MAX_AMOUNT + 1, allowAboveRetail=True),)))
    assert catalog_problems(too_large, booking_catalog()) == [
        "rate.netPrices[0].net: 1000000000001 is above the maximum amount, 1,000,000,000,000 minor units"
    ]
    at_most = Contract(rate=Rate(net_prices=(_entry(MAX_AMOUNT, allowAboveRetail=True),)))
    assert catalog_problems(at_most, booking_catalog()) == []


def test_a_line_stored_above_its_retail_reads_at_the_retail_unless_accepted() -> None:
    line = PriceLine(LineKind.UNIT, "item-1", "adult", with_net(_price(2500, 417), 3750))
    document = line.to_document()
    assert document["acceptedAboveRetail"] is True
    assert PriceLine.from_document(document) == line
    legacy = {key: value for key, value in document.items() if key != "acceptedAboveRetail"}
    read = PriceLine.from_document(legacy).price
    assert (read.retail, read.net, [t.net for t in read.included_taxes]) == (2500, 2500, [417])
    below = PriceLine(LineKind.UNIT, "item-2", "adult", _price(2500, 417))
    assert "acceptedAboveRetail" not in below.to_document()
    assert PriceLine.from_document(below.to_document()) == below
