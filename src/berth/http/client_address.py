"""The address a request comes from, behind the reverse proxies the operator trusts
(BERTH_TRUSTED_PROXIES): what guessing is counted against."""

from __future__ import annotations

from functools import lru_cache

import structlog
from starlette.types import Scope

from berth.domain.proxies import Network, client_address, proxy_networks, trusted
from berth.settings import Settings

log = structlog.get_logger("berth.security")


@lru_cache(maxsize=8)
def _networks(text: str) -> tuple[Network, ...]:
    return proxy_networks(text)


def client_of(scope: Scope, settings: Settings) -> str:
    peer = scope.get("client")
    peer_address = peer[0] if peer else "unknown"
    forwarded = [v.decode("latin-1") for k, v in scope["headers"] if k == b"x-forwarded-for"]
    proxies = _networks(settings.trusted_proxies)
    if forwarded and not trusted(peer_address, proxies):
        _warn_untrusted_forwarding(scope, peer_address)
    return client_address(peer_address, ",".join(forwarded) or None, proxies)


def _warn_untrusted_forwarding(scope: Scope, peer: str) -> None:
    """Once per application: behind a proxy not named in BERTH_TRUSTED_PROXIES every client has
    the proxy's address, so one guesser's lockout would keep all staff out."""
    state = scope["app"].state if "app" in scope else None
    if state is None or getattr(state, "warned_untrusted_forwarding", False):
        return
    state.warned_untrusted_forwarding = True
    log.warning(
        "X-Forwarded-For from a peer that is not a trusted proxy: ignored, the peer's address counts "
        "as the client's; behind a reverse proxy, set BERTH_TRUSTED_PROXIES to its address",
        peer=peer,
    )
