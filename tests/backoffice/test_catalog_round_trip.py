"""The catalogue editor keeps what it does not show (issue 38): every product of the demo and
of generated catalogues that use every field of docs/catalog.md, opened in the editor and
saved without a change, is no change (no new version, the same document); a change of one
field changes that field only; a tax given as a rate follows its price."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.capabilities.registry import CATALOG_RULES
from berth.container import Services
from berth.demo.loader import demo_catalog_text
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import parse_catalog, to_yaml
from tests.backoffice.helpers import notice_of, sign_in, text_of
from tests.backoffice.test_catalog_editor import form_of, replaced, send, with_action

DOC = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"
NOTHING_CHANGED = re.compile(r"Nothing changed: catalogue version \d+ stays as it is\.")


def documents(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return {
        product.id: product.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        for product in catalog.products
    }


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every value of a document with its path (`options.0.units.1.type`)."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}.{index}")
    else:
        yield path, value


def changed_paths(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    old, new = dict(leaves(before)), dict(leaves(after))
    return {path for path in {**old, **new} if old.get(path) != new.get(path)}


async def saved_unchanged(client: httpx.AsyncClient, services: Services, only: str | None = None) -> None:
    """Open every product's form (or `only` its) and save it as it is: nothing is saved,
    nothing differs."""
    before = await services.catalog.snapshot()
    for product in before.catalog.products:
        if only is not None and product.id != only:
            continue
        page = await client.get(f"/admin/catalog/{product.id}/edit")
        assert page.status_code == 200, page.text
        fields = form_of(page.text)
        preview = await send(client, f"/admin/catalog/{product.id}/edit", with_action(fields, "preview"))
        assert "No changes: the file is the catalogue as stored." in text_of(preview.text), (
            product.id,
            text_of(preview.text)[:3000],
        )
        saved = await send(client, f"/admin/catalog/{product.id}/edit", with_action(fields, "save"))
        assert saved.status_code == 303, (product.id, text_of(saved.text)[:3000])
        notice = notice_of((await client.get(saved.headers["location"])).text)
        assert notice is not None and NOTHING_CHANGED.fullmatch(notice), (product.id, notice)
    after = await services.catalog.snapshot()
    assert after.version == before.version
    assert documents(after.catalog) == documents(before.catalog)


async def test_every_demo_product_saved_unchanged_is_no_change(
    client: httpx.AsyncClient, demo: Services
) -> None:
    await sign_in(client)
    await saved_unchanged(client, demo)


async def test_the_supplier_and_a_product_as_yaml_saved_unchanged_are_no_change(
    client: httpx.AsyncClient, demo: Services
) -> None:
    await sign_in(client)
    before = await demo.catalog.snapshot()
    for path in ("/admin/catalog/supplier", "/admin/catalog/thames-sightseeing/yaml"):
        fields = form_of((await client.get(path)).text)
        saved = await send(client, path, with_action(fields, "save"))
        assert saved.status_code == 303, (path, text_of(saved.text)[:3000])
        notice = notice_of((await client.get(saved.headers["location"])).text)
        assert notice is not None and NOTHING_CHANGED.fullmatch(notice), (path, notice)
    assert (await demo.catalog.snapshot()).version == before.version


async def test_a_price_and_a_departure_changed_change_only_those_fields(
    client: httpx.AsyncClient, demo: Services
) -> None:
    """The issue's case: the Thames adult price 25.00 -> 27.00, its VAT given as 20 %, and a
    17:00 departure. Nothing else changes (PDF_URL stays); the VAT follows the price; the
    preview and the history say what the values were and are."""
    await sign_in(client)
    before = await demo.catalog.snapshot()
    path = "/admin/catalog/thames-sightseeing/edit"
    fields = form_of((await client.get(path)).text)
    price = "options.0.units.0.prices.0"
    assert dict(fields)[f"{price}.retail"] == "25.00"
    times = dict(fields)["options.0.schedules.0.startTimes"]
    assert times == "10:00, 12:00, 14:00, 16:00"  # every time, in a field that shows them all
    changed = replaced(fields, f"{price}.retail", "27.00")
    changed = replaced(changed, f"{price}.tax.rate", "20 %")
    changed = replaced(changed, "options.0.schedules.0.startTimes", f"{times}, 17:00")

    preview = await send(client, path, with_action(changed, "preview"))
    assert preview.status_code == 200, text_of(preview.text)[:3000]
    shown = text_of(preview.text)
    assert "thames-sightseeing/DEFAULT/adult (prices): EUR 25.00 -> 27.00" in shown, shown[:3000]
    assert "startTimes 10:00, 12:00, 14:00, 16:00 -> 10:00, 12:00, 14:00, 16:00, 17:00" in shown

    saved = await send(client, path, with_action(changed, "save"))
    assert saved.status_code == 303, text_of(saved.text)[:3000]
    after = await demo.catalog.snapshot()
    assert after.version == before.version + 1
    old, new = documents(before.catalog), documents(after.catalog)
    assert {key for key in {**old, **new} if old.get(key) != new.get(key)} == {"thames-sightseeing"}
    assert changed_paths(old["thames-sightseeing"], new["thames-sightseeing"]) == {
        f"{price}.retail",
        f"{price}.includedTaxes.0.rate",
        f"{price}.includedTaxes.0.retail",
        f"{price}.includedTaxes.0.original",
        f"{price}.includedTaxes.0.net",
        "options.0.schedules.0.startTimes.4",
    }
    product = after.catalog.product("thames-sightseeing")
    assert product is not None
    assert [str(f) for f in product.delivery_formats] == ["QRCODE", "AZTECCODE", "PDF_URL"]
    eur = product.options[0].units[0].prices[0]
    assert (eur.retail, eur.original, eur.net) == (2700, 2800, 2000)
    tax = eur.included_taxes[0]  # 20 % of 2700, 2800 and 2000, half up
    assert (tax.name, tax.retail, tax.original, tax.net) == ("VAT", 450, 467, 333)
    history = (await demo.catalog.versions(limit=1))[0]
    assert "EUR 25.00 -> 27.00" in history.summary, history.summary

    # The form shows the amount the rate works out to; a new price works it out again.
    fields = form_of((await client.get(path)).text)
    assert dict(fields)[f"{price}.tax.rate"] == "20"
    assert dict(fields)[f"{price}.tax.retail"] == "4.50"
    saved = await send(client, path, with_action(replaced(fields, f"{price}.retail", "26.00"), "save"))
    assert saved.status_code == 303, text_of(saved.text)[:3000]
    product = (await demo.catalog.snapshot()).catalog.product("thames-sightseeing")
    assert product is not None
    assert product.options[0].units[0].prices[0].included_taxes[0].retail == 433  # 2600 x 20 / 120


async def test_a_new_price_with_the_old_tax_amount_is_refused(
    client: httpx.AsyncClient, demo: Services
) -> None:
    """A tax given as an amount is not the new price's: the form asks for a rate or the amount."""
    await sign_in(client)
    path = "/admin/catalog/thames-sightseeing/edit"
    fields = form_of((await client.get(path)).text)
    answer = await send(
        client, path, with_action(replaced(fields, "options.0.units.0.prices.0.retail", "27.00"), "save")
    )
    assert answer.status_code == 400
    assert (
        "the tax amount is the one of the old price: give the tax's rate, or its amount in the new price"
        in (text_of(answer.text))
    )
    fields = replaced(fields, "options.0.units.0.prices.0.retail", "27.00")
    saved = await send(
        client, path, with_action(replaced(fields, "options.0.units.0.prices.0.tax.retail", "4.50"), "save")
    )
    assert saved.status_code == 303, text_of(saved.text)[:3000]
    product = (await demo.catalog.snapshot()).catalog.product("thames-sightseeing")
    assert product is not None
    tax = product.options[0].units[0].prices[0].included_taxes[0]
    assert (tax.rate, tax.retail, tax.original, tax.net) == (None, 450, 467, 333)


