"""octo/webhooks: the reseller's webhooks (routes in `berth.http.octo.webhooks`). It adds no
fields to any object; it is listed, echoed in `Octo-Capabilities` and kept on the webhooks a
request creates or updates, like every capability. The routes answer without it too
(OCTO.md §1.5; docs/decisions.md)."""

from __future__ import annotations

from berth.capabilities.base import Capability
from berth.capabilities.ids import WEBHOOKS


class WebhooksCapability(Capability):
    id = WEBHOOKS
    docs = "https://docs.ventrata.com/capabilities/webhooks"
