"""The Webhook object (requirements §2.3) and the supplier object of delivery payloads."""

from __future__ import annotations

from berth.capabilities.base import JSON, View
from berth.domain.catalog import Supplier
from berth.domain.webhooks import Webhook
from berth.views.catalog import supplier_view


def webhook_view(webhook: Webhook) -> JSON:
    return {
        "id": webhook.id,
        "event": webhook.event.value,
        "url": webhook.url,
        "capabilities": list(webhook.capabilities),
        "useContactLanguage": webhook.use_contact_language,
        "headers": dict(webhook.headers),
        "retryOnError": webhook.retry_on_error,
    }


def payload_supplier_view(supplier: Supplier, endpoint: str, view: View) -> JSON:
    """The requirements' four keys (`id`, `name`, `reference`, `website`) first, then the core
    Supplier fields and those the webhook's capabilities add."""
    return {
        "id": supplier.id,
        "name": supplier.name,
        "reference": supplier.reference,
        "website": supplier.contact.website,
        **supplier_view(supplier, endpoint, view),
    }
