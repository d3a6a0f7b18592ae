"""Structured logging: JSON lines (or console), with the request id bound per request.

Nothing secret is logged: no request headers (API keys, admin token), no bodies, no signing
secrets; URLs of delivery targets lose their user info and query string (`redact_url`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import structlog


class _Stderr:
    """Writes to whatever `sys.stderr` is when a line is written, so redirection (and test
    capture) applies to loggers created before it."""

    def write(self, text: str) -> Any:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def redact_url(url: str) -> str:
    """The URL without user info and query string, which may carry credentials."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "<unparseable url>"
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "", ""))


# Libraries that log request URLs or SQL parameters at INFO/DEBUG (delivery URLs with tokens,
# sealed secrets, webhook headers): kept at WARNING whatever the root logger is set to.
QUIET_LIBRARIES = ("aiohttp", "asyncpg", "sqlalchemy.engine", "sqlalchemy.pool")


_level = logging.INFO


def info_logged() -> bool:
    """Whether INFO lines are written: callers skip building a line nobody will see."""
    return _level <= logging.INFO


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    global _level
    _level = logging.getLevelNamesMapping()[level.upper()]
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())  # no escape codes in journals
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_level),
        logger_factory=structlog.PrintLoggerFactory(_Stderr()),  # type: ignore[arg-type]
        # Not cached: a later configure_logging (another level, a test) applies to every logger.
        cache_logger_on_first_use=False,
    )
