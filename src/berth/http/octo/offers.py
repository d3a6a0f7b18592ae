"""The offers a reseller may use: GET /offers (octo/offers)."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.responses import Response

from berth.capabilities.offers.fields import offer_json
from berth.container import Services
from berth.domain.offer_rules import Sale, sale_reason, visible
from berth.http.context import OctoRequest, current_services, octo_request
from berth.http.octo.common import octo_response
from berth.http.octo.schemas import ERROR_RESPONSES, OfferOut

router = APIRouter(responses=ERROR_RESPONSES)


@router.get("/offers", response_model=list[OfferOut], summary="The offers this connection may use")
async def list_offers(
    octo: OctoRequest = Depends(octo_request), svc: Services = Depends(current_services)
) -> Response:
    """Every active offer this connection's sales may use (octo/offers), with whether it can be
    used now (`usable`, else `unusableReason`: its sale window). What applies to a departure or
    a booking is shown on the availability and the booking."""
    current = await svc.offers.current()
    connection = octo.connection.id
    sale = Sale(connection, connection == current.shop_connection_id, "", "", None, svc.clock())
    listed = [
        offer_json(offer, octo.view, None, sale_reason(offer, sale))
        for offer in current.document.offers
        if visible(offer, sale)
    ]
    return octo_response(octo, listed)
