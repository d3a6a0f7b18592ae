"""Catalogue files: validation with line numbers, all-or-nothing import, export round trip."""

from __future__ import annotations

import httpx
import pytest

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.domain.catalog.document import (
    MAX_DEPTH,
    CatalogFileError,
    catalog_to_yaml,
    parse_catalog,
    read_yaml,
)
from berth.domain.staff import COMMAND_LINE
from tests.bookings_helpers import booking_catalog
from tests.conftest import ADMIN, auth

MINIMAL = """\
supplier:
  id: acme
  name: Acme Tours
products:
  - id: walk
    internalName: City walk
    timeZone: Europe/London
    availabilityType: START_TIME
    deliveryFormats: [QRCODE]
    deliveryMethods: [TICKET]
    options:
      - id: DEFAULT
        internalName: Walk
        schedules:
          - startTimes: ["10:00", "14:30"]
            capacity: 12
        units:
          - id: adult
            internalName: Adult
            type: ADULT
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(CatalogFileError) as caught:
        parse_catalog(text, CATALOG_RULES)
    return [str(p) for p in caught.value.problems]


def test_minimal_catalogue_and_clock_times_stay_strings() -> None:
    catalog = parse_catalog(MINIMAL, CATALOG_RULES)
    option = catalog.products[0].options[0]
    assert option.local_start_times == ["10:00", "14:30"]


def test_problems_name_line_and_path() -> None:
    broken = (
        MINIMAL.replace("timeZone: Europe/London", "timeZone: Europe/Atlantis")
        .replace("capacity: 12", "capacity: -1")
        .replace("type: ADULT", "type: GROWNUP")
    )
    assert problems_of(broken) == [
        "line 7: products[0].timeZone: unknown IANA time zone 'Europe/Atlantis'",
        "line 16: products[0].options[0].schedules[0].capacity: must be at least 0",
        "line 20: products[0].options[0].units[0].type: must be one of 'ADULT', 'YOUTH', 'CHILD', "
        "'INFANT', 'FAMILY', 'SENIOR', 'STUDENT', 'MILITARY' or 'OTHER'",
    ]


def test_unknown_keys_and_cross_field_rules() -> None:
    assert problems_of(MINIMAL.replace("    options:", "    colour: red\n    options:")) == [
        "line 11: products[0].colour: is not a known field"
    ]
    opening_hours = MINIMAL.replace("availabilityType: START_TIME", "availabilityType: OPENING_HOURS")
    assert problems_of(opening_hours) == [
        "line 15: products[0].options[0].schedules[0].openingHours: an OPENING_HOURS product needs opening hours",
        "line 15: products[0].options[0].schedules[0].startTimes: an OPENING_HOURS product has opening hours, "
        "not start times",
    ]
    accompanied = MINIMAL.replace(
        "type: ADULT", "type: CHILD\n            restrictions: {accompaniedBy: [adult2]}"
    )
    assert problems_of(accompanied) == [
        "line 21: products[0].options[0].units[0].restrictions.accompaniedBy[0]: "
        "'adult2' is not another unit of option 'DEFAULT'"
    ]
    twice = MINIMAL + MINIMAL[MINIMAL.index("  - id: walk") :]
    assert problems_of(twice) == ["line 21: products[1].id: duplicate product id 'walk'"]


def test_pdf_url_is_accepted_and_pkpass_url_needs_a_pass_certificate() -> None:
    parse_catalog(
        MINIMAL.replace("deliveryFormats: [QRCODE]", "deliveryFormats: [QRCODE, PDF_URL]"), CATALOG_RULES
    )
    assert problems_of(
        MINIMAL.replace("deliveryFormats: [QRCODE]", "deliveryFormats: [QRCODE, PKPASS_URL]")
    ) == [
        "line 9: products[0].deliveryFormats[1]: PKPASS_URL needs an Apple Wallet pass certificate: set "
        "BERTH_PKPASS_CERTIFICATE, BERTH_PKPASS_KEY, BERTH_PKPASS_TEAM_ID and BERTH_PKPASS_PASS_TYPE_ID "
        "(docs/operations.md), or leave it out"
    ]


def test_yaml_syntax_and_shape_errors() -> None:
    assert problems_of("supplier: [unclosed") == [
        "line 1: (root): not valid YAML: expected ',' or ']', but got '<stream end>'"
    ]
    assert problems_of("") == ["file: (root): the file is empty"]
    assert problems_of("- just\n- a list\n") == [
        "line 1: (root): the file must be a mapping with 'supplier' and 'products'"
    ]
    assert problems_of("supplier: {id: a, name: b}\nsupplier: {id: c, name: d}\n") == [
        "line 2: supplier: duplicate key"
    ]


def test_prices_must_cover_every_currency() -> None:
    priced = MINIMAL.replace(
        "            type: ADULT\n",
        "            type: ADULT\n            prices: [{currency: EUR, retail: 100}]\n"
        "          - id: child\n            internalName: Child\n            type: CHILD\n"
        "            prices: [{currency: GBP, retail: 50, original: 40}]\n",
    )
    assert problems_of(priced) == [
        "line 21: products[0].options[0].units[0].prices: no price in GBP, which other prices of the product use",
        "line 25: products[0].options[0].units[1].prices: no price in EUR, which other prices of the product use",
        "line 25: products[0].options[0].units[1].prices[0].original: original must not be lower than retail",
    ]


def test_a_net_above_retail_is_refused_naming_its_field() -> None:
    """Issue 37: a reseller never pays more than the guest; nor does an included tax's net
    exceed its retail. Unit, booking and extra prices alike."""
    priced = MINIMAL.replace(
        "            type: ADULT\n",
        "            type: ADULT\n            prices:\n"
        "              - {currency: EUR, retail: 2500, net: 2600}\n"
        "              - {currency: EUR, retail: 2000, net: 2000, from: 2027-01-01,"
        " includedTaxes: [{name: VAT, retail: 333, original: 333, net: 400}]}\n",
    )
    assert problems_of(priced) == [
        "line 22: products[0].options[0].units[0].prices[0].net: net 2600 is above retail 2500",
        "line 23: products[0].options[0].units[0].prices[1].includedTaxes[0].net: net 400 is above retail 333",
    ]


def test_an_included_tax_given_as_a_rate_is_worked_out_from_each_amount() -> None:
    """Issue 38: `rate: 20` on 2500 / 2800 / 2000 is 417 / 467 / 333 (half up, minor units);
    written back as the rate; a rate with amounts, or a rate out of range, is refused."""
    taxed = MINIMAL.replace(
        "            type: ADULT\n",
        "            type: ADULT\n            prices:\n"
        "              - {currency: EUR, retail: 2500, original: 2800, net: 2000,"
        " includedTaxes: [{name: VAT, rate: 20}, {name: City tax, rate: 2.5}]}\n",
    )
    price = parse_catalog(taxed, CATALOG_RULES).products[0].options[0].units[0].prices[0]
    vat, city = price.included_taxes
    assert (vat.retail, vat.original, vat.net) == (417, 467, 333)
    assert (city.retail, city.original, city.net) == (61, 68, 49)  # 2500 x 2.5 / 102.5 = 60.98
    exported = catalog_to_yaml(parse_catalog(taxed, CATALOG_RULES))
    assert "rate: 20" in exported and "rate: 2.5" in exported and "retail: 417" not in exported
    assert problems_of(taxed.replace("{name: VAT, rate: 20}", "{name: VAT, rate: 20, retail: 417}")) == [
        "line 22: products[0].options[0].units[0].prices[0]: included tax 'VAT' gives a rate and retail: "
        "give the rate or the amounts, not both"
    ]
    assert problems_of(taxed.replace("rate: 20}", "rate: 120}")) == [
        "line 22: products[0].options[0].units[0].prices[0].includedTaxes[0].rate: must be at most 100"
    ]


async def test_broken_import_writes_nothing(client: httpx.AsyncClient, bookable: Services) -> None:
    before = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    version = (await bookable.catalog.snapshot()).version
    broken = catalog_to_yaml(booking_catalog()).replace("capacity: 300", "capacity: many")
    response = await client.put("/admin/api/catalog", content=broken.encode(), headers=ADMIN)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "BAD_REQUEST"
    assert body["errorMessage"] == "The catalogue file has 1 problem(s); nothing was imported"
    assert body["problems"][0]["path"] == "products[2].options[0].schedules[0].capacity"
    assert body["problems"][0]["line"] > 1
    assert (await client.get("/admin/api/catalog", headers=ADMIN)).text == before
    assert (await bookable.catalog.snapshot()).version == version


async def test_import_replaces_and_archives(client: httpx.AsyncClient, bookable: Services) -> None:
    response = await client.put("/admin/api/catalog", content=MINIMAL.encode(), headers=ADMIN)
    assert response.status_code == 200
    assert response.json()["products"] == 1
    products = (await client.get("/octo/products", headers=auth())).json()
    assert [p["id"] for p in products] == ["walk"]
    assert (await client.get("/octo/supplier", headers=auth())).json()["name"] == "Acme Tours"
    from berth.store.catalog_repo import load_archived_product

    async with bookable.database.transaction(write=False) as conn:
        archived = await load_archived_product(conn, "thames-sightseeing")
    assert archived is not None and archived.internal_name == "Thames Sightseeing"


async def test_catalogue_change_reaches_another_process(services: Services, bookable: Services) -> None:
    """Two service containers on one database stand for two API processes: a write through
    one is seen by the other through the catalogue version, with no restart."""
    from berth.container import build_services

    other = build_services(services.settings)
    try:
        assert len((await other.catalog.snapshot()).catalog.products) == 3
        await services.catalog.import_text(MINIMAL, actor=COMMAND_LINE)
        found = await other.connections.authenticate("demo-reseller-a")
        assert found is not None
        snapshot = await other.catalog.snapshot(found[1])
        assert [p.id for p in snapshot.catalog.products] == ["walk"]
    finally:
        await other.close()


# --- every problem in one pass (issue 18) ----------------------------------------------------

PACKAGE = """\
  - id: pass
    internalName: Walk pass
    timeZone: Europe/London
    availabilityType: START_TIME
    deliveryFormats: [QRCODE]
    deliveryMethods: [TICKET]
    options:
      - id: DEFAULT
        internalName: Pass
        schedules:
          - startTimes: ["09:00"]
            capacity: 5
        units:
          - id: adult
            internalName: Adult
            type: ADULT
        packageIncludes:
          - id: walks
            includes:
              - {id: walk, productId: walk, optionId: DEFAULT}