# --- generated catalogues ---------------------------------------------------------------------

_LINE = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85"), max_size=40
)
_TEXT = st.text(
    st.characters(
        blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029\x85", whitelist_characters="\n"
    ),
    max_size=80,
)
_NAME = _LINE.filter(lambda s: s.strip() != "")
_IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}", fullmatch=True)
_DAYS = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]
_DATES = st.dates().map(lambda d: d.isoformat())


def _some(draw: st.DrawFn, document: dict[str, Any], key: str, values: st.SearchStrategy[Any]) -> None:
    if draw(st.booleans()):
        document[key] = draw(values)


_PLACE = {
    "latitude": 51.5,
    "longitude": -0.07,
    "postalAddress": {
        "streetAddress": "1 Harbour Walk",
        "addressLocality": "London",
        "addressRegion": "Greater London",
        "postalCode": "SE1 9PP",
        "addressCountry": "GB",
        "postOfficeBoxNumber": "PO 12",
    },
    "identifiers": {
        key: "id-1"
        for key in (
            "googlePlaceId",
            "applePlaceId",
            "tripadvisorLocationId",
            "yelpPlaceId",
            "facebookPlaceId",
            "foursquarePlaceId",
            "baiduPlaceId",
            "amapPlaceId",
        )
    },
    "sameAs": ["https://example.com/pier"],
}
# What the capabilities add (the editor shows them as YAML), with the keys the demo leaves out.
_MEDIA = {
    "src": "https://example.com/a.jpg",
    "type": "image/jpeg",
    "rel": "COVER",
    "caption": "A",
    "copyright": "B",
}
_LOCATION = {"title": "Pier", "types": ["START"], "minutesTo": 5, "minutesAt": 10, "place": _PLACE}
_QUESTIONS = [
    {
        "id": "3b5d7f9a-8d3b-4c7a-9e21-6f1c2a4e1c01",
        "title": "Diet?",
        "coverImageUrl": "https://example.com/q.png",
    }
]
_RESOURCES = [
    {
        "id": "crew",
        "title": "Crew",
        "countBy": "UNITS",
        "required": False,
        "resources": [
            {
                "id": "boat",
                "title": "Boat",
                "capacity": 50,
                "serves": [{"dates": ["2026-07-01"], "weekdays": ["MON"]}],
                "driver": {"id": "dan", "name": "Dan", "emailAddress": "dan@example.com", "tags": ["en"]},
            }
        ],
    }
]
_PICKUPS = [
    {
        "id": "6f1c2a4e-8d3b-4c7a-9e21-3b5d7f9a1c01",
        "name": "Hotel",
        "region": "South",
        "state": "London",
        "minutesBefore": 30,
    }
]
_INCLUDES = [
    {
        "id": "sights",
        "title": "Sights",
        "includes": [{"id": "walk", "productId": "included", "optionId": "DEFAULT", "limit": 2}],
    }
]


