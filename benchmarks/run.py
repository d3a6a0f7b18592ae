"""Berth's benchmark: how fast each hot route is, as a ratio to a bare Starlette baseline
measured on the same machine in the same run.

    .venv/bin/python benchmarks/run.py [--duration 3] [--rounds 1] [--only supplier] ...

For each database mode (SQLite, and PostgreSQL when BERTH_BENCH_POSTGRES_URL is set) it
starts `berth serve --demo` on a fresh database, then drives every route in routes.py with
wrk, alternating baseline and Berth rounds, then tops the database up to 10,000 bookings and
reads each worker's RSS (issue 4's memory target). With `--bookings N` it then seeds N
bookings straight into the database (seed.py), prints the query plans of the routes' key
statements, measures the routes of BIG_DATA_ROUTES again and compares (issue 20, "flat as data
grows"). It prints tables and a line per mode (also written to
benchmarks/results/<UTC timestamp>.json). See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from bare_app import create_schema as create_bare_schema
from loadgen import WrkResult, compose_script, ensure_wrk, run_wrk, wrk_version
from mail_live import MAIL_LIVE, Inbox, MailLive, run_mail_live, smtp_inbox, summary_line
from mail_live import SECONDS as MAIL_LIVE_SECONDS
from mixed import plan as look_to_book_plan
from mixed import run_mixed
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from seed import Plan, SeedReport, connection_of_key, explain_statements, seed_bookings, verify_seed
from servers import (
    BenchError,
    ServerProcess,
    cpu_seconds,
    free_port,
    postgres_database,
    postgres_version,
    redact,
    sqlite_database,
)
from shop_checkout import (
    GUESTS,
    MIN_ROUND_SECONDS,
    SHOP_CHECKOUT,
    STRIPE_ALONE,
    WEBHOOK_SECONDS,
    CheckoutRound,
    run_checkouts,
    run_stripe_alone,
    send_webhooks,
    webhook_sink,
)
from shop_checkout import plan as checkout_plan

from berth import fake_stripe
from berth.fake_stripe import FakeStripe
from routes import (
    BIG_DATA_ROUTES,
    FLAT_WITHIN,
    LOOK_TO_BOOK,
    RESELLER,
    ROUTES,
    RSS_AFTER_BOOKINGS,
    RSS_TARGET_MB,
    SHOP_BESIDE_BACKOFFICE,
    TARGETS,
    BenchContext,
    Prepared,
    Route,
    RouteRun,
    count_bookings,
    ensure_bench_products,
    reserve_spread,
)

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
MODES = ("sqlite", "postgres")
POSTGRES_ENV = "BERTH_BENCH_POSTGRES_URL"
TOP_UP_CONCURRENCY = 32  # reservations in flight at once during the top-up
# The top-ups of a run share TOP_UP_SECONDS per mode: a slow database (PostgreSQL on a busy
# machine) may use what a quick one left, and the whole run stays bounded.
TOP_UP_SECONDS = 120
SEED_SECONDS = 120  # issue 20: the bookings are seeded "in under two minutes"


# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    duration: int
    connections: int
    threads: int
    workers: int
    rounds: int
    warmup: int
    only: tuple[str, ...]
    modes: tuple[str, ...]
    env: dict[str, str]
    bookings: int = 0  # --bookings: seed this many, then measure BIG_DATA_ROUTES again
    plans: bool = False  # --plans: the query plans on the small database too

    def as_json(self) -> dict[str, Any]:
        return {
            "duration_s": self.duration,
            "connections": self.connections,
            "threads": self.threads,
            "workers": self.workers,
            "rounds": self.rounds,
            "warmup_s": self.warmup,
            "only": list(self.only),
            "modes": list(self.modes),
            "env": self.env,
            "bookings": self.bookings,
            "plans": self.plans,
        }


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {value}")
    return value


def parse_options(argv: Sequence[str]) -> Options:
    parser = argparse.ArgumentParser(
        prog="benchmarks/run.py",
        description="Benchmark Berth against a bare Starlette baseline on the same machine, same run.",
    )
    parser.add_argument("--duration", type=_positive, default=3, help="seconds per round (default 3)")
    parser.add_argument("--connections", type=_positive, default=32, help="wrk connections (default 32)")
    parser.add_argument("--threads", type=_positive, default=2, help="wrk threads (default 2)")
    parser.add_argument(
        "--workers", type=_positive, default=2, help="uvicorn workers, both servers (default 2)"
    )
    parser.add_argument(
        "--rounds", type=_positive, default=1, help="measured rounds per server and route (default 1)"
    )
    parser.add_argument(
        "--warmup",
        type=_not_negative,
        default=1,
        help="unmeasured seconds per server and route first (default 1)",
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="ROUTE", help="run only this route (repeatable)"
    )
    parser.add_argument(
        "--modes", default=",".join(MODES), help="database modes, comma-separated (default sqlite,postgres)"
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="BERTH_NAME=VALUE",
        help="extra setting for the Berth server (repeatable)",
    )
    parser.add_argument(
        "--bookings",
        type=_not_negative,
        default=0,
        metavar="N",
        help="after a mode's rounds, seed N bookings into its database and measure "
        f"{', '.join(BIG_DATA_ROUTES)} again (e.g. 1000000)",
    )
    parser.add_argument(
        "--plans",
        action="store_true",
        help="with --bookings: print the query plans on the small database too (before seeding)",
    )
    parser.add_argument("--list", action="store_true", help="list the routes and their targets, then exit")
    args = parser.parse_args(argv)

    if args.list:
        for route in ROUTES:
            again = "  (again with --bookings)" if route.name in BIG_DATA_ROUTES else ""
            if route.bare:
                again += "  (the bare app: the write ceiling)"
            elif route.ceiling:
                again += f"  (ceiling: {route.ceiling})"
            print(f"{route.name:26} {route.method:5} {route.path:38} {_targets_text(route)}{again}")
        raise SystemExit(0)

    known = {route.name for route in ROUTES}
    unknown = [name for name in args.only if name not in known]
    if unknown:
        parser.error(f"unknown route(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    modes = tuple(mode.strip() for mode in args.modes.split(",") if mode.strip())
    bad = [mode for mode in modes if mode not in MODES]
    if bad or not modes:
        parser.error(f"--modes takes a comma-separated list of {', '.join(MODES)}")
    if args.connections < args.threads:
        parser.error("--connections must be at least --threads")
    env: dict[str, str] = {}
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not name.startswith("BERTH_"):
            parser.error(f"--env takes BERTH_NAME=VALUE, not {item!r}")
        if name == "BERTH_DATABASE_URL":
            parser.error(f"the bench picks the database itself (fresh SQLite, or {POSTGRES_ENV})")
        env[name] = value
    return Options(
        duration=args.duration,
        connections=args.connections,
        threads=args.threads,
        workers=args.workers,
        rounds=args.rounds,
        warmup=args.warmup,
        only=tuple(args.only),
        modes=modes,
        env=env,
        bookings=args.bookings,
        plans=args.plans,
    )


def _targets_text(route: Route) -> str:
    targets = {mode: route.target(mode) for mode in MODES}
    if all(value is None for value in targets.values()):
        return "no target"
    if len(set(targets.values())) == 1:
        return f"≥ {targets[MODES[0]]}x"
    return ", ".join(f"≥ {value}x ({mode})" for mode, value in targets.items() if value is not None)


# --- outcomes ------------------------------------------------------------------------------


@dataclass
class RouteOutcome:
    route: Route
    mode: str  # the database mode: the target may depend on it
    baseline: list[WrkResult] = field(default_factory=list)
    berth: list[WrkResult] = field(default_factory=list)
    rss_mb: dict[int, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # from the route's check hook
    error: str | None = None  # the route could not be measured
    path: str | None = None  # as measured, when the setup hook chose it (`Prepared`)
    headers: dict[str, str] = field(default_factory=dict)  # as measured
    # The bare route of Route.ceiling, as measured in the same mode and run (None: not measured).
    ceiling: RouteOutcome | None = field(default=None, repr=False)

    @property
    def target(self) -> float | None:
        return self.route.target(self.mode)

    @staticmethod
    def _best(results: list[WrkResult]) -> WrkResult | None:
        return max(results, key=lambda result: result.requests_per_s, default=None)

    @property
    def best_berth(self) -> WrkResult | None:
        return self._best(self.berth)

    @property
    def best_baseline(self) -> WrkResult | None:
        return self._best(self.baseline)

    @property
    def ratio(self) -> float | None:
        berth, baseline = self.best_berth, self.best_baseline
        if berth is None or baseline is None or baseline.requests_per_s <= 0:
            return None
        return berth.requests_per_s / baseline.requests_per_s

    @property
    def ceiling_ratio(self) -> float | None:
        """Best Berth requests/s ÷ best requests/s of the bare app on the route's ceiling route
        (for a bare route, `berth` holds the bare app's rounds)."""
        berth = self.best_berth
        bare = self.ceiling.best_berth if self.ceiling is not None else None
        if berth is None or bare is None or bare.requests_per_s <= 0:
            return None
        return berth.requests_per_s / bare.requests_per_s

    @property
    def non_2xx(self) -> int:
        return sum(result.non_2xx for result in self.berth)

    @property
    def expected_errors(self) -> int:
        return sum(
            count
            for result in self.berth
            for key, count in result.statuses.items()
            if key in self.route.expected_errors
        )

    @property
    def unexpected_non_2xx(self) -> int:
        return max(self.non_2xx - self.expected_errors, 0)

    @property
    def socket_errors(self) -> int:
        return sum(result.socket_error_count for result in self.berth)

    @property
    def healthy(self) -> bool:
        return (
            self.error is None
            and not self.problems
            and self.unexpected_non_2xx == 0
            and self.socket_errors == 0
            and self.best_berth is not None
        )

    @property
    def met(self) -> bool | None:
        target, ratio = self.target, self.ratio
        if target is None:
            return None
        return self.healthy and ratio is not None and ratio >= target

    @property
    def statuses(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for result in self.berth:
            for key, count in result.statuses.items():
                totals[key] = totals.get(key, 0) + count
        return totals

    def as_json(self) -> dict[str, Any]:
        berth, baseline = self.best_berth, self.best_baseline
        return {
            "route": self.route.name,
            "method": self.route.method,
            "path": self.path or self.route.path,
            "headers": {
                name: _shown_header(name, value)
                for name, value in (self.headers or self.route.headers).items()
            },
            "script": self.route.script or ("post.lua" if self.route.script_path() else None),
            "target_ratio": self.target,
            "requests_per_s": round(berth.requests_per_s, 1) if berth else None,
            "p50_ms": round(berth.latency_ms["p50"], 3) if berth else None,
            "p99_ms": round(berth.latency_ms["p99"], 3) if berth else None,
            "baseline_requests_per_s": round(baseline.requests_per_s, 1) if baseline else None,
            "ratio": round(self.ratio, 4) if self.ratio is not None else None,
            "ratio_of_medians": _ratio_of_medians(self),
            "bare": self.route.bare,
            "ceiling_route": self.route.ceiling,
            "ceiling_ratio": round(self.ceiling_ratio, 4) if self.ceiling_ratio is not None else None,
            "met": self.met,
            "non_2xx": self.non_2xx,
            "unexpected_non_2xx": self.unexpected_non_2xx,
            "socket_errors": self.socket_errors,
            "statuses": self.statuses,
            "rss_mb_per_worker": {str(pid): round(size, 1) for pid, size in self.rss_mb.items()},
            "check_problems": self.problems,
            "error": self.error,
            "rounds": {
                "baseline": [result.as_json() for result in self.baseline],
                "berth": [result.as_json() for result in self.berth],
            },
        }


def _shown_header(name: str, value: str) -> str:
    """Header values for the results file: a session cookie's value is left out."""
    if name.lower() == "cookie":
        return "; ".join(part.split("=", 1)[0] + "=…" for part in value.split(";"))
    return value


def _ratio_of_medians(outcome: RouteOutcome) -> float | None:
    if not outcome.berth or not outcome.baseline:
        return None
    baseline = statistics.median(result.requests_per_s for result in outcome.baseline)
    if baseline <= 0:
        return None
    return round(statistics.median(result.requests_per_s for result in outcome.berth) / baseline, 4)


@dataclass
class TopUp:
    """The database topped up to RSS_AFTER_BOOKINGS bookings after the routes."""

    before: int  # bookings in the database after the routes
    total: int = 0  # counted again after the top-up
    made: int = 0  # reservations answered 200 during the top-up
    sold_out: int = 0  # refused by a full departure, then made on another
    seconds: float = 0.0

    @property
    def reached(self) -> bool:
        return self.total >= RSS_AFTER_BOOKINGS

    def as_json(self) -> dict[str, Any]:
        return {
            "bookings_before": self.before,
            "made": self.made,
            "sold_out": self.sold_out,
            "seconds": round(self.seconds, 1),
        }


def size_text(count: int) -> str:
    """1000000 -> "1M", 250000 -> "250k"."""
    if count and count % 1_000_000 == 0:
        return f"{count // 1_000_000}M"
    if count and count % 1_000 == 0:
        return f"{count // 1_000}k"
    return f"{count:,}"


@dataclass(frozen=True)
class Comparison:
    """One route on the small database and on the big one (issue 20, "flat as data grows")."""

    route: str
    small: RouteOutcome | None
    big: RouteOutcome

    @property
    def change(self) -> float | None:
        """Big ratio ÷ small ratio - 1 (-0.10: 10 % lower on the big database)."""
        small = self.small.ratio if self.small is not None else None
        big = self.big.ratio
        if small is None or big is None or small <= 0:
            return None
        return big / small - 1

    @property
    def flat(self) -> bool | None:
        """At most FLAT_WITHIN below the small database's ratio (higher is flat too), and
        measured cleanly on both."""
        change = self.change
        if change is None:
            return None
        healthy = self.big.healthy and self.small is not None and self.small.healthy
        return healthy and change >= -FLAT_WITHIN

    def as_json(self) -> dict[str, Any]:
        small_best = self.small.best_berth if self.small is not None else None
        big_best = self.big.best_berth
        return {
            "route": self.route,
            "ratio_small": round(self.small.ratio, 4)
            if self.small and self.small.ratio is not None
            else None,
            "ratio_big": round(self.big.ratio, 4) if self.big.ratio is not None else None,
            "change_pct": round(self.change * 100, 1) if self.change is not None else None,
            "flat": self.flat,
            "p50_ms_small": round(small_best.latency_ms["p50"], 3) if small_best else None,
            "p50_ms_big": round(big_best.latency_ms["p50"], 3) if big_best else None,
        }


@dataclass
class BigData:
    """The mode's database once `requested` bookings were seeded into it (--bookings), the
    query plans there, and the routes measured again on it."""

    requested: int
    seed: SeedReport | None = None
    problems: list[str] = field(default_factory=list)  # the seeded rows, checked
    plans_small: list[Plan] = field(default_factory=list)  # --plans: before seeding
    plans: list[Plan] = field(default_factory=list)
    routes: list[RouteOutcome] = field(default_factory=list)
    rss_mb: dict[int, float] = field(default_factory=dict)  # Berth's workers after the routes
    error: str | None = None

    @property
    def label(self) -> str:
        return size_text(self.requested)

    @property
    def seeded_in_time(self) -> bool | None:
        if self.seed is None or self.seed.bookings < self.requested:
            return None
        return self.seed.seconds <= SEED_SECONDS

    @property
    def rss_met(self) -> bool | None:
        largest = max(self.rss_mb.values(), default=None)
        if largest is None or self.seed is None or self.seed.bookings < self.requested:
            return None
        return largest <= RSS_TARGET_MB

    def comparisons(self, small: list[RouteOutcome]) -> list[Comparison]:
        by_name = {outcome.route.name: outcome for outcome in small}
        return [Comparison(big.route.name, by_name.get(big.route.name), big) for big in self.routes]

    def as_json(self, small: list[RouteOutcome]) -> dict[str, Any]:
        return {
            "bookings_requested": self.requested,
            "seed": self.seed.as_json() if self.seed else None,
            "seed_target_s": SEED_SECONDS,
            "seeded_in_time": self.seeded_in_time,
            "seed_problems": self.problems,
            "error": self.error,
            "plans_small": [plan.as_json() for plan in self.plans_small],
            "plans": [plan.as_json() for plan in self.plans],
            "flat_within": FLAT_WITHIN,
            "comparison": [comparison.as_json() for comparison in self.comparisons(small)],
            "routes": [outcome.as_json() for outcome in self.routes],
            "rss_mb_per_worker": {str(pid): round(size, 1) for pid, size in self.rss_mb.items()},
            "rss_target_mb": RSS_TARGET_MB,
            "rss_met": self.rss_met,
        }


@dataclass(frozen=True)
class ShopBesideBackOffice:
    """A shop page and the back-office page of its weight, same mode and run (issue 48: the shop's
    pages no slower than the back office's)."""

    shop: RouteOutcome
    backoffice: RouteOutcome

    @property
    def no_slower(self) -> bool | None:
        """The shop page's ratio to hello at least the back-office page's (None: not both measured)."""
        shop, backoffice = self.shop.ratio, self.backoffice.ratio
        if shop is None or backoffice is None:
            return None
        return shop >= backoffice

    def as_json(self) -> dict[str, Any]:
        shop, backoffice = self.shop.ratio, self.backoffice.ratio
        return {
            "shop_route": self.shop.route.name,
            "backoffice_route": self.backoffice.route.name,
            "shop_ratio": round(shop, 4) if shop is not None else None,
            "backoffice_ratio": round(backoffice, 4) if backoffice is not None else None,
            "no_slower": self.no_slower,
        }


@dataclass
class ModeOutcome:
    mode: str
    database: str | None = None
    skipped: str | None = None
    error: str | None = None
    routes: list[RouteOutcome] = field(default_factory=list)
    top_up: TopUp | None = None
    rss_mb: dict[int, float] = field(default_factory=dict)  # Berth's workers after the top-up
    big: BigData | None = None  # --bookings
    mail_live: MailLive | None = None  # the mail-live route (issue 41 §5)
    # shop-checkout (issue 48): each step's p50 and p99 in the best round, by row; and the CPU
    # each checkout of that round cost Berth's workers and localstripe, in ms
    checkout_steps: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    checkout_cpu: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def rss_met(self) -> bool | None:
        """None when the database never held RSS_AFTER_BOOKINGS bookings: the target's
        condition."""
        largest = max(self.rss_mb.values(), default=None)
        if largest is None or self.top_up is None or not self.top_up.reached:
            return None
        return largest <= RSS_TARGET_MB

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "database": self.database,
            "skipped": self.skipped,
            "error": self.error,
            "bookings_total": self.top_up.total if self.top_up else None,
            "bookings_target": RSS_AFTER_BOOKINGS,
            "top_up": self.top_up.as_json() if self.top_up else None,
            "rss_mb_per_worker": {str(pid): round(size, 1) for pid, size in self.rss_mb.items()},
            "rss_target_mb": RSS_TARGET_MB,
            "rss_met": self.rss_met,
            "routes": [outcome.as_json() for outcome in self.routes],
            "big_data": self.big.as_json(self.routes) if self.big else None,
            "mail_live": self.mail_live.as_json() if self.mail_live else None,
            "checkout_steps_ms": self.checkout_steps,
            "checkout_cpu_ms": self.checkout_cpu,
            "shop_beside_backoffice": [pair.as_json() for pair in self.shop_beside_backoffice()],
        }

    def shop_beside_backoffice(self) -> list[ShopBesideBackOffice]:
        """Issue 48: each shop page measured beside the back-office page it must be no slower than."""
        return [
            ShopBesideBackOffice(shop, backoffice)
            for name, other in SHOP_BESIDE_BACKOFFICE.items()
            if (shop := self.measured(name)) is not None and (backoffice := self.measured(other)) is not None
        ]

    def measured(self, name: str | None) -> RouteOutcome | None:
        """The outcome of the route `name` in this mode, if it was measured (bare routes run
        before the routes whose ceiling they are: they come first in ROUTES)."""
        return next((outcome for outcome in self.routes if outcome.route.name == name), None)

    @property
    def failed(self) -> bool:
        big = self.big
        return bool(
            self.error
            or any(not outcome.healthy for outcome in self.routes)
            or (self.mail_live is not None and not self.mail_live.healthy)
            or (big is not None and (big.error or big.problems or any(not o.healthy for o in big.routes)))
        )


# --- the run -------------------------------------------------------------------------------


def _tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    for candidate in (beside, REPO / ".venv" / "bin" / name):
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise BenchError(f"`{name}` not found: run `python3 dev.py test` once to create .venv")
    return found


def _clean_env() -> dict[str, str]:
    """Our environment without BERTH_* settings, so nothing leaks into the servers."""
    return {key: value for key, value in os.environ.items() if not key.startswith("BERTH_")}


class Bench:
    def __init__(self, options: Options, console: Console) -> None:
        self.options = options
        self.console = console
        # With --only, the bare routes the selected routes' ceiling ratios need come along.
        wanted = set(options.only)
        wanted |= {route.ceiling for route in ROUTES if route.name in wanted and route.ceiling}
        self.routes = [route for route in ROUTES if not options.only or route.name in wanted]
        # Measured again on the big database (--bookings): those of BIG_DATA_ROUTES selected.
        self.big_routes = [
            route for route in self.routes if options.bookings and route.name in BIG_DATA_ROUTES
        ]
        self.modes: list[ModeOutcome] = []
        self.facts: dict[str, Any] = {}
        self.baseline_rss: dict[int, float] = {}
        self.started = dt.datetime.now(dt.UTC)
        self.completed = False
        self.wrk = ""
        self.progress: Progress | None = None
        self.task: Any = None
        self.top_up_seconds_left = 0.0

    def say(self, message: str) -> None:
        (self.progress.console if self.progress else self.console).print(message, highlight=False)

    def _advance(self, description: str | None = None) -> None:
        if self.progress is not None:
            if description is None:
                self.progress.advance(self.task)
            else:
                self.progress.update(self.task, description=description)

    async def run(self, workdir: Path) -> None:
        self.wrk = ensure_wrk(self.say)
        postgres_url = os.environ.get(POSTGRES_ENV)
        self.facts = await machine_facts(self.wrk, postgres_url if "postgres" in self.options.modes else None)
        wanted: list[str] = []
        skipped: dict[str, ModeOutcome] = {}
        for mode in self.options.modes:
            if mode == "postgres" and not postgres_url:
                skipped[mode] = ModeOutcome(mode, skipped=f"set {POSTGRES_ENV}")
                self.console.print(
                    f"[yellow]PostgreSQL mode skipped: set {POSTGRES_ENV} "
                    "(e.g. postgresql://postgres@127.0.0.1:5432/test)[/yellow]"
                )
            else:
                wanted.append(mode)
        per_route = self.options.rounds * 2 + (2 if self.options.warmup else 0)
        steps = len(wanted) * (len(self.routes) * per_route + 1)  # + the top-up
        if self.options.bookings:
            steps += len(wanted) * (len(self.big_routes) * per_route + 3)  # + seed, check, plans
        self.top_up_seconds_left = float(TOP_UP_SECONDS * len(wanted))
        seconds = (
            len(wanted)
            * (len(self.routes) + len(self.big_routes))
            * (self.options.rounds * 2 * self.options.duration + (2 * self.options.warmup))
        )
        big = (
            f"; then {self.options.bookings:,} bookings seeded per mode (at most {SEED_SECONDS} s each, "
            f"their load included above: {', '.join(r.name for r in self.big_routes) or 'no route'} again)"
            if self.options.bookings
            else ""
        )
        self.console.print(
            f"{len(self.routes)} route(s) x {len(wanted)} mode(s); load alone takes about {seconds} s "
            f"({self.options.rounds} round(s) of {self.options.duration} s per server and route, "
            f"{self.options.connections} connections, {self.options.threads} wrk threads, "
            f"{self.options.workers} workers), then a top-up to {RSS_AFTER_BOOKINGS:,} bookings per mode "
            f"(at most {self.top_up_seconds_left:.0f} s for all){big}"
        )

        port = free_port()
        baseline = ServerProcess(
            "baseline", self._uvicorn("baseline_app:app", port), _clean_env(), port, workdir / "baseline.log"
        )
        columns = (
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=self.console, transient=True) as progress:
            self.progress = progress
            self.task = progress.add_task("starting the baseline", total=steps)
            try:
                baseline.start()
                await baseline.wait_healthy("/healthz")
                for mode in self.options.modes:
                    if mode in skipped:
                        self.modes.append(skipped[mode])
                        continue
                    outcome = ModeOutcome(mode)
                    self.modes.append(outcome)
                    try:
                        await self.run_mode(outcome, baseline, workdir / mode)
                    except BenchError as exc:
                        outcome.error = str(exc)
                        self.say(f"[red]{mode}: {exc}[/red]")
                        baseline.ensure_alive()
                self.baseline_rss = baseline.worker_rss_mb()
                self.completed = True
            finally:
                self.progress = None
                baseline.stop()

    def _uvicorn(self, app: str, port: int) -> list[str]:
        """A bench app of this directory (the baseline, the bare app) under uvicorn, as many
        workers as Berth."""
        return [
            sys.executable, "-m", "uvicorn", app, "--app-dir", str(BENCH_DIR), "--host", "127.0.0.1",
            "--port", str(port), "--workers", str(self.options.workers), "--log-level", "warning",
            "--no-access-log",
        ]  # fmt: skip

    async def start_bare(
        self, mode: str, workdir: Path, stack: contextlib.AsyncExitStack
    ) -> tuple[str | None, ServerProcess | None]:
        """When a bare route runs: the bare app (the write ceiling) started on a fresh database
        of its own, on the mode's database; the server is stopped and the database dropped
        when `stack` closes."""
        if not any(route.bare for route in self.routes):
            return None, None
        self._advance(f"{mode}: starting the bare app")
        if mode == "sqlite":
            database = sqlite_database(workdir, "bare.db")
        else:
            database = postgres_database(os.environ[POSTGRES_ENV])
        url = await stack.enter_async_context(database)
        await create_bare_schema(url)
        port = free_port()
        env = {**_clean_env(), "BARE_DATABASE_URL": url}
        bare = ServerProcess(f"bare app ({mode})", self._uvicorn("bare_app:app", port), env, port,
                             workdir / "bare.log")  # fmt: skip
        stack.callback(bare.stop)
        bare.start()
        await bare.wait_healthy("/healthz")
        return url, bare

    async def run_mode(self, outcome: ModeOutcome, baseline: ServerProcess, workdir: Path) -> None:
        _make_dir(workdir)
        if outcome.mode == "sqlite":
            database = sqlite_database(workdir)
        else:
            database = postgres_database(os.environ[POSTGRES_ENV])
        self._advance(f"{outcome.mode}: creating a fresh database")
        inbox = Inbox()
        async with database as database_url, contextlib.AsyncExitStack() as stack:
            bare_url, bare = await self.start_bare(outcome.mode, workdir, stack)
            outcome.database = redact(database_url)
            port = free_port()
            env = {
                **_clean_env(),
                "BERTH_DATABASE_URL": database_url,
                "BERTH_LOG_LEVEL": "WARNING",
                "BERTH_PUBLIC_URL": f"http://127.0.0.1:{port}",
                **self.options.env,
            }
            if any(route.name == MAIL_LIVE for route in self.routes):
                # Guests' emails go to an SMTP sink in this process; no other route asks for one.
                env["BERTH_SMTP_URL"] = await stack.enter_async_context(smtp_inbox(inbox))
            stripe: FakeStripe | None = None
            if any(route.name == SHOP_CHECKOUT for route in self.routes):
                # Card payments go to a localstripe the bench starts (else `serve --demo` starts
                # one of its own), and each checkout comes from an address of its own through
                # the loopback proxy (the shop limits the holds of one address).
                self._advance(f"{outcome.mode}: starting localstripe")
                stripe = await self.start_stripe(workdir / "localstripe.log", stack)
                env.update({**stripe.environment(), "BERTH_TRUSTED_PROXIES": "127.0.0.1"})
            argv = [
                _tool("berth"),
                "serve",
                "--demo",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(self.options.workers),
            ]
            server = ServerProcess(f"berth ({outcome.mode})", argv, env, port, workdir / "berth.log")
            self._advance(f"{outcome.mode}: starting berth serve --demo")
            try:
                server.start()
                await server.wait_healthy("/healthz")
                if stripe is not None:
                    await asyncio.to_thread(stripe.send_webhooks_to, server.base_url)
                # uvicorn closes a connection idle for 5 s, and httpx reuses one idle for up to 5 s
                # by default: a request can meet a closing connection (ReadError). Let go sooner.
                limits = httpx.Limits(max_keepalive_connections=TOP_UP_CONCURRENCY, keepalive_expiry=1.0)
                async with httpx.AsyncClient(base_url=server.base_url, timeout=60, limits=limits) as client:
                    context = BenchContext(
                        outcome.mode, server.base_url, database_url, workdir, client, bare_url
                    )
                    for route in self.routes:
                        if route.name == LOOK_TO_BOOK:
                            await self.run_look_to_book(route, outcome, context, baseline, server)
                            continue
                        if route.name == SHOP_CHECKOUT:
                            await self.run_shop_checkout(route, outcome, context, server, stripe)
                            continue
                        if route.name == MAIL_LIVE:
                            self._advance(f"{outcome.mode} · {MAIL_LIVE}: {MAIL_LIVE_SECONDS} s of flows")
                            outcome.mail_live = await run_mail_live(outcome.mode, server.base_url, inbox)
                            server.ensure_alive()
                            self.say(escape(summary_line(outcome.mail_live)))
                            continue
                        route_outcome = RouteOutcome(
                            route, outcome.mode, ceiling=outcome.measured(route.ceiling)
                        )
                        outcome.routes.append(route_outcome)
                        measured = bare if route.bare and bare is not None else server
                        await self.run_route(route_outcome, context, baseline, measured)
                    await self.top_up(outcome, context, server)
                    if self.options.bookings:
                        await self.big_data(outcome, context, baseline, server)
            finally:
                server.stop()

    async def start_stripe(self, log: Path, stack: contextlib.AsyncExitStack) -> FakeStripe:
        """A localstripe (berth.fake_stripe), stopped when `stack` closes."""
        with log.open("ab") as output:
            fake = await asyncio.to_thread(fake_stripe.start, free_port(), log=output.fileno())
        stack.callback(fake.stop)
        return fake

    async def top_up(self, outcome: ModeOutcome, context: BenchContext, server: ServerProcess) -> None:
        """Reservations until the database holds RSS_AFTER_BOOKINGS bookings (issue 4 sets its
        RSS target after that many), then each worker's RSS."""
        label = f"{outcome.mode}: top-up to {RSS_AFTER_BOOKINGS:,} bookings"
        self._advance(label)
        top_up = outcome.top_up = TopUp(before=await count_bookings(context.database_url))
        allowed = self.top_up_seconds_left
        started = time.monotonic()

        def progress(made: int, sold_out: int) -> None:
            top_up.made, top_up.sold_out = made, sold_out
            self._advance(f"{label} ({top_up.before + made:,})")

        try:
            async with asyncio.timeout(allowed):
                await reserve_spread(
                    context, RSS_AFTER_BOOKINGS - top_up.before, TOP_UP_CONCURRENCY, progress
                )
        except TimeoutError:
            outcome.error = (
                f"the top-up did not reach {RSS_AFTER_BOOKINGS:,} bookings within the {allowed:.0f} s "
                f"left of the run's top-up time ({TOP_UP_SECONDS} s per mode)"
            )
        except BenchError as exc:
            outcome.error = f"the top-up stopped: {exc}"
        top_up.seconds = time.monotonic() - started
        self.top_up_seconds_left = max(allowed - top_up.seconds, 0.0)
        top_up.total = await count_bookings(context.database_url)
        outcome.rss_mb = server.worker_rss_mb()
        if outcome.error is not None:
            self.say(f"[red]{outcome.mode}: {outcome.error} (stopped at {top_up.total:,})[/red]")
        self._advance()

    async def big_data(
        self, outcome: ModeOutcome, context: BenchContext, baseline: ServerProcess, server: ServerProcess
    ) -> None:
        """Seed --bookings bookings straight into the mode's database (Berth running, idle),
        check them, print the query plans, measure the big-data routes again, read the RSS."""
        options, mode = self.options, outcome.mode
        big = outcome.big = BigData(options.bookings)
        label = f"{mode} · {big.label}"
        try:
            # Before seeding: a catalogue change checks every future booking against it.
            await ensure_bench_products(context)
            reseller = await connection_of_key(context.database_url, RESELLER["Authorization"].split()[-1])
            if options.plans:
                self._advance(f"{label}: query plans on the small database")
                placeholder = {"connection_id": reseller, "reseller_reference": "RR-000000000",
                               "supplier_reference": "S000000000"}  # fmt: skip
                big.plans_small = await explain_statements(context.database_url, placeholder)
                self._say_plans(f"{mode}, small database ({await count_bookings(context.database_url):,} bookings)",
                                big.plans_small)  # fmt: skip
            self._advance(f"{label}: seeding {options.bookings:,} bookings")
            big.seed = await seed_bookings(
                context.database_url, options.bookings, lambda line: self.say(escape(line))
            )
            self.say(_seed_line(mode, big))
            self._advance(f"{label}: checking the seeded bookings")
            big.problems = await verify_seed(context.database_url, big.seed)
            big.problems += await _seeded_over_http(context, big.seed.samples[reseller])
            for problem in big.problems:
                self.say(f"[red]{mode} · {big.label}: {escape(problem)}[/red]")
            self._advance(f"{label}: query plans")
            big.plans = await explain_statements(context.database_url, big.seed.samples[reseller])
            self._say_plans(f"{mode}, {big.seed.total_after:,} bookings", big.plans)
        except BenchError as exc:
            big.error = str(exc)
        except Exception as exc:
            big.error = f"{type(exc).__name__}: {exc}"
        if big.error is not None:
            self.say(f"[red]{label}: {escape(big.error)}[/red]")
            return
        for route in self.big_routes:
            route_outcome = RouteOutcome(route, mode, ceiling=outcome.measured(route.ceiling))
            big.routes.append(route_outcome)
            await self.run_route(route_outcome, context, baseline, server, label=label)
        big.rss_mb = server.worker_rss_mb()

    def _say_plans(self, title: str, plans: list[Plan]) -> None:
        self.say(f"[bold]Query plans · {escape(title)}[/bold]")
        for plan in plans:
            self.say(escape(plan.text()))

    async def run_route(
        self,
        outcome: RouteOutcome,
        context: BenchContext,
        baseline: ServerProcess,
        server: ServerProcess,
        *,
        label: str | None = None,
    ) -> None:
        route = outcome.route
        options, workdir = self.options, context.workdir
        mode = label or context.mode
        per_route = options.rounds * 2 + (2 if options.warmup else 0)
        done_before = self.progress.tasks[0].completed if self.progress else 0
        try:
            body = route.body
            path, headers = route.path, dict(route.headers)
            if route.setup is not None:
                self._advance(f"{mode} · {route.name}: setup")
                prepared = await route.setup(context)
                if isinstance(prepared, Prepared):
                    path = prepared.path or path
                    headers.update(prepared.headers)
                    prepared = prepared.body
                body = prepared if prepared is not None else body
            outcome.path, outcome.headers = path, headers
            env: dict[str, str] = {}
            name = route.name if label is None else f"{route.name}-big"
            if body is not None:
                body_file = workdir / f"{name}.body"
                body_file.write_text(body if isinstance(body, str) else json.dumps(body))
                env["BERTH_BENCH_BODY_FILE"] = str(body_file)
            elif route.method.upper() != "GET" and route.script is None:
                raise BenchError(f"route {route.name} is a {route.method} without a body")
            script = compose_script(route.script_path(), workdir / f"{name}.lua")
            targets = (("baseline", baseline), ("berth", server))

            async def load(who: str, server_: ServerProcess, seconds: int, collect: Path | None) -> WrkResult:
                result = await run_wrk(
                    self.wrk,
                    server_.base_url + path,
                    script=script,
                    headers=headers,
                    duration=seconds,
                    connections=options.connections,
                    threads=options.threads,
                    env=env,
                    collect_file=collect,
                )
                server_.ensure_alive()
                self._advance()
                return result

            if options.warmup:
                for who, target in targets:
                    self._advance(f"{mode} · {route.name} · {who} warm-up")
                    await load(who, target, options.warmup, None)
            for index in range(1, options.rounds + 1):
                for who, target in targets:
                    self._advance(f"{mode} · {route.name} · {who} round {index}/{options.rounds}")
                    collect = workdir / f"{name}-{index}.collected" if who == "berth" else None
                    result = await load(who, target, options.duration, collect)
                    (outcome.berth if who == "berth" else outcome.baseline).append(result)
                    self.say(_round_line(mode, route.name, who, index, options.rounds, result))
            outcome.rss_mb = server.worker_rss_mb()
            if route.check is not None:
                self._advance(f"{mode} · {route.name}: check")
                run = RouteRun(
                    requests=sum(result.requests for result in outcome.berth),
                    statuses=outcome.statuses,
                    collected=[value for result in outcome.berth for value in result.collected],
                )
                try:
                    outcome.problems = list(await route.check(context, run))
                except Exception as exc:
                    outcome.problems = [f"check failed: {type(exc).__name__}: {exc}"]
                for problem in outcome.problems:
                    self.say(f"[red]{mode} · {route.name}: {problem}[/red]")
        except asyncio.CancelledError:
            outcome.error = "interrupted"
            raise
        except Exception as exc:  # a route's failure (its hooks included) ends only the route
            outcome.error = str(exc) if isinstance(exc, BenchError) else f"{type(exc).__name__}: {exc}"
            # ...unless a server died: that ends the mode (Berth) or the run (baseline).
            server.ensure_alive()
            baseline.ensure_alive()
            self.say(f"[red]{mode} · {route.name} failed: {outcome.error}[/red]")
        if self.progress is not None:
            self.progress.update(self.task, completed=done_before + per_route)

    async def run_look_to_book(
        self,
        route: Route,
        mode_outcome: ModeOutcome,
        context: BenchContext,
        baseline: ServerProcess,
        server: ServerProcess,
    ) -> None:
        """The look-to-book route (mixed.py): one load of reads and writes, two rows."""
        options, mode = self.options, context.mode
        per_route = options.rounds * 2 + (2 if options.warmup else 0)
        done_before = self.progress.tasks[0].completed if self.progress else 0
        reads = RouteOutcome(dataclasses.replace(route, name=f"{route.name}-reads"), mode)
        writes = RouteOutcome(dataclasses.replace(route, name=f"{route.name}-writes"), mode)
        mode_outcome.routes += [reads, writes]
        targets = (("baseline", baseline), ("berth", server))
        try:
            self._advance(f"{mode} · {route.name}: setup")
            mixed = await look_to_book_plan(server.base_url, route.headers)
            seed = 0
            if options.warmup:
                for who, target in targets:
                    self._advance(f"{mode} · {route.name} · {who} warm-up")
                    seed += 1
                    await run_mixed(target.base_url, mixed, route.headers, connections=options.connections,
                                    seconds=options.warmup, seed=seed)  # fmt: skip
                    target.ensure_alive()
            for index in range(1, options.rounds + 1):
                for who, target in targets:
                    self._advance(f"{mode} · {route.name} · {who} round {index}/{options.rounds}")
                    seed += 1
                    results = await run_mixed(target.base_url, mixed, route.headers,
                                              connections=options.connections, seconds=options.duration, seed=seed)  # fmt: skip
                    target.ensure_alive()
                    for row, result in zip((reads, writes), results, strict=True):
                        (row.berth if who == "berth" else row.baseline).append(result)
                        self.say(_round_line(mode, row.route.name, who, index, options.rounds, result))
            reads.rss_mb = writes.rss_mb = server.worker_rss_mb()
        except asyncio.CancelledError:
            reads.error = writes.error = "interrupted"
            raise
        except Exception as exc:
            reads.error = writes.error = f"{type(exc).__name__}: {exc}"
            server.ensure_alive()
            baseline.ensure_alive()
            self.say(f"[red]{mode} · {route.name} failed: {reads.error}[/red]")
        if self.progress is not None:
            self.progress.update(self.task, completed=done_before + per_route)

    async def run_shop_checkout(
        self,
        route: Route,
        mode_outcome: ModeOutcome,
        context: BenchContext,
        server: ServerProcess,
        stripe: FakeStripe | None,
    ) -> None:
        """The shop-checkout route (shop_checkout.py): whole checkouts against Berth and its
        localstripe, alternating with the same Stripe calls against a localstripe alone (the
        ceiling); two rows."""
        options, mode = self.options, context.mode
        per_route = options.rounds * 2 + (2 if options.warmup else 0)
        done_before = self.progress.tasks[0].completed if self.progress else 0
        alone = RouteOutcome(dataclasses.replace(route, name=STRIPE_ALONE, check=None), mode)
        checkouts = RouteOutcome(route, mode, ceiling=alone)
        mode_outcome.routes += [alone, checkouts]
        seconds = max(options.duration, MIN_ROUND_SECONDS)
        try:
            if stripe is None:
                raise BenchError("no localstripe was started for the mode")
            async with contextlib.AsyncExitStack() as stack:
                self._advance(f"{mode} · {route.name}: setup")
                ceiling = await self.start_stripe(context.workdir / "localstripe-alone.log", stack)
                sink = await stack.enter_async_context(webhook_sink())
                await send_webhooks(ceiling.url, "sink", sink, fake_stripe.WEBHOOK_SECRET)
                found = await checkout_plan(server.base_url)
                rounds = 0

                async def load(who: str, length: float) -> tuple[CheckoutRound, dict[str, float]]:
                    """A round of one side; and the CPU its checkouts cost, in ms each."""
                    nonlocal rounds
                    rounds += 1
                    workers, fake = server.worker_pids(), stripe if who == "berth" else ceiling
                    before = cpu_seconds(workers), cpu_seconds([fake.process.pid])
                    if who == "berth":
                        tally = await run_checkouts(server.base_url, stripe.url, found, guests=GUESTS,
                                                    seconds=length, first=rounds << 16)  # fmt: skip
                        server.ensure_alive()
                    else:
                        tally = await run_stripe_alone(ceiling.url, fake_stripe.SECRET_KEY,
                                                       fake_stripe.PUBLISHABLE_KEY, guests=GUESTS, seconds=length)  # fmt: skip
                    # The round's webhooks (sent a second late) are its work: not the next round's.
                    await asyncio.sleep(WEBHOOK_SECONDS)
                    used = cpu_seconds(workers) - before[0], cpu_seconds([fake.process.pid]) - before[1]
                    count = max(len(tally.checkouts_ms), 1)
                    cpu = {"localstripe": round(used[1] * 1000 / count, 1)}
                    if who == "berth":
                        cpu["berth_workers"] = round(used[0] * 1000 / count, 1)
                    self._advance()
                    return tally, cpu

                sides = (("localstripe", alone), ("berth", checkouts))
                if options.warmup:
                    for who, _ in sides:
                        self._advance(f"{mode} · {route.name} · {who} warm-up")
                        await load(who, options.warmup)
                best: dict[str, tuple[float, CheckoutRound, dict[str, float]]] = {}
                for index in range(1, options.rounds + 1):
                    for who, row in sides:
                        self._advance(f"{mode} · {route.name} · {who} round {index}/{options.rounds}")
                        tally, cpu = await load(who, seconds)
                        result = tally.result()
                        row.berth.append(result)
                        self.say(
                            _round_line(
                                mode, row.route.name, who, index, options.rounds, result, "checkouts/s"
                            )
                        )
                        for example in tally.examples:
                            self.say(f"[red]{mode} · {row.route.name}: {escape(example)}[/red]")
                        if result.requests_per_s >= best.get(row.route.name, (-1.0, tally, cpu))[0]:
                            best[row.route.name] = (result.requests_per_s, tally, cpu)
                mode_outcome.checkout_steps = {
                    name: tally.step_summary() for name, (_, tally, _) in best.items()
                }
                mode_outcome.checkout_cpu = {name: cpu for name, (_, _, cpu) in best.items()}
                checkouts.rss_mb = alone.rss_mb = server.worker_rss_mb()
            if route.check is not None:
                self._advance(f"{mode} · {route.name}: check")
                run = RouteRun(
                    requests=sum(result.requests for result in checkouts.berth),
                    statuses=checkouts.statuses,
                    collected=[value for result in checkouts.berth for value in result.collected],
                )
                try:
                    checkouts.problems = list(await route.check(context, run))
                except Exception as exc:
                    checkouts.problems = [f"check failed: {type(exc).__name__}: {exc}"]
                for problem in checkouts.problems:
                    self.say(f"[red]{mode} · {route.name}: {escape(problem)}[/red]")
        except asyncio.CancelledError:
            alone.error = checkouts.error = "interrupted"
            raise
        except Exception as exc:
            alone.error = checkouts.error = (
                str(exc) if isinstance(exc, BenchError) else f"{type(exc).__name__}: {exc}"
            )
            server.ensure_alive()
            self.say(f"[red]{mode} · {route.name} failed: {escape(checkouts.error)}[/red]")
        if self.progress is not None:
            self.progress.update(self.task, completed=done_before + per_route)

    # --- report ----------------------------------------------------------------------------

    def results_json(self) -> dict[str, Any]:
        return {
            "started_at": self.started.isoformat(timespec="seconds"),
            "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "completed": self.completed,
            "options": self.options.as_json(),
            "machine": self.facts,
            "method": {
                "ratio": "best Berth requests/s ÷ best baseline requests/s of the same route, same run",
                "ceiling_ratio": "best Berth requests/s ÷ best requests/s of the bare app (benchmarks/bare_app.py) "
                "on the route's ceiling_route (bare-reserve, bare-flow), same mode, same run; the bare-* routes "
                "are the bare app's own rows (bare: true), in Berth's fields",
                "latency": "p50 and p99 of Berth's best round",
                "non_2xx": "Berth answers with status >= 400, all measured rounds",
                "rss": "VmRSS of each uvicorn worker process after the route's rounds",
                "rss_mode": f"the same, once the database was topped up to {RSS_AFTER_BOOKINGS:,} bookings",
                "big_data": "with --bookings N: N bookings seeded straight into the database (benchmarks/seed.py), "
                "then the routes of BIG_DATA_ROUTES measured again; flat: the big ratio at most "
                f"{FLAT_WITHIN:.0%} below the small one",
            },
            "targets": {"ratios": TARGETS, "rss_mb_per_worker": RSS_TARGET_MB},
            "baseline": {
                "app": "benchmarks/baseline_app.py (Starlette, pre-encoded JSON)",
                "ceiling_app": "benchmarks/bare_app.py (Starlette on the raw driver: the essence of a reservation "
                "and of its confirmation, one transaction each)",
                "rss_mb_per_worker": {str(pid): round(size, 1) for pid, size in self.baseline_rss.items()},
            },
            "modes": [mode.as_json() for mode in self.modes],
        }

    def write_results(self) -> Path:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"{self.started:%Y%m%dT%H%M%SZ}.json"
        path.write_text(json.dumps(self.results_json(), indent=2) + "\n")
        return path

    def table(self) -> Table:
        options = self.options
        table = Table(
            title=f"Berth vs baseline · {options.workers} workers · {options.connections} connections · "
            f"{options.rounds} x {options.duration} s rounds",
            caption=(
                "requests/s, p50, p99: Berth's best round · non-2xx: status ≥ 400 over all Berth rounds · "
                "ratio: best Berth ÷ best baseline requests/s, same route, same run · "
                "ceiling: best Berth ÷ best bare app requests/s (bare-reserve, bare-flow), same mode, same run · "
                "bare-* rows: the bare app in Berth's columns · "
                f"shop-checkout rows: whole checkouts/s and their latency ({GUESTS} at once), ceiling ÷ "
                f"localstripe alone ({STRIPE_ALONE}), no hello ratio · "
                f"RSS: each worker after the route (target ≤ {RSS_TARGET_MB:.0f} MB)"
            ),
        )
        for name, justify in (
            ("mode", "left"),
            ("route", "left"),
            ("req/s", "right"),
            ("p50 ms", "right"),
            ("p99 ms", "right"),
            ("non-2xx", "right"),
            ("sock err", "right"),
            ("base req/s", "right"),
            ("ratio", "right"),
            ("ceiling", "right"),
            ("target", "right"),
            ("met", "center"),
            ("RSS MB/worker", "right"),
        ):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for mode in self.modes:
            if mode.skipped or (mode.error and not mode.routes):
                reason = "skipped" if mode.skipped else "failed"  # the reason was printed above
                table.add_row(mode.mode, f"[yellow]{reason}[/yellow]", *[""] * 11)
                continue
            for outcome in mode.routes:
                table.add_row(mode.mode, *_row(outcome))
            table.add_section()
            if mode.big is not None and mode.big.routes:
                for outcome in mode.big.routes:
                    table.add_row(f"{mode.mode} {mode.big.label}", *_row(outcome))
                table.add_section()
        return table

    def flat_table(self) -> Table | None:
        """Issue 20, "flat as data grows": each big-data route's ratio on the small database
        and after seeding --bookings bookings."""
        rows = [
            (mode, comparison)
            for mode in self.modes
            if mode.big
            for comparison in mode.big.comparisons(mode.routes)
        ]
        if not rows:
            return None
        table = Table(
            title=f"Flat as data grows: ratios on the small database and with {size_text(self.options.bookings)} "
            "bookings seeded",
            caption=f"change: big ratio ÷ small ratio - 1 · flat: at most {FLAT_WITHIN:.0%} lower, measured cleanly "
            "on both · p50: Berth's best round",
        )
        for name in (
            "mode",
            "route",
            "small ratio",
            "big ratio",
            "change",
            "flat",
            "p50 ms small",
            "p50 ms big",
        ):
            table.add_column(name, justify="left" if name in ("mode", "route") else "right")
        for mode, comparison in rows:
            data = comparison.as_json()
            change = comparison.change
            flat = {None: "—", True: "[green]yes[/green]", False: "[red]no[/red]"}[comparison.flat]
            table.add_row(
                mode.mode,
                comparison.route,
                f"{data['ratio_small']:.3f}x" if data["ratio_small"] is not None else "—",
                f"{data['ratio_big']:.3f}x" if data["ratio_big"] is not None else "—",
                f"{change:+.1%}" if change is not None else "—",
                flat,
                f"{data['p50_ms_small']:.2f}" if data["p50_ms_small"] is not None else "—",
                f"{data['p50_ms_big']:.2f}" if data["p50_ms_big"] is not None else "—",
            )
        return table


def _make_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _round_line(
    mode: str, route: str, who: str, index: int, rounds: int, result: WrkResult, unit: str = "req/s"
) -> str:
    rate = f"{result.requests_per_s:>9,.1f}" if unit != "req/s" else f"{result.requests_per_s:>9,.0f}"
    line = (
        f"{mode:8} {route:18} {who:8} round {index}/{rounds}: {rate} {unit}  "
        f"p50 {result.latency_ms['p50']:7.2f} ms  p99 {result.latency_ms['p99']:7.2f} ms"
    )
    if result.non_2xx:
        line += f"  [red]{result.non_2xx} non-2xx[/red]"
    if result.socket_error_count:
        line += f"  [red]{result.socket_error_count} socket errors[/red]"
    return line


def _rss_text(sizes: dict[int, float]) -> str:
    if not sizes:
        return "—"
    values = sorted(sizes.values())
    text = (
        " / ".join(f"{value:.0f}" for value in values)
        if len(values) <= 3
        else f"{values[0]:.0f}-{values[-1]:.0f}"
    )
    return f"[red]{text}[/red]" if values[-1] > RSS_TARGET_MB else text


def _seed_line(mode: str, big: BigData) -> str:
    seed = big.seed
    if seed is None:
        return f"{mode}: nothing seeded"
    met = {None: "[yellow]not judged[/yellow]", True: "[green]met[/green]", False: "[red]not met[/red]"}
    steps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in seed.steps.items())
    statuses = ", ".join(f"{count:,} {status}" for status, count in sorted(seed.by_status.items()))
    return (
        f"{mode}: seeded {seed.bookings:,} bookings ({statuses}) and {seed.events:,} booking events over "
        f"{seed.departures:,} departures in {seed.seconds:.1f} s ({steps}); {seed.total_after:,} bookings in "
        f"the database · under {SEED_SECONDS} s: {met[big.seeded_in_time]}"
    )


