"""The payment provider's webhooks: `POST /payments/stripe/webhook`, signed by Stripe (checked with
BERTH_STRIPE_WEBHOOK_SECRET), no other authentication. Each notification only says which payment
to read from Stripe again (`Payments.handle_webhook`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from berth.container import Services
from berth.http.context import current_services

router = APIRouter()


@router.post(
    "/payments/stripe/webhook",
    summary="Stripe's notifications of payments and refunds (signature checked)",
    status_code=204,
    responses={400: {"description": "Not signed by Stripe with the webhook secret"}},
)
async def stripe_webhook(request: Request, svc: Services = Depends(current_services)) -> Response:
    payload = await request.body()
    await svc.payments.handle_webhook(payload, request.headers.get("stripe-signature", ""))
    return Response(status_code=204)
