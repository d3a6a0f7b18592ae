"""The address a request comes from, behind the reverse proxies the operator trusts
(BERTH_TRUSTED_PROXIES): what guessing is counted against."""

from __future__ import annotations

from functools import lru_cache

from starlette.types import Scope

from berth.domain.proxies import Network, client_address, proxy_networks
from berth.settings import Settings


@lru_cache(maxsize=8)
def _networks(text: str) -> tuple[Network, ...]:
    return proxy_networks(text)


def client_of(scope: Scope, settings: Settings) -> str:
    peer = scope.get("client")
    forwarded = [v.decode("latin-1") for k, v in scope["headers"] if k == b"x-forwarded-for"]
    return client_address(
        peer[0] if peer else "unknown", ",".join(forwarded) or None, _networks(settings.trusted_proxies)
    )