def _big_line(mode: ModeOutcome, big: BigData) -> str:
    met = {None: "[yellow]not judged[/yellow]", True: "[green]met[/green]", False: "[red]not met[/red]"}
    if big.error is not None:
        return f"{mode.mode} {big.label}: [red]{escape(big.error)}[/red]"
    flats = [comparison.flat for comparison in big.comparisons(mode.routes)]
    problems = f" · [red]{len(big.problems)} problem(s) with the seeded rows[/red]" if big.problems else ""
    return (
        f"{_seed_line(mode.mode, big)}{problems}\n{mode.mode} {big.label}: {sum(1 for f in flats if f)} of "
        f"{len(flats)} route(s) flat · RSS MB/worker after them {_rss_text(big.rss_mb)} · "
        f"target ≤ {RSS_TARGET_MB:.0f} MB: {met[big.rss_met]}"
    )


async def _seeded_over_http(context: BenchContext, sample: dict[str, str]) -> list[str]:
    """A seeded booking as Berth answers it: the reseller's lookup by its reference finds it,
    and the back office's search by its supplier reference too."""
    from routes import staff_cookie

    problems: list[str] = []
    reference, supplier = sample["reseller_reference"], sample["supplier_reference"]
    answer = await context.client.get(f"/octo/bookings?resellerReference={reference}", headers=RESELLER)
    found = answer.json() if answer.status_code == 200 else None
    if not isinstance(found, list) or len(found) != 1 or found[0].get("supplierReference") != supplier:
        problems.append(f"GET /octo/bookings?resellerReference={reference} answered {answer.status_code}: "
                        f"{answer.text[:300]}")  # fmt: skip
    page = await context.client.get(
        f"/admin/bookings?reference={supplier}", headers={"Cookie": await staff_cookie(context.base_url)}
    )
    if page.status_code != 200 or "1 booking," not in page.text or supplier not in page.text:
        problems.append(
            f"GET /admin/bookings?reference={supplier} answered {page.status_code} without the booking"
        )
    return problems


