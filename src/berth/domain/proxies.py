"""The client's address behind reverse proxies: read from X-Forwarded-For only when the
connecting peer is a proxy the operator named (BERTH_TRUSTED_PROXIES), else anyone could
name themselves any address."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

Network = IPv4Network | IPv6Network


def proxy_networks(text: str) -> tuple[Network, ...]:
    """`127.0.0.1, 10.0.0.0/8` as networks; ValueError naming what is not one."""
    found = []
    for part in text.split(","):
        if part.strip():
            try:
                found.append(ip_network(part.strip(), strict=False))
            except ValueError:
                raise ValueError(f"{part.strip()!r} is not an IP address or network (CIDR)") from None
    return tuple(found)


def _address(text: str) -> IPv4Address | IPv6Address | None:
    try:
        return ip_address(text.strip())
    except ValueError:
        return None


def trusted(peer: str, proxies: Sequence[Network]) -> bool:
    """Whether `peer` is one of the proxies whose X-Forwarded-For is believed."""
    address = _address(peer)
    return address is not None and any(address in network for network in proxies)


def client_address(peer: str, forwarded_for: str | None, proxies: Sequence[Network]) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the last
    address of X-Forwarded-For that is not a trusted proxy (each proxy appends the address it
    saw, so the ones before the first untrusted one may be made up)."""
    chain = [peer, *reversed((forwarded_for or "").split(","))] if forwarded_for else [peer]
    found = peer
    for hop in chain:
        address = _address(hop)
        if address is None:
            return found  # garbage from a proxy: the last address it vouched for
        found = str(address)
        if not any(address in network for network in proxies):
            return found
    return found
