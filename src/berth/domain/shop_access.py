"""The shop's secrets and limits, pure: the keys its cookies are signed with, the token of a
booking's "manage my booking" link, and how many holds a browser or an address may have.

A manage token is 256 bits derived (HMAC-SHA256) from BERTH_SECRET_KEY, the booking's id and
a random salt kept with the booking, so the receipt written later by the mail worker can link
it without the token being stored anywhere: the database keeps the salt and the token's
SHA-256 (to find the booking from a link), neither of which gives the token without the key,
and the key alone does not give it without the salt. Nothing about the booking can be read
from the token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

TOKEN_CHARACTERS = 43  # 32 bytes in URL-safe base64, unpadded


def shop_key(secret_key: str, purpose: str) -> bytes:
    """A key of the shop's own for `purpose` (cookies, manage links), from BERTH_SECRET_KEY."""
    return hashlib.sha256(b"berth shop\0" + purpose.encode() + b"\0" + secret_key.encode()).digest()


def new_salt() -> str:
    return secrets.token_urlsafe(16)


def manage_token(key: bytes, booking_id: str, salt: str) -> str:
    digest = hmac.digest(key, b"manage\0" + booking_id.encode() + b"\0" + salt.encode(), "sha256")
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def token_hash(token: str) -> str:
    """What the database keeps of a token: its SHA-256 (a 256-bit token needs no salt)."""
    return hashlib.sha256(token.encode()).hexdigest()


def looks_like_token(text: str) -> bool:
    """Whether `text` could be a token at all (an address typed wrong is not looked up)."""
    return len(text) == TOKEN_CHARACTERS and all(c.isalnum() or c in "-_" for c in text)


def token_of(keys: Sequence[bytes], booking_id: str, salt: str, stored_hash: str) -> str | None:
    """The booking's manage token under the first of `keys` (the current key, then earlier
    ones) whose token is the one stored: a link sent before a key change keeps working while
    the earlier key is kept (BERTH_SECRET_KEY_PREVIOUS)."""
    for key in keys:
        token = manage_token(key, booking_id, salt)
        if hmac.compare_digest(token_hash(token), stored_hash):
            return token
    return None


@dataclass(frozen=True)
class HoldLimits:
    """BERTH_SHOP_HOLDS_PER_SESSION, BERTH_SHOP_HOLDS_PER_ADDRESS, BERTH_SHOP_PLACES_PER_ADDRESS."""

    per_session: int
    per_address: int
    places_per_address: int


@dataclass(frozen=True)
class LiveHolds:
    """The shop's holds not yet paid nor ended of one browser session and of one address."""

    session: int
    address: int
    address_places: int


class Refusal(StrEnum):
    SESSION = "session"  # this browser has as many unpaid bookings as it may
    ADDRESS = "address"  # so has its network address
    PLACES = "places"  # the address would hold more places than it may


def hold_refusal(limits: HoldLimits, live: LiveHolds, places: int) -> Refusal | None:
    """Why a new hold of `places` places may not be placed, if it may not."""
    if live.session >= limits.per_session:
        return Refusal.SESSION
    if live.address >= limits.per_address:
        return Refusal.ADDRESS
    if live.address_places + places > limits.places_per_address:
        return Refusal.PLACES
    return None


_ORIGIN = re.compile(r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$")


def frame_ancestors(origins: str) -> str:
    """The CSP `frame-ancestors` sources of BERTH_SHOP_ORIGINS: `'self'` and each origin listed
    (`https://www.example.com`, with a port if it has one; no path, no wildcard); ValueError
    naming one that is not an origin."""
    sources = ["'self'"]
    for origin in re.split(r"[\s,]+", origins.strip()):
        if not origin:
            continue
        if _ORIGIN.fullmatch(origin) is None:
            raise ValueError(
                f"BERTH_SHOP_ORIGINS: {origin!r} is not an origin (scheme://host[:port], e.g. "
                "https://www.example.com, without a path)"
            )
        sources.append(origin.rstrip("/").lower())
    return " ".join(dict.fromkeys(sources))