def _shop_lines(mode: ModeOutcome) -> list[str]:
    """Issue 48: each shop page beside its back-office page, and the checkout's steps."""
    verdict = {None: "[yellow]not judged[/yellow]", True: "[green]yes[/green]", False: "[red]no[/red]"}
    lines = []
    for pair in mode.shop_beside_backoffice():
        data = pair.as_json()
        shown = {
            key: f"{data[key]:.3f}x" if data[key] is not None else "—"
            for key in ("shop_ratio", "backoffice_ratio")
        }
        lines.append(
            f"{mode.mode}: {data['shop_route']} {shown['shop_ratio']} beside {data['backoffice_route']} "
            f"{shown['backoffice_ratio']} (ratios to hello) · no slower: {verdict[pair.no_slower]}"
        )
    for name, steps in mode.checkout_steps.items():
        text = ", ".join(f"{step} {times['p50']:.1f}/{times['p99']:.1f}" for step, times in steps.items())
        cpu = ", ".join(f"{who} {ms:.1f}" for who, ms in mode.checkout_cpu.get(name, {}).items())
        lines.append(
            f"{mode.mode}: {name} steps, p50/p99 ms of the best round: {text} · CPU ms per checkout: {cpu}"
        )
    return lines


def _top_up_line(mode: ModeOutcome, top_up: TopUp) -> str:
    met = {None: "[yellow]not judged[/yellow]", True: "[green]met[/green]", False: "[red]not met[/red]"}
    total = f"{top_up.total:,}" if top_up.reached else f"[red]{top_up.total:,}[/red]"
    return (
        f"{mode.mode}: {total} bookings after the top-up ({top_up.made:,} made in {top_up.seconds:.0f} s, "
        f"{top_up.sold_out} sold out) · RSS MB/worker {_rss_text(mode.rss_mb)} · "
        f"target ≤ {RSS_TARGET_MB:.0f} MB after {RSS_AFTER_BOOKINGS:,} bookings: {met[mode.rss_met]}"
    )


