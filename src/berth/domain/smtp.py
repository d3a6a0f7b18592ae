"""`BERTH_SMTP_URL`: the SMTP server guests' emails go to, and how to connect to it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

DEFAULT_PORTS = {"smtp": 587, "smtps": 465}


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool  # smtps://: TLS from the first byte
    require_starttls: bool  # smtp:// with credentials: never send them in clear
    username: str | None
    password: str | None
    cafile: str | None  # ?cafile=PATH: trust this CA (a private relay's own certificate)


def parse_smtp_url(url: str) -> SmtpServer:
    """`smtp://user:password@host:587` (STARTTLS, required with credentials; offered ones
    taken without), `smtps://user:password@host:465` (implicit TLS), `smtp://host:25` (a relay)."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError("BERTH_SMTP_URL must look like smtp://user:password@host:587 or smtps://host:465")
    username = unquote(parts.username) if parts.username else None
    cafile = parse_qs(parts.query).get("cafile", [None])[0]
    return SmtpServer(
        host=parts.hostname,
        port=parts.port or DEFAULT_PORTS[parts.scheme],
        implicit_tls=parts.scheme == "smtps",
        require_starttls=parts.scheme == "smtp" and username is not None,
        username=username,
        password=unquote(parts.password) if parts.password is not None else None,
        cafile=cafile,
    )