@st.composite
def _content(draw: st.DrawFn) -> dict[str, Any]:
    texts: dict[str, Any] = {}
    _some(draw, texts, "title", _LINE)
    _some(draw, texts, "shortDescription", _TEXT)
    _some(draw, texts, "description", _TEXT)
    _some(draw, texts, "features", st.just([{"type": "INCLUSION", "shortDescription": "A guide"}]))
    _some(draw, texts, "faqs", st.just([{"question": "Dogs?", "answer": "On a lead."}]))
    _some(draw, texts, "media", st.just([_MEDIA]))
    _some(draw, texts, "locations", st.just([_LOCATION]))
    return texts


@st.composite
def _price(draw: st.DrawFn, currency: str) -> dict[str, Any]:
    retail = draw(st.integers(0, 10**7))
    price: dict[str, Any] = {"currency": currency, "retail": retail}
    _some(draw, price, "original", st.integers(retail, retail + 10**5))
    _some(draw, price, "net", st.integers(0, retail))
    _some(draw, price, "currencyPrecision", st.integers(0, 4))
    taxes = draw(
        st.lists(
            st.one_of(
                st.fixed_dictionaries(
                    {"name": _NAME, "rate": st.decimals(0, 100, places=2).filter(lambda r: r > 0).map(str)}
                ),
                st.integers(0, retail).map(lambda t: {"name": "VAT", "retail": t, "original": t}),
            ),
            max_size=2,
        )
    )
    if taxes:
        price["includedTaxes"] = taxes
    return price


