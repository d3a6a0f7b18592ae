"""The catalogue browser: products, then one product's options, units, schedules and prices."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.domain.catalog.lookup import find_product
from berth.http.admin.pages.dates import of_product
from berth.http.admin.pages.errors import PageRoute
from berth.http.admin.pages.rendering import page
from berth.http.admin.pages.session import Staff, staff

router = APIRouter(route_class=PageRoute)


@router.get("/catalog")
async def products(request: Request, me: Staff = Depends(staff)) -> Response:
    return page(request, "catalog.html", me, section="catalog", catalog=me.catalog.catalog)


@router.get("/catalog.yaml")
async def export(me: Staff = Depends(staff)) -> Response:
    return Response(
        await me.services.catalog.export_text(),
        media_type="application/yaml",
        headers={"Content-Disposition": 'attachment; filename="catalog.yaml"', "Cache-Control": "no-store"},
    )


@router.get("/catalog/{product_id}")
async def product(product_id: str, request: Request, me: Staff = Depends(staff)) -> Response:
    found = find_product(me.catalog.catalog, product_id)
    return page(request, "product.html", me, section="catalog", product=found, local=of_product(found))
