"""Dates and times as the back office writes them: in a time zone, labelled with its
abbreviation (`09:00 BST`), and dates in the style of a locale (`Mon 23 Nov 2026` in en-GB,
`Mo., 23. Nov. 2026` in de-DE; ISO 8601 for a language without a style here).

The styles are CLDR's abbreviated date formats (with and without the weekday) for the
languages a catalogue is most likely to declare; times are on the 24-hour clock everywhere."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from berth.domain.catalog import Catalog, Product

# The locale a product has when its catalogue entry names none (`Product.locale`).
DEFAULT_LOCALE = "en-GB"


@dataclass(frozen=True)
class _Style:
    with_weekday: str  # for travel dates
    plain: str  # for the dates of things that happened
    months: tuple[str, ...]
    weekdays: tuple[str, ...]  # Monday first

    def format(self, pattern: str, value: date) -> str:
        return pattern.format(
            E=self.weekdays[value.weekday()], d=value.day, MMM=self.months[value.month - 1], y=value.year
        )


_EN_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_EN_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_BRITISH = _Style("{E} {d} {MMM} {y}", "{d} {MMM} {y}", _EN_MONTHS, _EN_WEEKDAYS)
_AMERICAN = _Style("{E}, {MMM} {d}, {y}", "{MMM} {d}, {y}", _EN_MONTHS, _EN_WEEKDAYS)
_STYLES = {
    "en": _AMERICAN,
    "de": _Style(
        "{E}, {d}. {MMM} {y}",
        "{d}. {MMM} {y}",
        ("Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."),
        ("Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa.", "So."),
    ),
    "fr": _Style(
        "{E} {d} {MMM} {y}",
        "{d} {MMM} {y}",
        ("janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."),
        ("lun.", "mar.", "mer.", "jeu.", "ven.", "sam.", "dim."),
    ),
    "es": _Style(
        "{E}, {d} {MMM} {y}",
        "{d} {MMM} {y}",
        ("ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic"),
        ("lun", "mar", "mié", "jue", "vie", "sáb", "dom"),
    ),
    "it": _Style(
        "{E} {d} {MMM} {y}",
        "{d} {MMM} {y}",
        ("gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"),
        ("lun", "mar", "mer", "gio", "ven", "sab", "dom"),
    ),
    "nl": _Style(
        "{E} {d} {MMM} {y}",
        "{d} {MMM} {y}",
        ("jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"),
        ("ma", "di", "wo", "do", "vr", "za", "zo"),
    ),
    "pt": _Style(
        "{E}, {d} de {MMM} de {y}",
        "{d} de {MMM} de {y}",
        ("jan.", "fev.", "mar.", "abr.", "mai.", "jun.", "jul.", "ago.", "set.", "out.", "nov.", "dez."),
        ("seg.", "ter.", "qua.", "qui.", "sex.", "sáb.", "dom."),
    ),
}
# English outside North America and the Philippines writes the day before the month.
_AMERICAN_REGIONS = {"US", "CA", "PH", "UM", "VI", "PR", "AS", "GU", "MP"}


def _style(locale: str) -> _Style | None:
    language, *rest = locale.split("-")
    language = language.lower()
    regions = [part.upper() for part in rest if len(part) == 2 and part.isalpha()]
    if language == "en" and regions and regions[0] not in _AMERICAN_REGIONS:
        return _BRITISH
    return _STYLES.get(language)


# An availability id as a departure's start: `2026-06-02T10:00:00+01:00`.
_AVAILABILITY_ID = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:[+-]\d{2}:\d{2}|Z)")


@dataclass(frozen=True)
class Local:
    """How a page writes dates and times: `zone` an IANA time zone, `locale` a language tag."""

    zone: str
    locale: str

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)  # ZoneInfo caches its instances

    def day(self, value: date) -> str:
        """A travel date with its weekday: `Mon 23 Nov 2026`."""
        style = _style(self.locale)
        return style.format(style.with_weekday, value) if style else value.isoformat()

    def date(self, value: date) -> str:
        """`23 Nov 2026`."""
        style = _style(self.locale)
        return style.format(style.plain, value) if style else value.isoformat()

    def abbreviation(self, value: datetime) -> str:
        """The zone's abbreviation at that instant: `BST`."""
        return abbreviation(value.astimezone(self.tz))

    def clock(self, value: datetime) -> str:
        """`18:30`: the wall-clock time in the zone, unlabelled (for a column labelled once)."""
        return f"{value.astimezone(self.tz):%H:%M}"

    def moment(self, value: datetime | str | None, *, seconds: bool = False) -> str:
        """An instant (a datetime or ISO 8601 text): `1 Jun 2026 09:00 BST`."""
        if value is None:
            return "—"
        instant = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
        local = instant.astimezone(self.tz)
        clock = f"{local:%H:%M:%S}" if seconds else f"{local:%H:%M}"
        return f"{self.date(local.date())} {clock} {self.abbreviation(local)}"

    def readable(self, text: str) -> str:
        """`text` (a message of the services) with each availability id in it written as staff
        read a departure: `Tue 2 Jun 2026 10:00 BST`."""

        def departure(found: re.Match[str]) -> str:
            start = datetime.fromisoformat(found[0].replace("Z", "+00:00")).astimezone(self.tz)
            return f"{self.day(start.date())} {start:%H:%M} {abbreviation(start)}"

        return _AVAILABILITY_ID.sub(departure, text)

    def field(self, value: datetime) -> str:
        """The value of a time form field: `2026-06-01 09:00`, wall-clock in the zone."""
        return f"{value.astimezone(self.tz):%Y-%m-%d %H:%M}"

    def read(self, text: str) -> datetime | None:
        """A time typed in a form, as UTC: wall-clock in the zone (`2026-06-01T09:00`, as a
        field shows it, or with a `T`) or a full ISO 8601 instant with its own offset; None for
        anything else. A wall-clock time that happens twice is the first one; one that does not
        happen (clocks go forward) moves on by the gap."""
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=self.tz)
        return moment.astimezone(UTC)


def abbreviation(value: datetime) -> str:
    """The abbreviation of an aware datetime's own zone (`BST`), or its offset where the zone has
    no abbreviation of its own (`UTC+04`)."""
    name = value.tzname() or ""
    return f"UTC{name}" if name[:1] in "+-" else name


def of_product(product: Product) -> Local:
    return Local(product.time_zone, product.locale)


def of_supplier(catalog: Catalog) -> Local:
    """The supplier's zone and locale, for pages about more than one product: those most of its
    products declare (a tie goes to the product listed first); UTC and the default locale for a
    catalogue without products."""
    if not catalog.products:
        return Local("UTC", DEFAULT_LOCALE)
    zones = Counter(p.time_zone for p in catalog.products)
    locales = Counter(p.locale for p in catalog.products)
    # Counter.most_common keeps first-seen order among equal counts.
    return Local(zones.most_common(1)[0][0], locales.most_common(1)[0][0])
