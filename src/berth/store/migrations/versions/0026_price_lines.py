"""A sale keeps its price: `bookings.price_lines` (issue 37).

Every existing booking with a currency is priced here, once, as it was sold: from the catalogue
version in force when it was made (the newest `catalog_versions` row saved at or before its
`created_at`), or from the current catalogue where no version is that old (or the old one no
longer reads). Its parts are its unit items (or the booking, for per-booking pricing) and its
extras' pieces, at the catalogue's own net (contracts came later). The upgrade reports how many
bookings were priced each way (`Upgrade.notes`).

The document shapes read here are those of this revision: a booking's unit items and its
octo/extras pieces (`extensions["octo/extras"]`), not the code of later revisions.

Revision ID: 0026
Revises: 0025
"""

from __future__ import annotations

import bisect
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

from berth.domain.bookings import Booking, BookingStatus, Contact, UnitItem
from berth.domain.catalog import Catalog, Option, Product, RentalDuration
from berth.domain.catalog.document import read_yaml
from berth.domain.price_lines import LineKind, Priceable, lines_to_document, price_lines
from berth.domain.pricing import booking_day, booking_priceables, price_on
from berth.store.types import JSONDocument, UTCDateTime

revision = "0026"
down_revision = "0025"

EXTRAS = "octo/extras"

_bookings = sa.table(
    "bookings",
    sa.column("id", sa.String),
    sa.column("connection_id", sa.String),
    sa.column("product_id", sa.String),
    sa.column("option_id", sa.String),
    sa.column("local_date", sa.String),
    sa.column("unit_items", JSONDocument),
    sa.column("currency", sa.String),
    sa.column("rental_duration_id", sa.String),
    sa.column("extensions", JSONDocument),
    sa.column("created_at", UTCDateTime),
    sa.column("price_lines", JSONDocument),
)
_versions = sa.table(
    "catalog_versions",
    sa.column("version", sa.Integer),
    sa.column("created_at", UTCDateTime),
    sa.column("document", sa.Text),
)
_meta = sa.table("catalog_meta", sa.column("supplier", JSONDocument))
_products = sa.table("products", sa.column("document", JSONDocument))


def _current(connection: sa.Connection) -> dict[str, Product]:
    if connection.execute(sa.select(_meta.c.supplier)).first() is None:
        return {}
    products = (Product.model_validate(doc) for (doc,) in connection.execute(sa.select(_products.c.document)))
    return {p.id: p for p in products}


def _read_version(document: str) -> dict[str, Product] | None:
    try:
        data = read_yaml(document)
        catalog = Catalog.model_validate(data)
    except Exception:  # a version an earlier Berth wrote that this model no longer reads
        return None
    return {p.id: p for p in catalog.products}


class _Catalogues:
    """The products of the catalogue in force at a moment, read once per version."""

    def __init__(self, connection: sa.Connection) -> None:
        rows = connection.execute(
            sa.select(_versions.c.version, _versions.c.created_at).order_by(_versions.c.created_at)
        ).all()
        self._connection = connection
        self._moments = [row.created_at for row in rows]
        self._numbers = [row.version for row in rows]
        self._read: dict[int, dict[str, Product] | None] = {}
        self.current = _current(connection)

    def at(self, moment: datetime) -> dict[str, Product] | None:
        index = bisect.bisect_right(self._moments, moment) - 1
        if index < 0:
            return None
        number = self._numbers[index]
        if number not in self._read:
            document = self._connection.execute(
                sa.select(_versions.c.document).where(_versions.c.version == number)
            ).scalar_one()
            self._read[number] = _read_version(document)
        return self._read[number]


def _pieces(extensions: dict[str, Any] | None) -> list[tuple[str, str]]:
    document = (extensions or {}).get(EXTRAS) or {}
    pieces = [(p["id"], p["extraId"]) for p in document.get("booking") or ()]
    for item_pieces in (document.get("items") or {}).values():
        pieces.extend((p["id"], p["extraId"]) for p in item_pieces or ())
    return pieces


def _priceables(row: Any, product: Product) -> list[Priceable] | None:
    option: Option | None = product.option(row.option_id)
    if option is None:
        return None
    rental: RentalDuration | None = (
        option.rental_duration(row.rental_duration_id) if row.rental_duration_id else None
    )
    booking = Booking(
        id=row.id,
        uuid=row.id,
        connection_id=row.connection_id,
        test_mode=False,
        status=BookingStatus.CONFIRMED,
        product_id=row.product_id,
        option_id=row.option_id,
        availability_id=None,
        slot_start=None,
        local_date=date.fromisoformat(row.local_date) if row.local_date else None,
        pax=0,
        reseller_reference=None,
        supplier_reference="",
        notes=None,
        contact=Contact(),
        unit_items=tuple(UnitItem.from_document(item) for item in row.unit_items),
        currency=row.currency,
        freesale=False,
        request_fingerprint="",
        created_at=row.created_at,
    )
    parts = booking_priceables(product, option, booking, rental)
    for piece_id, extra_id in _pieces(row.extensions):
        extra = option.extra(extra_id)
        price = price_on(extra.prices, row.currency, booking_day(booking)) if extra is not None else None
        if price is not None:
            parts.append(Priceable(LineKind.EXTRA, piece_id, extra_id, price))
    return parts


def upgrade() -> None:
    op.add_column("bookings", sa.Column("price_lines", JSONDocument, nullable=True))
    connection = op.get_bind()
    catalogues = _Catalogues(connection)
    counts = {"version": 0, "current": 0, "none": 0}
    rows = connection.execute(
        sa.select(*(c for c in _bookings.c if c.key != "price_lines")).where(
            _bookings.c.currency.is_not(None)
        )
    ).all()
    for row in rows:
        then = catalogues.at(row.created_at)
        parts = None
        if then is not None and row.product_id in then:
            parts = _priceables(row, then[row.product_id])
            way = "version"
        if parts is None and row.product_id in catalogues.current:
            parts = _priceables(row, catalogues.current[row.product_id])
            way = "current"
        if parts is None:
            counts["none"] += 1
            continue
        counts[way] += 1
        lines = lines_to_document(price_lines(parts, ()))
        connection.execute(sa.update(_bookings).where(_bookings.c.id == row.id).values(price_lines=lines))
    if rows:
        config = op.get_context().config
        assert config is not None
        config.attributes.setdefault("notes", []).append(
            f"0026: priced {counts['version'] + counts['current'] + counts['none']} existing bookings: "
            f"{counts['version']} from the catalogue version in force when each was made, "
            f"{counts['current']} from the current catalogue, {counts['none']} without a product "
            "or option to price them from (no price)"
        )


def downgrade() -> None:
    op.drop_column("bookings", "price_lines")
