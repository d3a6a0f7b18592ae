"""The shop's pure rules: a guest's party, extras, pickup, answers and details against the
catalogue (OCTO's rules in a guest's terms), the limits on holds, the manage links' tokens, the
framing origins, the month calendar and the prices shown before anything is held."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.domain.catalog import Catalog, Product
from berth.domain.shop_access import (
    HoldLimits,
    LiveHolds,
    Refusal,
    frame_ancestors,
    hold_refusal,
    looks_like_token,
    manage_token,
    shop_key,
    token_hash,
    token_of,
)
from berth.domain.shop_party import (
    Choice,
    Problem,
    Rule,
    choice_problems,
    contact_problems,
    extra_bounds,
    include_problems,
    party_problems,
    pieces_per_item,
    required_contact,
    unit_items,
)
from berth.domain.shop_prices import Amount, from_price, lowest_on, month_weeks, party_price
from berth.http.shop.rendering import content_security_policy
from berth.http.shop.wording import problem_text
from berth.translations import Words
from tests.bookings_helpers import booking_products
from tests.builders import catalog, included
from tests.packages_helpers import city_pass
from tests.pickups_helpers import STATION
from tests.questions_helpers import BORN, NOTES, SWIM, WAIVER
from tests.shop_helpers import shop_catalog

CATALOG: Catalog = shop_catalog()


def product(product_id: str) -> Product:
    found = CATALOG.product(product_id)
    assert found is not None
    return found


CRUISE = product("thames-sightseeing")
MUSEUM = product("tower-of-stories")
KAYAK = product("sea-kayak")
COACH = product("highland-coach")
LUNCH = product("lunch-cruise")
BIKES = product("city-bike-hire")
DAY = date(2026, 6, 2)


def rules(found: list[Problem]) -> list[tuple[Rule, str]]:
    return [(p.rule, p.at) for p in found]


def test_a_party_meets_the_options_and_each_units_rules() -> None:
    option = CRUISE.default_option
    assert party_problems(option, {}) == [Problem(Rule.NO_GUESTS, "party")]
    assert party_problems(option, {"adult": 2, "child": 1}) == []
    assert rules(party_problems(option, {"child": 2})) == [(Rule.UNACCOMPANIED, "unit-child")]
    assert rules(party_problems(option, {"adult": 13})) == [(Rule.TOO_MANY, "party")]
    museum = MUSEUM.default_option
    assert party_problems(museum, {"family": 1, "child": 2}) == []  # a child may come with a family ticket
    assert rules(party_problems(museum, {"family": 3})) == [(Rule.UNIT_TOO_MANY, "unit-family")]
    assert unit_items(option, {"child": 1, "adult": 2}) == ["adult", "adult", "child"]  # the option's order


@given(st.integers(0, 30), st.integers(1, 10))
def test_per_unit_extras_are_shared_within_each_items_bounds(pieces: int, items: int) -> None:
    lunch = LUNCH.default_option.extra("lunch")
    assert lunch is not None and lunch.per_unit
    fewest, most = extra_bounds(lunch, items)
    shared = pieces_per_item(lunch, items, pieces)
    assert sum(shared) == pieces and len(shared) == items
    assert max(shared) - min(shared) <= 1
    if fewest <= pieces <= most:
        assert all(lunch.min_quantity <= count <= (lunch.max_quantity or 100) for count in shared)


def test_extras_pickups_and_answers_are_each_said_at_their_field() -> None:
    lunch = Choice(units={"guest": 2}, extras={"photos": 2, "lunch": 3})
    assert rules(choice_problems(LUNCH, LUNCH.default_option, lunch)) == [
        (Rule.EXTRA_TOO_MANY, "extra-photos"),
        (Rule.EXTRA_TOO_MANY, "extra-lunch"),
    ]
    deck = LUNCH.option("deck")
    assert deck is not None
    assert rules(choice_problems(LUNCH, deck, Choice(units={"guest": 1}))) == [
        (Rule.EXTRA_TOO_FEW, "extra-blanket")
    ]
    coach = COACH.default_option
    assert rules(choice_problems(COACH, coach, Choice(units={"adult": 1}))) == [
        (Rule.PICKUP_REQUIRED, "pickup")
    ]
    assert choice_problems(COACH, coach, Choice(units={"adult": 1}, pickup_point_id=STATION)) == []
    assert rules(choice_problems(COACH, coach, Choice(units={"adult": 1}, pickup_point_id="nope"))) == [
        (Rule.PICKUP_UNKNOWN, "pickup")
    ]
    answered = Choice(
        units={"paddler": 2},
        answers={WAIVER: "accept", SWIM: "maybe", NOTES: "x" * 21},
        item_answers=({BORN: "1990-01-31"}, {BORN: "31/01/1990"}),
    )
    found = choice_problems(KAYAK, KAYAK.default_option, answered)
    assert rules(found) == [
        (Rule.ANSWER_NOT_AN_OPTION, f"answer-{SWIM}"),
        (Rule.ANSWER_TOO_LONG, f"answer-{NOTES}"),
        (Rule.ANSWER_WRONG_FORMAT, f"answer-1-{BORN}"),
    ]
    assert found[1].values["most"] == 20


def test_the_details_the_shop_asks_and_their_refusals() -> None:
    kayak = product("sunset-kayak")
    asked = [f.value for f in required_contact(kayak.default_option, ["paddler"])]
    assert asked == ["firstName", "lastName", "emailAddress", "phoneNumber"]
    required = required_contact(CRUISE.default_option, ["adult"])
    full = {"firstName": "Ada", "lastName": "Lovelace", "emailAddress": "ada@example.com"}
    assert contact_problems(required, full, email_ok=True, accepted=True) == []
    refused = contact_problems(
        required, {**full, "lastName": " ", "firstName": "A" * 201}, email_ok=False, accepted=False
    )
    assert rules(refused) == [
        (Rule.CONTACT_TOO_LONG, "firstName"),
        (Rule.CONTACT_MISSING, "lastName"),
        (Rule.EMAIL_INVALID, "emailAddress"),
        (Rule.TERMS, "terms"),
    ]


def test_holds_are_limited_per_browser_per_address_and_by_places() -> None:
    limits = HoldLimits(per_session=2, per_address=5, places_per_address=20)
    assert hold_refusal(limits, LiveHolds(1, 4, 10), 10) is None
    assert hold_refusal(limits, LiveHolds(2, 2, 4), 1) is Refusal.SESSION
    assert hold_refusal(limits, LiveHolds(0, 5, 4), 1) is Refusal.ADDRESS
    assert hold_refusal(limits, LiveHolds(0, 1, 15), 6) is Refusal.PLACES


def test_a_manage_token_is_256_bits_found_by_its_hash_under_the_current_or_an_earlier_key() -> None:
    old, new = (
        shop_key("an earlier key of 32 characters..", "manage links"),
        shop_key("k" * 32, "manage links"),
    )
    token = manage_token(old, "booking-1", "salt")
    assert looks_like_token(token) and len(token) == 43
    assert (
        manage_token(old, "booking-2", "salt") != token and manage_token(old, "booking-1", "pepper") != token
    )
    assert token_of([new, old], "booking-1", "salt", token_hash(token)) == token
    assert token_of([new], "booking-1", "salt", token_hash(token)) is None
    assert not looks_like_token("booking-1") and not looks_like_token("a/" * 21 + "a")


def test_only_origins_may_frame_the_shop() -> None:
    assert frame_ancestors("") == "'self'"
    assert frame_ancestors("https://www.example.com, http://localhost:8080") == (
        "'self' https://www.example.com http://localhost:8080"
    )
    for wrong in ("https://example.com/shop", "*", "example.com", "https://*.example.com"):
        with pytest.raises(ValueError, match="BERTH_SHOP_ORIGINS"):
            frame_ancestors(wrong)


def test_the_policy_allows_stripe_only_where_it_is_given() -> None:
    plain = content_security_policy("'self'")
    assert "script-src 'self';" in plain and "frame-src" not in plain and "frame-ancestors 'self'" in plain
    stripe = content_security_policy("'self'", "https://js.stripe.com/v3/")
    assert "script-src 'self' https://js.stripe.com;" in stripe
    assert "frame-src https://js.stripe.com https://hooks.stripe.com;" in stripe
    assert "connect-src 'self' https://api.stripe.com;" in stripe
    stand_in = content_security_policy("'self'", "http://127.0.0.1:8420/js.stripe.com/v3/")
    assert "script-src 'self' http://127.0.0.1:8420;" in stand_in


def test_calendar_weeks_and_the_prices_shown_before_a_hold() -> None:
    weeks = month_weeks(2026, 6)
    assert weeks[0][0] == date(2026, 6, 1) and weeks[-1][1] == date(2026, 6, 30) and weeks[-1][2] is None
    option = CRUISE.default_option
    assert lowest_on(CRUISE, option, DAY, "EUR", None) == Amount(1500, "EUR", 2)
    assert party_price(CRUISE, option, {"adult": 2, "child": 1}, DAY, "EUR", None) == Amount(6500, "EUR", 2)
    assert from_price(CRUISE, DAY, "GBP") == Amount(1300, "GBP", 2)
    kayak = product("sunset-kayak")
    assert party_price(kayak, kayak.default_option, {"paddler": 4}, DAY, "EUR", None) == Amount(
        24000, "EUR", 2
    )
    bikes = BIKES.default_option
    durations = {d.id: d for d in bikes.rental_durations}
    assert len(durations) > 1
    shortest = min(durations.values(), key=lambda d: d.pricing_multiplier)
    day_price = party_price(BIKES, bikes, {"bike": 1}, DAY, BIKES.currency or "", None)
    rental = party_price(BIKES, bikes, {"bike": 1}, DAY, BIKES.currency or "", shortest)
    assert day_price is not None and rental is not None and rental.minor < day_price.minor


def test_a_packages_includes_chosen_against_its_rules_are_each_said() -> None:
    """octo/packages' rules in the shop: a required include without its time, more optional
    includes than their group's count, an include that cannot take a unit of the party."""
    document = city_pass()
    extras = document["options"][0]["packageIncludes"][1]["includes"]
    extras.append(included("museum-again", "tower-of-stories", required=False, availabilityRequired=True))
    found = catalog(*booking_products(), document)
    city = found.product("harbour-city-pass")
    assert city is not None
    option = city.default_option
    chosen = {"museum": "m", "kayak": "k", "museum-again": "m"}
    problems = include_problems(found, option, {"adult": 1, "child": 1}, chosen)
    assert rules(problems) == [
        (Rule.INCLUDE_REQUIRED, "include-cruise"),
        (Rule.INCLUDE_NOT_FOR_PARTY, "include-kayak"),
        (Rule.GROUP_TOO_MANY, "group-extras"),
    ]
    names = {"cruise": "Thames cruise", "kayak": "Sunset kayak", "child": "Child", "extras": "Optional extra"}
    for language, said in (
        ("en", ["Thames cruise: choose a time.", "Sunset kayak cannot be booked for Child.",
                "Optional extra: choose at most 1."]),
        ("de", ["Thames cruise: Bitte wählen Sie eine Zeit.", "Sunset kayak ist für Child nicht buchbar.",
                "Optional extra: Wählen Sie höchstens 1."]),
    ):  # fmt: skip
        assert [problem_text(Words(language), p, lambda key: names.get(key, key)) for p in problems] == said
    assert include_problems(found, option, {"adult": 2}, {"cruise": "c", "museum": "m", "kayak": "k"}) == []