def _row(outcome: RouteOutcome) -> list[str]:
    route = outcome.route
    target = f"≥ {outcome.target:g}x" if outcome.target is not None else "—"
    if outcome.error is not None:
        label = "interrupted" if outcome.error == "interrupted" else "failed"
        return [
            route.name,
            f"[red]{label}[/red]",
            *[""] * 7,
            target,
            "[red]no[/red]" if outcome.target else "—",
            "",
        ]
    berth, baseline, ratio, ceiling = (
        outcome.best_berth,
        outcome.best_baseline,
        outcome.ratio,
        outcome.ceiling_ratio,
    )
    non_2xx = str(outcome.non_2xx)
    if outcome.unexpected_non_2xx:
        non_2xx = f"[red]{non_2xx}[/red]"
    elif outcome.non_2xx:
        non_2xx = f"{non_2xx} (expected)"
    sock = f"[red]{outcome.socket_errors}[/red]" if outcome.socket_errors else "0"
    met = {None: "—", True: "[green]yes[/green]", False: "[red]no[/red]"}[outcome.met]
    if outcome.problems:
        met = f"[red]no: {len(outcome.problems)} check problem(s)[/red]"
    elif outcome.unexpected_non_2xx:
        met = "[red]no: non-2xx[/red]"
    elif outcome.socket_errors:
        met = "[red]no: socket errors[/red]"
    return [
        route.name,
        f"{berth.requests_per_s:,.0f}" if berth else "—",
        f"{berth.latency_ms['p50']:.2f}" if berth else "—",
        f"{berth.latency_ms['p99']:.2f}" if berth else "—",
        non_2xx,
        sock,
        f"{baseline.requests_per_s:,.0f}" if baseline else "—",
        f"{ratio:.3f}x" if ratio is not None else "—",
        f"{ceiling:.3f}x" if ceiling is not None else "—",
        target,
        met,
        _rss_text(outcome.rss_mb),
    ]


