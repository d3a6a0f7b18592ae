"""octo/gifts: gift vouchers a connection sells (routes in `berth.http.octo.gifts`, the service in
`berth.services.gifts`). It adds no field to other objects yet; it is listed and echoed in
`Octo-Capabilities` like every capability, and its routes answer without it too, as
octo/webhooks' do (docs/gifts.md)."""

from __future__ import annotations

from berth.capabilities.base import Capability
from berth.capabilities.ids import GIFTS


class GiftsCapability(Capability):
    id = GIFTS
    docs = "https://docs.ventrata.com/capabilities/gifts"
