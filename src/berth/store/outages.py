"""The database refusing connections, as one process sees it: an outage begins with the first
connection that cannot be made and ends with the next one made. Counted for `/metrics`, and
logged once when it is first reported (`berth.store.faults.log_failure`) and once when it
ends: not once per request or background tick that met it."""

from __future__ import annotations

import time

import structlog

log = structlog.get_logger("berth.store")


class Outages:
    def __init__(self) -> None:
        self.refused = 0  # connections that could not be made, since the process started
        self.episodes = 0
        self._since: float | None = None
        self._refused_now = 0
        self._reported = False

    @property
    def ongoing(self) -> bool:
        return self._since is not None

    def refusal(self) -> None:
        """A connection could not be made."""
        self.refused += 1
        self._refused_now += 1
        if self._since is None:
            self._since = time.monotonic()
            self.episodes += 1

    def first_report(self) -> bool:
        """Whether this is the outage's first report (the one to log); after it, False until
        the next outage."""
        first = self._since is not None and not self._reported
        self._reported = self._reported or first
        return first

    def reached(self, database: str) -> None:
        """A connection was made: an ongoing outage ends, with a line if it was reported."""
        if self._since is None:
            return
        if self._reported:
            log.warning(
                "database available again",
                database=database,
                refused=self._refused_now,
                seconds=round(time.monotonic() - self._since, 1),
            )
        self._since = None
        self._refused_now = 0
        self._reported = False
