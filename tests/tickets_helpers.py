"""The ticketed harbour cruise the ticket tests book (Europe/London, departures at 10:00): it
delivers PDF_URL beside QR, Aztec and Code 128 codes, as a voucher and per-guest tickets, with
content in English and German, a meeting point, redemption instructions, a pickup point and
extras; and reading tickets back: the text with pypdf, the codes with zxing-cpp."""

from __future__ import annotations

import io
import re
import uuid
from typing import Any

import pypdf
import pypdfium2
import zxingcpp

from berth.capabilities.registry import CATALOG_RULES
from berth.domain.catalog import Catalog
from berth.domain.catalog.document import catalog_to_yaml, parse_catalog
from berth.domain.tickets import WalletPasses
from tests.builders import (
    Document,
    catalog,
    extra,
    option,
    pickup_point,
    price,
    product,
    schedule,
    supplier,
    unit,
)

CRUISE = {"productId": "ticketed-cruise", "optionId": "DEFAULT"}
DEPARTURE = "2026-06-02T10:00:00+01:00"
PIER = "0d3f1a6c-2b7e-4c55-9a10-7a1c2e3f4a01"
TICKET_URL = re.compile(
    r"^(?P<base>https?://[^/]+)/tickets/(?P<token>[A-Za-z0-9_-]{43})\.(?P<suffix>pdf|pkpass)$"
)


def ticketed_cruise(**changes: Any) -> Document:
    adult = {
        **unit("adult", "ADULT", prices=[price(2500, vat=417)]),
        "content": {"en-GB": {"title": "Adult"}, "de-DE": {"title": "Erwachsene"}},
    }
    child = {
        **unit("child", "CHILD", prices=[price(1500)], minAge=3, maxAge=15),
        "content": {"en-GB": {"title": "Child"}, "de-DE": {"title": "Kind"}},
    }
    pier = pickup_point(PIER, "Tower Hotel", 30, window=10, street="St Katharine's Way", locality="London")
    location = {
        "title": "Harbour Pier", "types": ["START", "REDEMPTION"],
        "place": {"latitude": 51.5055, "longitude": -0.0754,
                  "postalAddress": {"streetAddress": "1 Harbour Walk", "addressLocality": "London"}},
    }  # fmt: skip
    return product(
        CRUISE["productId"],
        deliveryFormats=changes.pop("formats", ["QRCODE", "AZTECCODE", "CODE128", "PDF_URL"]),
        deliveryMethods=changes.pop("methods", ["VOUCHER", "TICKET"]),
        content={
            "en-GB": {
                "title": "Harbour Cruise", "locations": [location],
                "features": [{"type": "REDEMPTION_INSTRUCTION", "shortDescription": "Show your code at the pier gate"}],
            },
            "de-DE": {
                "title": "Hafenrundfahrt", "locations": [location],
                "features": [{"type": "REDEMPTION_INSTRUCTION", "shortDescription": "Zeigen Sie Ihren Code am Tor"}],
            },
        },
        options=[
            option(
                units=[adult, child], schedules=[schedule(("10:00",), capacity=40)],
                content={"en-GB": {"title": "Morning sailing"}, "de-DE": {"title": "Morgenfahrt"}},
                pickupPoints=[pier],
                extras=[extra("lunch", [price(1700)], perUnit=True, maxQuantity=1, title="Two-course lunch"),
                        extra("photos", [price(2300)], maxQuantity=1, title="Photo package")],
            )
        ],
        **changes,
    )  # fmt: skip


def tickets_catalog(**changes: Any) -> Catalog:
    return catalog(ticketed_cruise(**changes))


WALLET_FORMATS = ["QRCODE", "PDF_URL", "PKPASS_URL"]


def wallet_catalog_text() -> str:
    """The catalogue file of the cruise delivering Apple Wallet passes too."""
    document = {"supplier": supplier(), "products": [ticketed_cruise(formats=WALLET_FORMATS)]}
    return catalog_to_yaml(Catalog.model_validate(document))


def wallet_catalog() -> Catalog:
    """That catalogue, read as Berth reads it once passes are configured."""
    return parse_catalog(wallet_catalog_text(), (*CATALOG_RULES, WalletPasses()))


def cruise_booking(*guests: dict[str, Any], **extra_fields: Any) -> dict[str, Any]:
    return {
        "uuid": str(uuid.uuid4()),
        **CRUISE,
        "availabilityId": DEPARTURE,
        "unitItems": list(guests) or [{"unitId": "adult"}],
        **extra_fields,
    }


def pdf_text(content: bytes) -> list[str]:
    """The text of each page, its lines joined (wrapping breaks a line anywhere)."""
    return [" ".join(page.extract_text().split()) for page in pypdf.PdfReader(io.BytesIO(content)).pages]


def page_sizes(content: bytes) -> list[tuple[float, float]]:
    return [
        (round(float(p.mediabox.width)), round(float(p.mediabox.height)))
        for p in pypdf.PdfReader(io.BytesIO(content)).pages
    ]


def decoded_codes(content: bytes, page: int = 0) -> dict[str, str]:
    """Every barcode found on the page, rendered at 200 dpi: its text by format name."""
    document = pypdfium2.PdfDocument(content)
    try:
        image = document[page].render(scale=200 / 72).to_pil()
    finally:
        document.close()
    return {found.format.name: found.text for found in zxingcpp.read_barcodes(image)}


Box = tuple[float, float, float, float]  # left, bottom, right, top, in points


def text_box(content: bytes, text: str, page: int = 0) -> Box:
    """Where `text` is drawn on the page (pdfium's boxes of its characters, joined); it must be
    there, whole, once."""
    document = pypdfium2.PdfDocument(content)
    try:
        found = document[page].get_textpage()
        searcher = found.search(text, match_case=True)
        first = searcher.get_next()
        assert first is not None, f"{text!r} is not on page {page + 1}"
        assert searcher.get_next() is None, f"{text!r} is on page {page + 1} more than once"
        start, count = first
        boxes = [found.get_charbox(index) for index in range(start, start + count)]
    finally:
        document.close()
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def overlap(one: Box, other: Box) -> bool:
    return one[0] < other[2] and other[0] < one[2] and one[1] < other[3] and other[1] < one[3]
