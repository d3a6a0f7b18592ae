"""The database's faults as a caller can name them: no connection could be made
(`DatabaseUnavailable`), a connection lost on the way, a database with no room (`fault_of`);
and how a request or a background tick logs each (`log_failure`)."""

from __future__ import annotations

import os
from typing import Any, Literal

from sqlalchemy.exc import DBAPIError

from berth.store.outages import Outages

_SQLITE_FULL = 13


class DatabaseUnavailable(Exception):
    """No connection to the database could be made (refused, too many connections, shutting
    down, not accepting connections, unreachable). The message names the database; the cause
    carries the driver's error; `outages` is the database's count of them, which decides
    whether a failure is logged (`log_failure`)."""

    def __init__(self, message: str, outages: Outages | None = None) -> None:
        super().__init__(message)
        self.outages = outages

    def reason(self) -> str:
        """The driver's own words for what went wrong, on one line."""
        cause: BaseException = self
        while cause.__cause__ is not None:
            cause = cause.__cause__
        text = str(cause)
        if isinstance(cause, OSError):  # "Connection refused" rather than "[Errno 111] Connect call failed"
            text = os.strerror(cause.errno) if cause.errno and cause.errno > 0 else cause.strerror or text
        return " ".join(text.split()) or type(cause).__name__


Fault = Literal["refused", "unavailable", "full"]


def fault_of(exc: BaseException) -> Fault | None:
    """What kind of database fault `exc` is, if it is one a caller can name: no connection could
    be made ("refused": nothing of the failed step was done), a connection was lost on the way
    ("unavailable": what it was doing may or may not have committed), or the database has no
    room ("full")."""
    if isinstance(exc, DatabaseUnavailable):
        return "refused"
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return "unavailable"
        code = getattr(exc.orig, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF == _SQLITE_FULL:
            return "full"
    return None


def log_failure(logger: Any, event: str, exc: BaseException, **fields: Any) -> None:
    """Log a failure of a request or a background tick. A database refusing connections says
    the same to every request and tick meanwhile: one warning line, `database unavailable`,
    for the first failure of the outage (`berth.store.outages`), none for the others. A lost
    connection is expected too (a restart, a failover, a terminated backend): one warning line
    each, no traceback. Anything else: an error with its traceback."""
    fault = fault_of(exc)
    if fault == "refused":
        assert isinstance(exc, DatabaseUnavailable)
        if exc.outages is None or exc.outages.first_report():
            logger.warning(
                "database unavailable", fault=fault, error=f"{exc}: {exc.reason()}", during=event, **fields
            )
        return
    if fault != "unavailable":
        logger.error(event, exc_info=exc, fault=fault, **fields)
        return
    # The driver's first line: the lines after it quote the SQL and its parameters.
    lines = str(getattr(exc, "orig", None) or exc).splitlines() or [""]
    said = " ".join(lines[0].split()) or type(exc).__name__
    logger.warning(event, fault=fault, error=said, **fields)
