from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.languages import choose_language, parse_accept_language


def test_parse_orders_by_quality_then_position() -> None:
    assert parse_accept_language("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5") == [
        "fr-CH",
        "fr",
        "en",
        "de",
    ]
    assert parse_accept_language("de;q=0, en;q=bad, it") == ["it"]


def test_choose_exact_then_primary_language() -> None:
    available = ["en-GB", "de-DE"]
    assert choose_language("de-DE", available) == "de-DE"
    assert choose_language("de-AT", available) == "de-DE"
    assert choose_language("EN-us", available) == "en-GB"
    assert choose_language("fr, de;q=0.5", available) == "de-DE"
    assert choose_language("fr", available) is None
    assert choose_language(None, available) is None


@given(st.text(max_size=60), st.lists(st.sampled_from(["en-GB", "de-DE", "fr", "es-ES"]), unique=True))
def test_choice_is_always_available_or_none(header: str, available: list[str]) -> None:
    chosen = choose_language(header, available)
    assert chosen is None or chosen in available
