"""Berth's own words for guests (tickets, emails) in their language: gettext catalogues
(`<language>.po` beside this module, English being the source language) compiled when first
read, and Babel's locale data for dates, times, money and country names."""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache, lru_cache
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_time, get_day_names
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_currency, format_percent, get_currency_precision
from babel.support import NullTranslations, Translations

from berth.domain.addresses import address_parts
from berth.domain.catalog import PostalAddress

SOURCE = "en"
FOLDER = Path(__file__).parent
# Every language Berth's own texts are written in: English, and each catalogue beside this module.
LANGUAGES: tuple[str, ...] = (SOURCE, *sorted(p.stem for p in FOLDER.glob("*.po")))


def N_(message: str) -> str:
    """Marks a text for the catalogues where it is written; it is translated where it is shown."""
    return message


def primary(language: str) -> str:
    return language.replace("_", "-").split("-")[0].lower()


@cache
def catalogue(language: str) -> NullTranslations:
    """The language's compiled catalogue (English and an unknown language: the texts as written)."""
    path = FOLDER / f"{language}.po"
    if language == SOURCE or not path.is_file():
        return NullTranslations()
    with path.open("rb") as po:
        messages = read_po(po, locale=language)
    compiled = io.BytesIO()
    write_mo(compiled, messages)
    compiled.seek(0)
    return Translations(compiled)


@cache
def _locale(language: str) -> Locale:
    try:
        return Locale.parse(language.replace("-", "_"))
    except (ValueError, UnknownLocaleError):
        try:
            return Locale.parse(primary(language))
        except (ValueError, UnknownLocaleError):
            return Locale.parse(SOURCE)


# Formatting a day or an amount with Babel costs tens of microseconds, and a page of the shop's
# calendar shows a month of days with their prices: each is formatted once per process.
FORMATTED = 4096


@lru_cache(maxsize=FORMATTED)
def _full_date(language: str, day: date) -> str:
    return format_date(day, "full", locale=_locale(language))


@lru_cache(maxsize=FORMATTED)
def _money(language: str, minor: int, currency: str, precision: int) -> str:
    return format_currency(Decimal(minor).scaleb(-precision), currency, locale=_locale(language))


@dataclass(frozen=True)
class Words:
    """Texts, dates and money in one language (a content language tag such as `de-DE`)."""

    language: str

    @property
    def locale(self) -> Locale:
        return _locale(self.language)

    def __call__(self, message: str, **values: object) -> str:
        """The message in this language, its `{placeholders}` filled in."""
        text = catalogue(primary(self.language)).gettext(message)
        return text.format(**values) if values else text

    def weekday(self, day: date) -> str:
        """`Mon`, `Mo.`: a calendar's column heading."""
        return format_date(day, "EEE", locale=self.locale)

    def month(self, day: date) -> str:
        """`June 2026`, `Juni 2026`: a calendar's heading."""
        return format_date(day, "LLLL yyyy", locale=self.locale)

    def day_name(self, weekday: int) -> str:
        """`Saturday`, `Samstag`: a weekday by its number (0 is Monday)."""
        return str(get_day_names("wide", locale=self.locale)[weekday])

    def percent(self, value: Decimal) -> str:
        """`15%`, `12,5 %`: `value` per cent, in the language's style."""
        return format_percent(value / 100, locale=self.locale, decimal_quantization=False)

    def short_date(self, day: date) -> str:
        """`Tue 2 Jun`, `Di., 2. Juni`: a day among others of the same year."""
        return format_date(
            day, "EEE d MMM" if self.locale.language == "en" else "EEE, d. MMM", locale=self.locale
        )

    def date(self, day: date) -> str:
        """`Tuesday 2 June 2026`, `Dienstag, 2. Juni 2026`."""
        return _full_date(self.language, day)

    def time(self, moment: datetime) -> str:
        """`10:00 BST`: the local time, 24-hour, with its zone's abbreviation."""
        return f"{format_time(moment, 'HH:mm', locale=self.locale)} {moment.strftime('%Z')}".strip()

    def date_time(self, moment: datetime) -> str:
        """`Tuesday 2 June 2026, 10:00 BST`."""
        return self("{date}, {time}", date=self.date(moment.date()), time=self.time(moment))

    def money(self, minor: int, currency: str, precision: int) -> str:
        """`€40.00`, `40,00 €`: minor units in the language's style."""
        return _money(self.language, minor, currency, precision)

    def country(self, code: str) -> str:
        """The country's name in this language (`DE`: `Germany`, `Deutschland`); an unknown
        code as written."""
        return self.locale.territories.get(code.upper(), code) if len(code) == 2 else code

    def address(self, address: PostalAddress) -> str:
        """A postal address on one line, in its country's order, the country named in this
        language."""
        parts = address_parts(address)
        if address.address_country:
            parts.append(self.country(address.address_country))
        return ", ".join(parts)


def best_language(language: str) -> str:
    """The language Berth writes its own texts in for `language`: itself when a catalogue
    has it, else English."""
    return language if primary(language) in LANGUAGES else SOURCE


def currency_precision(currency: str) -> int:
    """The decimals of an ISO 4217 currency (`EUR` 2, `JPY` 0, `BHD` 3; an unknown code 2): how
    the payments ledger's minor units, which carry no precision of their own, are written."""
    return int(get_currency_precision(currency.upper()))
