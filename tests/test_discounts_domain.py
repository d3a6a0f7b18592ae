"""The discount of priced lines (domain.discounts) and when an offer can be used
(domain.offer_rules), without I/O: every amount adds up, whatever the prices, taxes, nets,
offers and net rules."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from berth.domain.catalog import Price, Tax
from berth.domain.discounts import OfferTerms, best_offer, discounted, without_discount
from berth.domain.offer_rules import Sale, Uses, unusable_reason
from berth.domain.offers import DiscountPer, NetDiscount, Offer, parse_offers
from berth.domain.price_lines import LineKind, PriceLine

NOW = datetime(2026, 6, 1, 8, tzinfo=UTC)


@st.composite
def prices(draw: st.DrawFn) -> Price:
    retail = draw(st.integers(0, 1_000_000))
    taxes = draw(st.lists(st.integers(0, retail), max_size=3))
    if sum(taxes) > retail:
        taxes = []
    net = draw(st.none() | st.integers(0, retail))
    return Price(
        currency="EUR",
        retail=retail,
        net=net,
        included_taxes=tuple(
            Tax(name=f"T{i}", retail=t, original=t, net=None if net is None else t * net // max(retail, 1))
            for i, t in enumerate(taxes)
        ),
    )


@st.composite
def terms(draw: st.DrawFn) -> OfferTerms:
    percent = draw(st.none() | st.decimals(Decimal("0.01"), Decimal(100), places=2))
    return OfferTerms(
        offer_id="o",
        octo_id="u",
        code="CODE",
        titles={"en": "Offer"},
        net_discount=draw(st.sampled_from(NetDiscount)),
        percent=percent,
        amount=None if percent is not None else draw(st.integers(1, 2_000_000)),
        per=draw(st.sampled_from(DiscountPer)),
        unit_ids=draw(st.none() | st.just(frozenset({"adult"}))),
    )


def lines_of(found: list[tuple[str, Price]]) -> tuple[PriceLine, ...]:
    return tuple(PriceLine(LineKind.UNIT, str(i), unit, price) for i, (unit, price) in enumerate(found))


@settings(deadline=None)  # no timing in tests: a loaded machine is slow, not wrong
@given(st.lists(st.tuples(st.sampled_from(["adult", "child"]), prices()), min_size=1, max_size=6), terms())
def test_every_discounted_line_adds_up(found: list[tuple[str, Price]], offer: OfferTerms) -> None:
    before = lines_of(found)
    after = discounted(before, offer)
    for old, new in zip(before, after, strict=True):
        taken = new.discount
        if taken is None:
            assert new == old
            continue
        assert offer.applies_to(old)
        assert new.price.retail + taken.retail == old.price.retail
        assert new.price.original == old.price.original_or_retail
        assert new.price.retail >= 0
        if old.price.net is not None:
            assert new.price.net is not None and 0 <= new.price.net <= new.price.retail
            assert new.price.net + taken.net == old.price.net
        assert sum(t.retail for t in new.price.included_taxes) <= new.price.retail
        for old_tax, new_tax in zip(old.price.included_taxes, new.price.included_taxes, strict=True):
            assert new_tax.retail + taken.tax_retail(old_tax.name) == old_tax.retail
        # Discounting again from the discounted lines gives the same lines: kept lines stay.
    assert discounted(after, offer) == after
    assert tuple(without_discount(line) for line in after) == tuple(
        PriceLine(o.kind, o.ref, o.item, _plain(o.price)) for o in before
    )


def _plain(price: Price) -> Price:
    """A price as `without_discount` gives it back: an `original` equal to the retail unsaid."""
    return price if price.original != price.retail else price.model_copy(update={"original": None})


@settings(deadline=None)
@given(st.lists(st.tuples(st.just("adult"), prices()), min_size=1, max_size=6), st.integers(1, 3_000_000))
def test_an_amount_per_booking_takes_off_exactly_the_amount_or_everything(
    found: list[tuple[str, Price]], amount: int
) -> None:
    offer = OfferTerms("o", "u", None, {}, NetDiscount.FULL, None, amount, DiscountPer.BOOKING, None)
    before = lines_of(found)
    total = sum(line.price.retail for line in before)
    taken = sum(line.discount.retail for line in discounted(before, offer) if line.discount is not None)
    assert taken == min(amount, total)


def test_the_net_follows_the_offers_rule() -> None:
    """docs/offers.md's worked example: EUR 32.00 at 20 % commission, 10 % off."""
    line = lines_of([("adult", Price(currency="EUR", retail=3200, net=2560))])
    nets = {}
    for rule in NetDiscount:
        offer = OfferTerms("o", "u", "X", {}, rule, Decimal(10), None, DiscountPer.UNIT, None)
        nets[rule] = discounted(line, offer)[0].price.net
    assert nets == {
        NetDiscount.NONE: 2560,
        NetDiscount.FULL: 2240,
        NetDiscount.SPLIT: 2400,
        NetDiscount.PRORATED: 2304,
    }