@st.composite
def _unit(draw: st.DrawFn, unit_id: str, others: list[str], currency: str) -> dict[str, Any]:
    unit: dict[str, Any] = {
        "id": unit_id,
        "internalName": draw(_NAME),
        "type": draw(st.sampled_from(["ADULT", "CHILD", "OTHER"])),
    }
    _some(draw, unit, "reference", _LINE)
    restrictions: dict[str, Any] = {}
    low = draw(st.integers(0, 50))
    _some(draw, restrictions, "minAge", st.just(low))
    _some(draw, restrictions, "maxAge", st.integers(low, 120))
    _some(draw, restrictions, "idRequired", st.booleans())
    _some(draw, restrictions, "minQuantity", st.integers(0, 3))
    _some(draw, restrictions, "maxQuantity", st.integers(3, 9))
    _some(draw, restrictions, "paxCount", st.integers(0, 4))
    _some(draw, restrictions, "accompaniedBy", st.just(others))
    for key in ("minHeight", "maxHeight", "minWeight", "maxWeight"):
        _some(draw, restrictions, key, st.integers(0, 300))
    _some(draw, restrictions, "heightUnit", st.just("cm"))
    _some(draw, restrictions, "weightUnit", st.just("kg"))
    if restrictions:
        unit["restrictions"] = restrictions
    _some(draw, unit, "requiredContactFields", st.just(["firstName", "country"]))
    unit["prices"] = [draw(_price(currency))]
    _some(
        draw, unit, "content", st.just({"en-GB": {"title": "Grown-up", "features": [{"type": "HIGHLIGHT"}]}})
    )
    return unit


@st.composite
def _schedule(draw: st.DrawFn, hours: bool) -> dict[str, Any]:
    schedule: dict[str, Any] = {"capacity": draw(st.none() | st.integers(0, 500))}
    start, end = sorted(draw(st.lists(_DATES, min_size=2, max_size=2)))
    _some(draw, schedule, "from", st.just(start))
    _some(draw, schedule, "until", st.just(end))
    _some(draw, schedule, "weekdays", st.lists(st.sampled_from(_DAYS), min_size=1, unique=True))
    if hours:
        schedule["openingHours"] = [{"from": "09:00", "to": "12:30"}, {"from": "13:30", "to": "18:00"}]
    else:
        clock = st.tuples(st.integers(0, 23), st.integers(0, 59)).map(lambda t: f"{t[0]:02}:{t[1]:02}")
        schedule["startTimes"] = draw(st.lists(clock, min_size=1, max_size=30, unique=True))
    return schedule


@st.composite
def products(draw: st.DrawFn) -> dict[str, Any]:
    """A product that uses the fields of docs/catalog.md the editor's form shows, each given or
    left out, with texts of any characters (leading and trailing spaces, lines)."""
    hours = draw(st.booleans())
    currency = draw(st.sampled_from(["EUR", "GBP", "JPY"]))
    product: dict[str, Any] = {
        "id": draw(_IDS),
        "internalName": draw(_NAME),
        "timeZone": draw(st.sampled_from(["Europe/London", "Europe/Berlin", "America/New_York"])),
        "availabilityType": "OPENING_HOURS" if hours else "START_TIME",
        "deliveryFormats": draw(
            st.lists(st.sampled_from(["PDF_URL", "QRCODE", "CODE128", "AZTECCODE"]), min_size=1, unique=True)
        ),
        "deliveryMethods": draw(st.lists(st.sampled_from(["VOUCHER", "TICKET"]), min_size=1, unique=True)),
    }
    _some(draw, product, "reference", _LINE)
    _some(draw, product, "locale", st.just("en-GB"))
    for key in ("allowFreesale", "instantConfirmation", "instantDelivery", "availabilityRequired"):
        _some(draw, product, key, st.booleans())
    _some(draw, product, "redemptionMethod", st.sampled_from(["DIGITAL", "PRINT", "MANIFEST"]))
    _some(draw, product, "defaultCurrency", st.just(currency))
    _some(draw, product, "questions", st.just(_QUESTIONS))
    languages = draw(st.lists(st.sampled_from(["de-DE", "fr-FR"]), unique=True))
    if draw(st.booleans()):
        product["content"] = {tag: draw(_content()) for tag in ["en-GB", *languages]}
    options = []
    for index in range(draw(st.integers(1, 2))):
        option: dict[str, Any] = {"id": f"option-{index}", "internalName": draw(_NAME)}
        _some(draw, option, "default", st.just(index == 0))
        _some(draw, option, "reference", _LINE)
        for key in ("durationMinutes", "cancellationCutoffAmount", "salesCutoffMinutes"):
            _some(draw, option, key, st.integers(1, 2000))
        _some(draw, option, "cancellationCutoffUnit", st.sampled_from(["minute", "hour", "day"]))
        _some(draw, option, "requiredContactFields", st.just(["emailAddress", "locales"]))
        _some(draw, option, "restrictions", st.just({"minUnits": 1, "maxUnits": 9}))
        _some(draw, option, "schedules", st.lists(_schedule(hours), min_size=1, max_size=2))
        _some(draw, option, "closedDates", st.lists(_DATES, min_size=1, max_size=4, unique=True))
        override = {"date": "2026-12-24", "capacity": 5} | ({} if hours else {"startTime": "10:00"})
        _some(draw, option, "capacityOverrides", st.just([override]))
        _some(draw, option, "resourceGroups", st.just(_RESOURCES))
        if product.get("availabilityRequired", True):
            _some(draw, option, "pickupPoints", st.just(_PICKUPS))
        _some(draw, option, "packageIncludes", st.just(_INCLUDES))
        _some(draw, option, "content", st.just({"en-GB": {"title": "Morning"}}))
        ids = ["adult", "child"][: draw(st.integers(1, 2))]
        option["units"] = [
            draw(_unit(unit_id, [i for i in ids if i != unit_id], currency)) for unit_id in ids
        ]
        options.append(option)
    product["options"] = options
    return product