# --- machine facts -------------------------------------------------------------------------


def _first_line(path: str, prefix: str) -> str | None:
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    return None


def _git(*args: str) -> str | None:
    with contextlib.suppress(OSError):
        done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return done.stdout.strip()
    return None


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


async def machine_facts(wrk: str, postgres_url: str | None) -> dict[str, Any]:
    status = _git("status", "--porcelain")
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "cpu_model": _first_line("/proc/cpuinfo", "model name"),
        "memory": _first_line("/proc/meminfo", "MemTotal"),
        "kernel": platform.release(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
        "wrk": wrk_version(wrk),
        "postgres_server": await postgres_version(postgres_url) if postgres_url else None,
        "packages": {
            name: _version(name) for name in ("berth", "uvicorn", "starlette", "fastapi", "sqlalchemy")
        },
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(status) if status is not None else None,
    }


# --- entry point ---------------------------------------------------------------------------


async def _main(bench: Bench) -> None:
    task = asyncio.current_task()
    if task is not None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    with tempfile.TemporaryDirectory(prefix="berth-bench-") as workdir:
        await bench.run(Path(workdir))


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    # Not a terminal (CI, a log file): wide enough that the table keeps one line per row.
    console = Console(width=None if sys.stdout.isatty() else 170)
    bench = Bench(options, console)
    started = time.monotonic()
    status = 0
    try:
        asyncio.run(_main(bench))
    except (KeyboardInterrupt, asyncio.CancelledError):
        console.print("[yellow]Interrupted: servers stopped, bench databases dropped.[/yellow]")
        status = 130
    except BenchError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False)
        status = 1
    if bench.modes:
        table = bench.table()
        # Never elide figures: in a narrow terminal the rows wrap rather than lose digits.
        console.print(table, width=max(console.width, console.measure(table).maximum))
        for mode in bench.modes:
            if mode.top_up is not None:
                console.print(_top_up_line(mode, mode.top_up), highlight=False)
        flat = bench.flat_table()
        if flat is not None:
            console.print(flat, width=max(console.width, console.measure(flat).maximum))
        for mode in bench.modes:
            if mode.big is not None:
                console.print(_big_line(mode, mode.big), highlight=False)
        for mode in bench.modes:
            for line in _shop_lines(mode):
                console.print(line, highlight=False)
        if bench.baseline_rss:
            console.print(f"Baseline RSS per worker: {_rss_text(bench.baseline_rss)} MB", highlight=False)
        path = bench.write_results()
        console.print(f"Results written to {path.relative_to(REPO)} in {time.monotonic() - started:.0f} s")
    failed = any(mode.failed for mode in bench.modes)
    if status == 0 and failed:
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