def _offer(**fields: object) -> Offer:
    document = {
        "offers": [{"id": "o", "texts": {"en": {"title": "O"}}, "discount": {"percent": 10}, **fields}]
    }
    return parse_offers(document).offers[0]


def sale(**changes: object) -> Sale:
    fields: dict[str, object] = {
        "channel": "reseller",
        "shop": False,
        "product_id": "tour",
        "option_id": "DEFAULT",
        "travel_date": date(2026, 6, 3),  # a Wednesday
        "now": NOW,
        "currency": "EUR",
        "unit_ids": ("adult", "adult"),
        "total": 5000,
        **changes,
    }
    return Sale(**fields)  # type: ignore[arg-type]


def test_why_an_offer_cannot_be_used() -> None:
    cases = [
        (_offer(active=False), sale(), "it is paused"),
        (_offer(saleFrom="2026-06-02T00:00:00Z"), sale(), "it can be used from 2026-06-02T00:00:00+00:00"),
        (_offer(channels=["SHOP"]), sale(), "it is not offered on this sales channel"),
        (_offer(channels=["SHOP"]), sale(shop=True), None),
        (
            _offer(appliesTo=[{"product": "other"}]),
            sale(),
            "it does not apply to product 'tour', option 'DEFAULT'",
        ),
        (_offer(travelUntil="2026-06-02"), sale(), "it is for travel until 2026-06-02"),
        (_offer(weekdays=["SAT", "SUN"]), sale(), "only available on Sat and Sun"),
        (_offer(minDaysAhead=3), sale(), "it is for bookings made at least 3 days before travel"),
        (_offer(minDaysAhead=2), sale(), None),
        (_offer(minUnits=3), sale(), "it needs at least 3 units it applies to; the booking has 2"),
        (
            _offer(minTotal={"EUR": 6000}),
            sale(),
            "it needs a total of at least EUR 60.00; the booking's is EUR 50.00",
        ),
        (_offer(discount={"amounts": {"GBP": 100}}), sale(), "it has no discount in EUR"),
        (_offer(weekdays=["WED"]), sale(travel_date=None), "it is only for dated travel"),
    ]
    assert [unusable_reason(offer, s) for offer, s, _ in cases] == [why for _, _, why in cases]
    limited = _offer(maxUses=2, maxUsesPerEmail=1)
    assert unusable_reason(limited, sale(), Uses(2, 0)) == "it has been used as many times as it may be"
    assert (
        unusable_reason(limited, sale(), Uses(1, 1))
        == "this email address has used it as many times as it may"
    )
    assert unusable_reason(limited, sale(), Uses(1, 0)) is None


def test_the_best_automatic_offer_takes_most_off() -> None:
    lines = lines_of(
        [("adult", Price(currency="EUR", retail=1000)), ("child", Price(currency="EUR", retail=500))]
    )
    ten = _offer(discount={"percent": 10})
    flat = _offer(id="flat", discount={"amounts": {"EUR": 200}, "per": "BOOKING"})
    assert best_offer([ten, flat], "tour", "DEFAULT", "EUR", lines) == flat
    pounds = _offer(id="pounds", discount={"amounts": {"GBP": 500}})
    assert best_offer([pounds], "tour", "DEFAULT", "EUR", lines) is None  # no amount in euros: nothing off