def generated(count: int) -> list[dict[str, Any]]:
    """`count` products as hypothesis draws them (the same ones on every run)."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=count, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(products())
    def draw(product: dict[str, Any]) -> None:
        drawn.append(product)

    draw()
    return drawn


# The product generated products' packages include.
INCLUDED = {
    "id": "included",
    "internalName": "Walk",
    "timeZone": "Europe/London",
    "availabilityType": "START_TIME",
    "deliveryFormats": ["QRCODE"],
    "deliveryMethods": ["TICKET"],
    "options": [
        {
            "id": "DEFAULT",
            "internalName": "Walk",
            "schedules": [{"startTimes": ["10:00"], "capacity": 10}],
            "units": [
                {"id": "adult", "internalName": "Adult", "type": "ADULT"},
                {"id": "child", "internalName": "Child", "type": "CHILD"},
            ],
        }
    ],
}


def catalogue_of(product: dict[str, Any]) -> Catalog:
    document = {"supplier": {"id": "acme", "name": "Acme"}, "products": [product, INCLUDED]}
    return parse_catalog(to_yaml(document), CATALOG_RULES)


def keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {str(k) for k in value} | {k for item in value.values() for k in keys(item)}
    if isinstance(value, list):
        return {k for item in value for k in keys(item)}
    return set()


async def test_generated_products_saved_unchanged_are_no_change_and_one_change_is_one_field(
    client: httpx.AsyncClient, services: Services
) -> None:
    """Generated products and the demo's together use every key of docs/catalog.md; each
    generated one, saved unchanged, is no change; its name changed changes only its name."""
    drawn = generated(20)
    documented = set(re.findall(r"^\| `([a-z][A-Za-z]*)` \|", DOC.read_text(encoding="utf-8"), re.M))
    used = keys(drawn) | keys(yaml.safe_load(demo_catalog_text()))
    assert documented <= used, sorted(documented - used)
    await sign_in(client)
    for product in drawn:
        await services.catalog.replace(catalogue_of(product))
        await saved_unchanged(client, services, product["id"])
        before = await services.catalog.snapshot()
        path = f"/admin/catalog/{product['id']}/edit"
        fields = form_of((await client.get(path)).text)
        saved = await send(
            client, path, with_action(replaced(fields, "options.0.internalName", "Renamed"), "save")
        )
        assert saved.status_code == 303, text_of(saved.text)[:3000]
        after = await services.catalog.snapshot()
        old, new = documents(before.catalog)[product["id"]], documents(after.catalog)[product["id"]]
        assert changed_paths(old, new) == {"options.0.internalName"}, product
