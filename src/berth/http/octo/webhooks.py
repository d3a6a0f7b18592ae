"""The reseller's webhooks: POST/PATCH/GET/DELETE /webhooks (octo/webhooks)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from berth.capabilities.webhooks.service import MAX_HEADERS, WebhookInput
from berth.container import Services
from berth.domain import lengths
from berth.domain.errors import BadRequest
from berth.http.context import OctoRequest, current_services, octo_request
from berth.http.octo.common import octo_response
from berth.http.octo.schemas import ERROR_RESPONSES
from berth.http.types import Flag
from berth.views.webhooks import webhook_view

router = APIRouter(responses=ERROR_RESPONSES)


class WebhookBody(BaseModel):
    """`capabilities` in a body is ignored: they come from the Octo-Capabilities header."""

    model_config = ConfigDict(extra="ignore")
    event: Annotated[str, Field(max_length=40)] | None = None
    url: Annotated[str, Field(max_length=lengths.URL)] | None = None
    useContactLanguage: Flag | None = None
    headers: (
        Annotated[
            dict[
                Annotated[str, Field(max_length=lengths.HEADER_NAME)],
                Annotated[str, Field(max_length=lengths.HEADER_VALUE)],
            ],
            Field(max_length=MAX_HEADERS),
        ]
        | None
    ) = None
    retryOnError: Flag | None = None

    def input(self) -> WebhookInput:
        return WebhookInput(
            event=self.event,
            url=self.url,
            use_contact_language=self.useContactLanguage,
            headers=self.headers,
            retry_on_error=self.retryOnError,
        )


class DeleteByUrlBody(BaseModel):
    model_config = ConfigDict(extra="ignore")
    url: Annotated[str, Field(max_length=lengths.URL)] | None = None


class WebhookOut(BaseModel):
    id: str
    event: str
    url: str
    capabilities: list[str]
    useContactLanguage: bool
    headers: dict[str, str]
    retryOnError: bool


@router.post("/webhooks", response_model=WebhookOut, summary="Subscribe to an event")
async def create_webhook(
    body: WebhookBody, octo: OctoRequest = Depends(octo_request), svc: Services = Depends(current_services)
) -> Response:
    webhook = await svc.webhooks.create(octo.connection.id, body.input(), octo.view.capabilities)
    return octo_response(octo, webhook_view(webhook))


@router.patch("/webhooks/{webhookId}", response_model=WebhookOut, summary="Change a webhook")
async def update_webhook(
    webhookId: str,
    body: WebhookBody,
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    webhook = await svc.webhooks.update(octo.connection.id, webhookId, body.input(), octo.view.capabilities)
    return octo_response(octo, webhook_view(webhook))


@router.get("/webhooks", response_model=list[WebhookOut], summary="Your webhooks")
async def list_webhooks(
    octo: OctoRequest = Depends(octo_request), svc: Services = Depends(current_services)
) -> Response:
    return octo_response(octo, [webhook_view(w) for w in await svc.webhooks.find(octo.connection.id)])


@router.delete("/webhooks/{webhookId}", response_model=WebhookOut, summary="Delete a webhook (returns it)")
async def delete_webhook(
    webhookId: str, octo: OctoRequest = Depends(octo_request), svc: Services = Depends(current_services)
) -> Response:
    return octo_response(octo, webhook_view(await svc.webhooks.delete(octo.connection.id, webhookId)))


@router.delete("/webhooks", response_model=list[WebhookOut], summary="Delete your webhooks with this url")
async def delete_webhooks_by_url(
    url: str | None = Query(default=None, max_length=2048),
    body: DeleteByUrlBody | None = Body(default=None),
    octo: OctoRequest = Depends(octo_request),
    svc: Services = Depends(current_services),
) -> Response:
    target = url or (body.url if body else None)
    if not target:
        raise BadRequest("Give the url of the webhooks to delete, as a query parameter or a body field")
    deleted = await svc.webhooks.delete_by_url(octo.connection.id, target)
    return octo_response(octo, [webhook_view(w) for w in deleted])
