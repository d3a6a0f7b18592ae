"""How the back office writes dates and times: in a time zone, labelled with its abbreviation,
with dates in the style of a locale (ISO 8601 for a locale it has no style for)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from berth.http.admin.pages.dates import Local, of_product, of_supplier
from tests.every_capability import every_capability_catalog

MONDAY = date(2026, 11, 23)


@pytest.mark.parametrize(
    ("locale", "day", "plain"),
    [
        ("en-GB", "Mon 23 Nov 2026", "23 Nov 2026"),
        ("en-gb", "Mon 23 Nov 2026", "23 Nov 2026"),
        ("en-IE", "Mon 23 Nov 2026", "23 Nov 2026"),
        ("en-US", "Mon, Nov 23, 2026", "Nov 23, 2026"),
        ("en", "Mon, Nov 23, 2026", "Nov 23, 2026"),
        ("de-DE", "Mo., 23. Nov. 2026", "23. Nov. 2026"),
        ("de-AT", "Mo., 23. Nov. 2026", "23. Nov. 2026"),
        ("fr-FR", "lun. 23 nov. 2026", "23 nov. 2026"),
        ("es-ES", "lun, 23 nov 2026", "23 nov 2026"),
        ("it-IT", "lun 23 nov 2026", "23 nov 2026"),
        ("nl-NL", "ma 23 nov 2026", "23 nov 2026"),
        ("pt-PT", "seg., 23 de nov. de 2026", "23 de nov. de 2026"),
        ("ja-JP", "2026-11-23", "2026-11-23"),
        ("zh-Hant-TW", "2026-11-23", "2026-11-23"),
    ],
)
def test_dates_in_the_style_of_a_locale(locale: str, day: str, plain: str) -> None:
    local = Local("Europe/London", locale)
    assert local.day(MONDAY) == day
    assert local.date(MONDAY) == plain


def test_month_names_that_are_not_cut_short() -> None:
    assert Local("Europe/Berlin", "de-DE").date(date(2026, 6, 2)) == "2. Juni 2026"
    assert Local("Europe/Paris", "fr-FR").day(date(2026, 5, 31)) == "dim. 31 mai 2026"


def test_times_in_the_zone_labelled_with_its_abbreviation() -> None:
    london = Local("Europe/London", "en-GB")
    summer = datetime(2026, 6, 1, 8, 0, 5, tzinfo=UTC)
    assert london.moment(summer) == "1 Jun 2026 09:00 BST"
    assert london.moment(summer, seconds=True) == "1 Jun 2026 09:00:05 BST"
    assert london.moment("2026-12-01T23:30:00Z") == "1 Dec 2026 23:30 GMT"
    assert london.moment(None) == "—"
    # Late in the evening in UTC is the next day in Auckland.
    assert Local("Pacific/Auckland", "en-NZ").moment(summer.replace(hour=20)) == "2 Jun 2026 08:00 NZST"
    # Zones without an abbreviation of their own are labelled with their offset.
    assert Local("Asia/Dubai", "en-GB").moment(summer) == "1 Jun 2026 12:00 UTC+04"
    assert Local("UTC", "en-GB").moment(summer) == "1 Jun 2026 08:00 UTC"


def test_clock_and_label_of_a_departure() -> None:
    london = Local("Europe/London", "en-GB")
    start = datetime(2026, 6, 1, 17, 30, tzinfo=UTC)
    assert london.clock(start) == "18:30"
    assert london.abbreviation(start) == "BST"
    assert london.abbreviation(datetime(2026, 1, 1, tzinfo=UTC)) == "GMT"


def test_reading_a_local_time_typed_in_a_form() -> None:
    london = Local("Europe/London", "en-GB")
    assert london.read("2026-06-01T09:00") == datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
    assert london.read("2026-01-01T09:00") == datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
    assert london.read("2026-06-01T10:30:00+02:00") == datetime(2026, 6, 1, 8, 30, tzinfo=UTC)
    assert london.read("2026-06-01T08:30:00Z") == datetime(2026, 6, 1, 8, 30, tzinfo=UTC)
    assert london.read("yesterday") is None
    assert london.read("2026-06-01 09:00") == datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
    assert london.field(datetime(2026, 6, 1, 8, 0, tzinfo=UTC)) == "2026-06-01 09:00"


def test_availability_ids_in_a_message_read_as_departures() -> None:
    london = Local("Europe/London", "en-GB")
    said = "Availability 2026-06-02T10:00:00+01:00 is sold out; 2026-12-01T09:00:00Z too"
    assert (
        london.readable(said)
        == "Availability Tue 2 Jun 2026 10:00 BST is sold out; Tue 1 Dec 2026 09:00 GMT too"
    )
    assert london.readable("no id in 2026-06-02 alone") == "no id in 2026-06-02 alone"


def test_a_products_own_zone_and_locale() -> None:
    catalog = every_capability_catalog()
    product = catalog.products[0].model_copy(update={"time_zone": "Europe/Paris", "locale": "fr-FR"})
    assert of_product(product) == Local("Europe/Paris", "fr-FR")


def test_the_suppliers_zone_and_locale_are_those_most_of_its_products_declare() -> None:
    catalog = every_capability_catalog()
    first, second, *rest = catalog.products
    paris = {"time_zone": "Europe/Paris", "locale": "fr-FR"}
    assert of_supplier(catalog) == Local("Europe/London", "en-GB")
    one_in_paris = catalog.model_copy(update={"products": (first.model_copy(update=paris), second, *rest)})
    assert of_supplier(one_in_paris) == Local("Europe/London", "en-GB")
    # A tie goes to the product listed first.
    tied = catalog.model_copy(update={"products": (first.model_copy(update=paris), second)})
    assert of_supplier(tied) == Local("Europe/Paris", "fr-FR")
    # Without products: UTC, and the locale a product gets when it names none.
    assert of_supplier(catalog.model_copy(update={"products": ()})) == Local("UTC", "en-GB")
