"""Berth's own words for guests: gettext catalogues (German complete, a test fails for a text
without German), dates, money and country names by Babel, addresses in their country's order."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from berth.domain.addresses import address_parts
from berth.domain.catalog import PostalAddress
from berth.translations import FOLDER, LANGUAGES, Words

SOURCE = Path(__file__).parent.parent / "src" / "berth"
# The names Berth's own texts are written under: a Words object (`words`, `t` in templates, `self`
# in Words, `page.words`), marked for later (`N_`), and a capability's ticket line's label.
KEYWORDS: dict[str, Any] = {"words": None, "t": None, "self": None, "N_": None, "TicketLine": None}
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def berths_texts() -> dict[str, str]:
    """Every text Berth writes for guests, found in its source and mail templates: text -> where."""
    found: dict[str, str] = {}
    methods = [
        ("**.py", "python"),
        ("**/mail/templates/*", "jinja2.ext:babel_extract"),
        ("**/shop/templates/*", "jinja2.ext:babel_extract"),
    ]
    for filename, line, message, _, _ in extract_from_dir(str(SOURCE), method_map=methods, keywords=KEYWORDS):
        if isinstance(message, str):
            found.setdefault(message, f"{filename}:{line}")
    return found


def test_every_text_berth_writes_for_guests_has_german() -> None:
    texts = berths_texts()
    assert "Meeting point" in texts and "Hello {name}," in texts and "Pickup" in texts  # the search works
    assert LANGUAGES == ("en", "de")
    with (FOLDER / "de.po").open("rb") as po:
        german = {str(m.id): str(m.string or "") for m in read_po(po) if m.id}
    missing = {text: where for text, where in texts.items() if not german.get(text)}
    assert not missing, f"texts without German in src/berth/translations/de.po: {missing}"
    for text, translated in german.items():
        assert set(PLACEHOLDER.findall(translated)) == set(PLACEHOLDER.findall(text)), text
    unused = set(german) - set(texts)
    assert not unused, f"de.po translates texts Berth no longer writes: {unused}"


def test_money_dates_and_countries_follow_the_language() -> None:
    german, english = Words("de-DE"), Words("en-GB")
    assert german.money(4000, "EUR", 2) == "40,00\N{NO-BREAK SPACE}€"
    assert english.money(4000, "EUR", 2) == "€40.00"
    assert german.money(1250, "GBP", 2) == "12,50\N{NO-BREAK SPACE}£"
    assert german("Meeting point") == "Treffpunkt" and english("Meeting point") == "Meeting point"
    assert Words("fr-FR")("Meeting point") == "Meeting point"  # no French texts: English
    assert german.country("GB") == "Vereinigtes Königreich" and english.country("DE") == "Germany"


def test_addresses_are_written_in_their_countrys_order() -> None:
    def written(**fields: str) -> str:
        return ", ".join(address_parts(PostalAddress.model_validate(fields)))

    street = {"streetAddress": "Hafenstraße 1"}
    assert written(**street, postalCode="20457", addressLocality="Hamburg", addressCountry="DE") == (
        "Hafenstraße 1, 20457 Hamburg"
    )
    assert written(streetAddress="1 Harbour Walk", postalCode="SE1 9PP", addressLocality="London",
                   addressCountry="GB") == "1 Harbour Walk, London, SE1 9PP"  # fmt: skip
    assert written(streetAddress="1 Congress Ave", postalCode="78701", addressLocality="Austin",
                   addressRegion="TX", addressCountry="US") == "1 Congress Ave, Austin, TX 78701"  # fmt: skip
    hamburg = PostalAddress.model_validate(
        {**street, "postalCode": "20457", "addressLocality": "Hamburg", "addressCountry": "DE"}
    )
    assert Words("en-GB").address(hamburg) == "Hafenstraße 1, 20457 Hamburg, Germany"
