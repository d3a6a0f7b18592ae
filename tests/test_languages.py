from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from berth.domain.languages import (
    MAX_ACCEPTED,
    accepted_locales,
    choose_language,
    parse_accept_language,
    reading_language,
)


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


def test_accept_language_as_a_contacts_locales() -> None:
    assert accepted_locales("de-AT, en;q=0.5, *;q=0.1") == ("de-AT", "en")
    assert accepted_locales("en;q=0.2, zh-Hant-TW") == ("zh-Hant-TW", "en")
    assert accepted_locales("<script>, de, de, x;q=0") == ("de",)  # well-formed tags, once each
    assert accepted_locales("l10n, 1234, de-") == ()  # a language is letters, a subtag not empty
    assert accepted_locales(", ".join(["de"] + [f"en-{n:02}" for n in range(20)])) == (
        "de", *(f"en-{n:02}" for n in range(MAX_ACCEPTED - 1)),
    )  # fmt: skip
    assert accepted_locales(None) == accepted_locales("") == ()


@given(st.text(max_size=300))
def test_accepted_locales_are_always_short_tags(header: str) -> None:
    tags = accepted_locales(header)
    assert len(tags) <= MAX_ACCEPTED and len(set(tags)) == len(tags)
    assert all(
        0 < len(tag) <= 35 and tag.replace("-", "").isascii() and tag.replace("-", "").isalnum()
        for tag in tags
    )


def test_a_guest_reads_the_content_language_else_berths_own_texts() -> None:
    texts = ("en", "de")
    assert reading_language(["de-AT"], ["en-GB", "de-DE"], texts, "en-GB") == "de-DE"  # content in it
    assert reading_language(["de"], ["en-GB", "de-DE"], texts, "en-GB") == "de-DE"  # ... its region too
    assert reading_language(["en"], ["en-GB", "de-DE"], texts, "en-GB") == "en-GB"  # 29 November
    assert reading_language(["de-AT"], ["en-GB"], texts, "en-GB") == "de"  # Berth's labels in it
    assert reading_language(["fr", "de"], ["en-GB", "fr-FR"], texts, "en-GB") == "fr-FR"  # the first wins
    assert reading_language(["de-DE", "en"], ["en-GB"], texts, "en-GB") == "de"  # ... Berth's own too
    assert reading_language(["ja"], ["en-GB"], texts, "en-GB") == "en-GB"
    assert reading_language([], ["en-GB", "de-DE"], texts, "en-GB") == "en-GB"
