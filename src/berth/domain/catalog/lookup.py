"""Finding what a request names in the catalogue, with the OCTO error for each miss."""

from __future__ import annotations

from collections.abc import Sequence

from berth.domain.catalog import Catalog, Option, Product
from berth.domain.errors import BadRequest, InvalidOptionId, InvalidProductId, InvalidUnitId


def find_product(catalog: Catalog, product_id: str | None) -> Product:
    product = catalog.product(product_id) if product_id else None
    if product is None:
        raise InvalidProductId(product_id, catalog.unsold)
    return product


def find_option(product: Product, option_id: str | None) -> Option:
    option = product.option(option_id) if option_id else None
    if option is None:
        raise InvalidOptionId(option_id, product.id, [o.id for o in product.options])
    return option


def find_currency(product: Product, currency: str | None) -> str | None:
    """The requested currency, or the product's default; BAD_REQUEST if it is not sold in it."""
    if currency is None:
        return product.currency
    if currency not in product.currencies:
        offered = ", ".join(product.currencies) or "no currency"
        raise BadRequest(f"Product {product.id!r} is not sold in {currency!r} (it is priced in {offered})")
    return currency


def requested_units(
    option: Option, units: Sequence[tuple[str, int]]
) -> tuple[int, tuple[tuple[str, int], ...]]:
    """Pax and (unit id, quantity) pairs of an availability request's `units`."""
    pax = 0
    for unit_id, quantity in units:
        unit = option.unit(unit_id)
        if unit is None:
            raise InvalidUnitId(unit_id, option.id)
        pax += unit.restrictions.pax_count * quantity
    return pax, tuple(units)
