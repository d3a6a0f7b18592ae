"""GET /supplier, /products, /products/{productId}, /capabilities."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.capabilities.registry import CAPABILITIES
from berth.domain.errors import InvalidProductId
from berth.http.context import OctoRequest, octo_endpoint, octo_request
from berth.http.octo.common import octo_response, prepared_response
from berth.http.octo.routing import Call, OctoRoute, add_routes
from berth.http.octo.schemas import ERROR_RESPONSES, CapabilityOut, ProductOut, SupplierOut
from berth.views.catalog import product_view, supplier_view

router = APIRouter(responses=ERROR_RESPONSES)


# Answers of /supplier kept per endpoint: the endpoint is the Host header's when no public
# URL is set, which the client chooses.
MAX_ENDPOINTS = 16


def supplier_answer(octo: OctoRequest, request: Request) -> Response:
    endpoint = octo_endpoint(request)
    by_endpoint: dict[str, Response] = octo.snapshot.memo.setdefault(("supplier", octo.view.shared_key), {})
    found = by_endpoint.get(endpoint)
    if found is None:
        if len(by_endpoint) >= MAX_ENDPOINTS:
            by_endpoint.clear()
        supplier = octo.snapshot.catalog.supplier
        found = by_endpoint[endpoint] = octo_response(octo, supplier_view(supplier, endpoint, octo.view))
    return found


def products_answer(octo: OctoRequest) -> Response:
    products = octo.snapshot.catalog.products
    return prepared_response(
        octo, "products", lambda: orjson.dumps([product_view(p, octo.view) for p in products])
    )


def product_answer(octo: OctoRequest, product_id: str) -> Response:
    def encode() -> bytes:
        product = octo.snapshot.catalog.product(product_id)
        if product is None:  # raised, so never kept
            raise InvalidProductId(product_id, octo.snapshot.catalog.unsold)
        return orjson.dumps(product_view(product, octo.view))

    return prepared_response(octo, ("product", product_id), encode)


async def _supplier(call: Call) -> Response:
    return supplier_answer(call.octo, Request(call.scope))


async def _products(call: Call) -> Response:
    return products_answer(call.octo)


async def _product(call: Call) -> Response:
    return product_answer(call.octo, call.params["productId"])


SUPPLIER = OctoRoute(
    "GET", "/supplier", "get_supplier", "The supplier behind this endpoint", SupplierOut, _supplier
)
PRODUCTS = OctoRoute(
    "GET", "/products", "list_products", "Every product on sale", list[ProductOut], _products
)
PRODUCT = OctoRoute("GET", "/products/{productId}", "get_product", "One product", ProductOut, _product)
add_routes(router, [SUPPLIER, PRODUCTS, PRODUCT])


@router.get(
    "/capabilities", response_model=list[CapabilityOut], summary="Capabilities this server implements"
)
async def list_capabilities(octo: OctoRequest = Depends(octo_request)) -> Response:
    return octo_response(octo, [c.describe() for c in CAPABILITIES])
