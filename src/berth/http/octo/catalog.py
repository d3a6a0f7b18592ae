"""GET /supplier, /products, /products/{productId}, /capabilities."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.capabilities.registry import CAPABILITIES
from berth.domain.errors import InvalidProductId
from berth.http.context import OctoRequest, octo_endpoint, octo_request
from berth.http.octo.common import octo_response
from berth.http.octo.schemas import ERROR_RESPONSES, CapabilityOut, ProductOut, SupplierOut
from berth.views.catalog import product_view, supplier_view

router = APIRouter(responses=ERROR_RESPONSES)


# The answers are plain functions: the FastAPI routes below and the direct dispatch of the
# most-polled routes (berth.http.hot_routes) both call them.
def supplier_answer(octo: OctoRequest, request: Request) -> Response:
    supplier = octo.snapshot.catalog.supplier
    return octo_response(octo, supplier_view(supplier, octo_endpoint(request), octo.view))


def products_answer(octo: OctoRequest) -> Response:
    key = ("products", octo.view.shared_key)
    encoded = octo.snapshot.memo.get(key)
    if encoded is None:
        encoded = orjson.dumps([product_view(p, octo.view) for p in octo.snapshot.catalog.products])
        octo.snapshot.memo[key] = encoded
    return octo_response(octo, encoded=encoded)


def product_answer(octo: OctoRequest, product_id: str) -> Response:
    key = ("product", product_id, octo.view.shared_key)
    encoded = octo.snapshot.memo.get(key)
    if encoded is None:
        product = octo.snapshot.catalog.product(product_id)
        if product is None:
            raise InvalidProductId(product_id)
        encoded = orjson.dumps(product_view(product, octo.view))
        octo.snapshot.memo[key] = encoded
    return octo_response(octo, encoded=encoded)


@router.get("/supplier", response_model=SupplierOut, summary="The supplier behind this endpoint")
async def get_supplier(request: Request, octo: OctoRequest = Depends(octo_request)) -> Response:
    return supplier_answer(octo, request)


@router.get("/products", response_model=list[ProductOut], summary="Every product on sale")
async def list_products(octo: OctoRequest = Depends(octo_request)) -> Response:
    return products_answer(octo)


@router.get("/products/{productId}", response_model=ProductOut, summary="One product")
async def get_product(productId: str, octo: OctoRequest = Depends(octo_request)) -> Response:
    return product_answer(octo, productId)


@router.get(
    "/capabilities", response_model=list[CapabilityOut], summary="Capabilities this server implements"
)
async def list_capabilities(octo: OctoRequest = Depends(octo_request)) -> Response:
    return octo_response(octo, [c.describe() for c in CAPABILITIES])
