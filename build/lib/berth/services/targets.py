"""Where deliveries may go: public addresses only, unless the settings allow private ones."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

from berth.domain.errors import BadRequest
from berth.domain.webhooks import check_target, is_private_address


async def check_delivery_url(url: str, allow_private: bool) -> None:
    """BAD_REQUEST for a URL that is malformed, or whose host is (or resolves to) a loopback,
    private, link-local or otherwise non-public address while those are not allowed."""
    scheme, host = check_target(url)
    if allow_private:
        return
    try:
        addresses = [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, 443 if scheme == "https" else 80, type=socket.SOCK_STREAM
            )
        except OSError:
            raise BadRequest(f"The host of {url!r} cannot be resolved", url=url) from None
        addresses = sorted({str(info[4][0]) for info in infos})
    for address in addresses:
        if is_private_address(address):
            raise BadRequest(
                f"{url!r} points to the non-public address {address}; set BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS to allow it",
                url=url,
            )