"""


def test_unknown_key_does_not_hide_rule_problems() -> None:
    """The observed case: an unknown key and a duplicate product id, reported together."""
    twice = MINIMAL + MINIMAL[MINIMAL.index("  - id: walk") :]
    assert problems_of(twice.replace("    options:", "    colour: red\n    options:", 1)) == [
        "line 11: products[0].colour: is not a known field",
        "line 22: products[1].id: duplicate product id 'walk'",
    ]


def test_schema_and_rule_problems_of_different_products_together() -> None:
    second = MINIMAL[MINIMAL.index("  - id: walk") :].replace("id: walk", "id: tour", 1)
    broken = (
        MINIMAL.replace("type: ADULT", "type: GROWNUP")
        + second.replace(
            "          - id: adult",
            "          - id: adult\n            internalName: A\n"
            "            type: ADULT\n          - id: adult",
            1,
        )
        + MINIMAL[MINIMAL.index("  - id: walk") :].replace("id: walk", "id: tour", 1)
    )
    assert problems_of(broken) == [
        "line 20: products[0].options[0].units[0].type: must be one of 'ADULT', 'YOUTH', 'CHILD', "
        "'INFANT', 'FAMILY', 'SENIOR', 'STUDENT', 'MILITARY' or 'OTHER'",
        "line 37: products[1].options[0].units[1].id: duplicate unit id 'adult'",
        "line 40: products[2].id: duplicate product id 'tour'",
    ]


def test_a_product_left_out_of_the_rule_checks_keeps_the_lines_of_the_others() -> None:
    """A product whose own field is bad is left out of the rule checks; the rule problems of
    the products after it still name their own index and line."""
    rest = MINIMAL[MINIMAL.index("  - id: walk") :]
    broken = (
        MINIMAL.replace("timeZone: Europe/London", "timeZone: Europe/Atlantis")
        + rest.replace("id: walk", "id: tour", 1)
        + rest.replace("id: walk", "id: tour", 1)
    )
    assert problems_of(broken) == [
        "line 7: products[0].timeZone: unknown IANA time zone 'Europe/Atlantis'",
        "line 37: products[2].id: duplicate product id 'tour'",
    ]


def test_repeated_ids_are_reported_with_the_schema_problems_of_their_product() -> None:
    """docs/operations.md: every problem in one pass. A product the schema refuses is left out
    of the rule checks, but ids repeated in it (or repeating another product's) are read from
    the file as it is and reported with its schema problem, not after it is fixed."""
    rest = MINIMAL[MINIMAL.index("  - id: walk") :]
    broken = MINIMAL + rest.replace("timeZone: Europe/London", "timeZone: Europe/Atlantis").replace(
        "            type: ADULT\n",
        "            type: ADULT\n          - id: adult\n            internalName: Adult again\n"
        "            type: GROWNUP\n",
    )
    assert problems_of(broken) == [
        "line 21: products[1].id: duplicate product id 'walk'",
        "line 23: products[1].timeZone: unknown IANA time zone 'Europe/Atlantis'",
        "line 37: products[1].options[0].units[1].id: duplicate unit id 'adult'",
        "line 39: products[1].options[0].units[1].type: must be one of 'ADULT', 'YOUTH', 'CHILD', "
        "'INFANT', 'FAMILY', 'SENIOR', 'STUDENT', 'MILITARY' or 'OTHER'",
    ]


def test_rule_problems_that_a_schema_problem_would_cause_are_not_reported() -> None:
    """A unit with a bad type is left out of the rule checks; a unit that must be accompanied
    by it is not reported for naming a unit that "does not exist", nor is a package that
    includes the product."""
    accompanied = MINIMAL.replace(
        "            type: ADULT\n",
        "            type: GROWNUP\n          - id: child\n            internalName: Child\n"
        "            type: CHILD\n            restrictions: {accompaniedBy: [adult]}\n",
    )
    assert problems_of(accompanied + PACKAGE) == [
        "line 20: products[0].options[0].units[0].type: must be one of 'ADULT', 'YOUTH', 'CHILD', "
        "'INFANT', 'FAMILY', 'SENIOR', 'STUDENT', 'MILITARY' or 'OTHER'",
    ]
    # Without the schema problem the same file is valid: nothing was hidden but artefacts.
    assert (
        parse_catalog(accompanied.replace("GROWNUP", "ADULT") + PACKAGE, CATALOG_RULES).product("pass")
        is not None
    )


def test_duplicate_yaml_keys_come_with_the_other_problems() -> None:
    assert problems_of(MINIMAL.replace("capacity: 12", "capacity: 12\n            capacity: -1")) == [
        "line 17: products[0].options[0].schedules[0].capacity: duplicate key",
        "line 17: products[0].options[0].schedules[0].capacity: must be at least 0",
    ]


def test_values_yaml_cannot_build_are_problems_not_crashes() -> None:
    """A date that does not exist and an explicit tag the value does not fit used to escape
    as a ValueError (a 500 from the admin API)."""
    assert problems_of(
        MINIMAL.replace("capacity: 12", "capacity: 12\n        closedDates: [2026-02-30]").replace(
            "City walk", "!!float abc"
        )
    ) == [
        "line 6: products[0].internalName: is not a value YAML can read (could not convert string to float: 'abc')",
        "line 17: products[0].options[0].closedDates[0]: is not a valid date (day is out of range for month)",
    ]


DEEP = 5000


async def test_a_file_nested_five_thousand_deep_is_a_problem_not_a_500(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """YAML nested deeper than Berth reads is refused like any other problem of the file (it
    was PyYAML's RecursionError, a 500); a JSON body of the same depth is a 400 too."""
    before = (await client.get("/admin/api/catalog", headers=ADMIN)).text
    for deep in ("[" * DEEP + "]" * DEEP, "supplier: " + "{a: " * DEEP + "1" + "}" * DEEP):
        response = await client.put("/admin/api/catalog", content=deep.encode(), headers=ADMIN)
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["errorMessage"] == "The catalogue file has 1 problem(s); nothing was imported"
        [problem] = body["problems"]
        assert problem["message"] == f"not valid YAML: nested deeper than {MAX_DEPTH} levels"
        assert problem["line"] is not None
        with pytest.raises(CatalogFileError):
            read_yaml(deep)  # the back office editor's fields
    assert (await client.get("/admin/api/catalog", headers=ADMIN)).text == before
    deep_json = '{"a":' * DEEP + "1" + "}" * DEEP
    for path, headers in (("/admin/api/connections", ADMIN), ("/octo/availability", auth())):
        response = await client.post(
            path, content=deep_json, headers={**headers, "Content-Type": "application/json"}
        )
        assert response.status_code == 400 and response.json()["error"] == "BAD_REQUEST", response.text


async def test_a_nul_escaped_in_yaml_is_a_problem_on_both_databases(
    client: httpx.AsyncClient, bookable: Services
) -> None:
    """The API refuses a NUL byte in any request; YAML can write one as an escape, which
    SQLite stored and PostgreSQL refused with a 500."""
    stored = catalog_to_yaml(booking_catalog())
    for escape in ("\\0", "\\x00", "\\U00000000"):  # "\\u0000" is refused as in JSON bodies
        broken = stored.replace("title: Thames Sightseeing Cruise", f'title: "Thames{escape}Cruise"', 1)
        assert broken != stored
        response = await client.put("/admin/api/catalog", content=broken.encode(), headers=ADMIN)
        assert response.status_code == 400, response.text
        [problem] = response.json()["problems"]
        assert problem["message"] == "holds the NUL character (U+0000), which no field accepts"
        assert problem["path"].endswith(".title")
