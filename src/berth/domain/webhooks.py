"""Webhooks: event kinds, the retry schedule, signing secrets, which targets are allowed, and
who hears of a departure announced."""

from __future__ import annotations

import base64
import ipaddress
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from berth.domain.errors import BadRequest


class WebhookEvent(StrEnum):
    ORDER_UPDATE = "order_update"
    BOOKING_UPDATE = "booking_update"
    AVAILABILITY_UPDATE = "availability_update"
    PRODUCT_UPDATE = "product_update"


# The dotted names a Ventrata sample uses, accepted on create/update and stored as the kind.
EVENT_ALIASES = {
    "order.updated": WebhookEvent.ORDER_UPDATE,
    "booking.updated": WebhookEvent.BOOKING_UPDATE,
    "availability.updated": WebhookEvent.AVAILABILITY_UPDATE,
    "product.updated": WebhookEvent.PRODUCT_UPDATE,
}


def parse_event(value: str) -> WebhookEvent:
    if value in EVENT_ALIASES:
        return EVENT_ALIASES[value]
    try:
        return WebhookEvent(value)
    except ValueError:
        kinds = ", ".join(e.value for e in WebhookEvent)
        raise BadRequest(f"event must be one of {kinds}; {value!r} given", event=value) from None


@dataclass(frozen=True)
class Webhook:
    id: str
    connection_id: str
    event: WebhookEvent
    url: str
    capabilities: tuple[str, ...]
    use_contact_language: bool
    headers: dict[str, str]
    retry_on_error: bool
    created_at: datetime
    updated_at: datetime
    disabled_at: datetime | None = None
    disabled_reason: str | None = None

    @property
    def active(self) -> bool:
        return self.disabled_at is None


def webhook_capabilities(
    event: WebhookEvent, requested: frozenset[str], known_order: Sequence[str]
) -> tuple[str, ...]:
    """The capabilities a webhook serializes with: those of the request header; `octo/cart`
    always for order events (requirements §2.3). Kept in the registry's order."""
    chosen = set(requested)
    if event is WebhookEvent.ORDER_UPDATE:
        chosen.add("octo/cart")
    ordered = [c for c in known_order if c in chosen]
    return tuple(ordered + sorted(chosen - set(ordered)))


def parse_schedule(text: str) -> tuple[float, ...]:
    """`BERTH_RETRY_SCHEDULE`: comma-separated seconds between attempts."""
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"the retry schedule must be comma-separated seconds; {text!r} given") from None
    if not values or any(v <= 0 for v in values):
        raise ValueError("the retry schedule needs at least one positive number of seconds")
    return values


def next_retry_delay(
    schedule: Sequence[float],
    attempts: int,
    jitter: float,
    retry_after: float | None = None,
    forever: bool = False,
) -> float | None:
    """Seconds until the next attempt after `attempts` failed ones, or None to give up.

    `jitter` in [0, 1) spreads retries by ±20 % so receivers that failed together do not get
    every retry at the same instant. A receiver's `Retry-After` is honoured when it asks for
    longer (capped at a day). With `forever` the last interval repeats without end.
    """
    if attempts <= len(schedule):
        base = schedule[attempts - 1]
    elif forever:
        base = schedule[-1]
    else:
        return None
    delay = base * (0.8 + 0.4 * jitter)
    if retry_after is not None:
        delay = max(delay, min(retry_after, 86400.0))
    return delay


def new_signing_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and base64 of 24 random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def fixed_signing_secret(seed: str) -> str:
    """A documented secret for demo connections (not for production use)."""
    return "whsec_" + base64.b64encode(seed.encode()).decode()


def check_target(url: str) -> tuple[str, str]:
    """The scheme and host of a delivery URL, or BAD_REQUEST naming what is wrong with it."""
    if len(url) > 2048:
        raise BadRequest("url is longer than 2048 characters", url=url[:100])
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadRequest(f"url must be an absolute http or https URL; {url!r} given", url=url)
    return parts.scheme, parts.hostname


def is_private_address(address: str) -> bool:
    """Loopback, private, link-local, multicast, reserved or unspecified: not a public target."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def retry_at(now: datetime, delay: float) -> datetime:
    return now + timedelta(seconds=delay)


@dataclass
class Audience:
    """Who hears of one departure announced (maybe several times) in one fan-out: an
    announcement goes to everyone but the connections it says are `unchangedFor`, or only to
    those it names `onlyFor`; a connection hears of it if one of its announcements is for it."""

    everyone: bool = False
    left_out: frozenset[str] = frozenset()  # of everyone
    only: frozenset[str] = frozenset()

    def add(self, subject: Mapping[str, Any]) -> None:
        if "onlyFor" in subject:
            self.only |= frozenset(subject["onlyFor"])
            return
        left_out = frozenset(subject.get("unchangedFor", ()))
        self.left_out = self.left_out & left_out if self.everyone else left_out
        self.everyone = True

    def includes(self, connection_id: str) -> bool:
        return connection_id in self.only or (self.everyone and connection_id not in self.left_out)
