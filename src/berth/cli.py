"""The `berth` command line."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shlex
import signal
import socket
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import typer
import uvicorn
from pydantic import ValidationError
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from berth import __version__, fake_stripe
from berth.background import log_start, return_freed_memory, run_background
from berth.container import Services, build_services
from berth.delivery.mail.compose import FALLBACK_FROM, mail_sender
from berth.demo.loader import DEMO_ADMIN_TOKEN, load_demo, starter_catalog_text
from berth.domain.catalog.document import CatalogFileError, read_yaml, to_yaml
from berth.domain.catalog_changes import ImportRefused
from berth.domain.catalog_history import CatalogVersion, Door
from berth.domain.connections import Connection
from berth.domain.contracts import ALL
from berth.domain.errors import NotFound, OctoError
from berth.domain.proxies import proxy_networks
from berth.domain.staff import COMMAND_LINE, Role, StaffMember
from berth.domain.statements import Month, Total, amount_text
from berth.http.admin.exports import file_name
from berth.logs import configure_logging
from berth.services.catalog import ImportOutcome
from berth.services.contracts import SavedContract
from berth.services.shop import SHOP_NAME
from berth.settings import WILDCARD_HOSTS, Settings, listen_url
from berth.store.backup import BackupError, backup_postgres, backup_sqlite, is_postgres
from berth.store.faults import DatabaseUnavailable
from berth.store.migrate import UnknownRevision, Upgrade, current_revision, upgrade
from berth.store.urls import UnsupportedDatabaseUrl, describe_database
from berth.tickets.pkpass import PassSettingsError
from berth.tickets.statement import render_statement
from berth.views.catalog_changes import changes_lines, conflict_lines, net_lines
from berth.views.connections import connection_json
from berth.views.staff import staff_json
from berth.views.statements import statement_csv

app = typer.Typer(help="Berth: an OCTO booking server for tour and activity suppliers.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema and backups.", no_args_is_help=True)
catalog_app = typer.Typer(help="The supplier's catalogue.", no_args_is_help=True)
connection_app = typer.Typer(help="Reseller connections and their API keys.", no_args_is_help=True)
staff_app = typer.Typer(help="Staff accounts of the back office and the admin API.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(catalog_app, name="catalog")
app.add_typer(connection_app, name="connection")
contract_app = typer.Typer(
    help="A connection's contract: what it may sell, at which net.", no_args_is_help=True
)
connection_app.add_typer(contract_app, name="contract")
app.add_typer(staff_app, name="staff")
shop_app = typer.Typer(
    help="The supplier's web shop (/shop), where guests book and pay.", no_args_is_help=True
)
app.add_typer(shop_app, name="shop")

# What Berth prints names what operators, resellers and staff typed: never emoji codes (Rich
# turns `:x:` into one even without markup); markup only in Berth's own words, around escaped
# or literal (`Text`) values.
console = Console(emoji=False)
errors = Console(stderr=True, soft_wrap=True, emoji=False)
T = TypeVar("T")


def redact_database_url(url: str) -> str:
    """The database URL fit to print: the password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<database url>"


def _version(shown: bool) -> None:
    if shown:
        print(f"berth {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show Berth's version and exit."),
    ] = False,
) -> None:
    pass


def _fail(message: str) -> NoReturn:
    errors.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    raise typer.Exit(1)


def _settings_problems(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        name = "BERTH_" + "_".join(str(part) for part in error["loc"]).upper()
        message = error["msg"].removeprefix("Value error, ")
        problems.append(message if message.startswith(name) else f"{name}: {message}")
    return "; ".join(problems)


class CommandRefused(Exception):
    """The command cannot go on as the settings stand; the message says why and what to do."""


@contextmanager
def _errors_reported() -> Iterator[None]:
    """What goes wrong for a reason the operator can fix ends the command with one line on
    stderr and exit status 1, not a traceback."""
    try:
        yield
    except OctoError as exc:
        _fail(exc.message)
    except DatabaseUnavailable as exc:
        _fail(f"{exc}: {exc.reason()}")
    except (UnsupportedDatabaseUrl, UnknownRevision, BackupError, CommandRefused, PassSettingsError) as exc:
        _fail(str(exc))
    except ValidationError as exc:
        _fail(f"invalid settings: {_settings_problems(exc)}")


def _run(
    work: Callable[[Services], Awaitable[T]],
    *,
    migrate: bool = True,
    create: bool = False,
    starting: bool = False,
) -> T:
    """Run `work` on the configured database, brought up to date first unless `migrate` is off.
    Only `create` makes a database where there is none: any other command on a place with no
    Berth database would make an empty one there, and succeed on it unseen. A process `starting`
    to serve or work refuses signing secrets its key cannot open."""

    async def main() -> T:
        services = build_services(Settings())
        try:
            if not create and await current_revision(services.database) is None:
                raise CommandRefused(_no_database(services.database.url))
            if migrate:
                done = await upgrade(services.database, services.settings.secret_box())
                for note in done.notes:
                    console.print(note, highlight=False, markup=False, soft_wrap=True)
            if starting:
                await _require_openable_secrets(services)
            return await work(services)
        finally:
            await services.close()

    with _errors_reported():
        return asyncio.run(main())


def startup_warnings(settings: Settings, *, demo: bool) -> list[str]:
    """What `berth serve` warns of at start: settings a live server should not go without."""
    warnings = []
    if settings.secret_key is None and not demo:
        warnings.append(
            "BERTH_SECRET_KEY is not set: webhook signing secrets are sealed with the built-in "
            "development key, which is public. Set it before going live."
        )
    if settings.smtp_url is not None and not settings.public_url:
        warnings.append(
            f"BERTH_SMTP_URL is set but BERTH_PUBLIC_URL is not: the ticket links in guests' emails "
            f"name {settings.tickets_url}, the address Berth listens on. Set BERTH_PUBLIC_URL to the "
            "address guests reach."
        )
    return warnings


def _no_database(url: str) -> str:
    named = (
        "named by BERTH_DATABASE_URL"
        if "BERTH_DATABASE_URL" in os.environ
        else "BERTH_DATABASE_URL is not set, so the default sqlite:///./berth.db"
    )
    return (
        f"there is no Berth database at {describe_database(url)} ({named}); nothing was done. "
        "Name yours with BERTH_DATABASE_URL (load the environment file first, e.g. "
        "`set -a; . /etc/berth/berth.env; set +a`), or create one there with `berth db upgrade`"
    )


async def _require_openable_secrets(services: Services) -> None:
    unopenable = await services.connections.sealed_with_another_key()
    if not unopenable:
        return
    names = ", ".join(f"{c.name} ({c.id})" for c in unopenable)
    raise CommandRefused(
        f"BERTH_SECRET_KEY cannot open the webhook signing secrets of {len(unopenable)} "
        f"connection(s): {names}. They were sealed with another key (a restored backup?), so "
        "no webhook of theirs could be signed. Set BERTH_SECRET_KEY to the key they were sealed "
        "with, or name that key in BERTH_SECRET_KEY_PREVIOUS; if it is lost, give each a new "
        "secret with `berth connection rotate-secret NAME --grace-hours 0` and send it to its "
        "reseller, or revoke the connection"
    )


def _written_to() -> str:
    """Where a writing command wrote, to end its message with."""
    return describe_database(Settings().database_url)


def _say(message: str) -> None:
    console.print(message, highlight=False, markup=False, soft_wrap=True)


def _check_port(host: str, port: int) -> None:
    """Fail before anything is printed or migrated when `berth serve` could not listen."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        _fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            why = (
                "the port is in use (choose another with --port)"
                if exc.errno == errno.EADDRINUSE
                else exc.strerror
            )
            _fail(f"cannot listen on {host}:{port}: {why}")


async def _warn_of_mail_sender(services: Services) -> None:
    """With an SMTP server, guests' emails need a sender a relay accepts."""
    if services.settings.smtp_url is None:
        return
    catalog = (await services.catalog.snapshot()).catalog
    if mail_sender(services.settings.mail_from, catalog) is None:
        errors.print(
            "[yellow]warning:[/yellow] neither BERTH_MAIL_FROM nor the catalogue's supplier contact email "
            f"is set: guests' emails are sent from {FALLBACK_FROM}, which mail relays refuse. Set one."
        )


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes")] = 1,
    demo: Annotated[bool, typer.Option("--demo", help="Load the demo catalogue and connections")] = False,
) -> None:
    """Apply migrations and serve the OCTO API (and the admin API)."""
    if demo and not os.environ.get("BERTH_ADMIN_TOKEN"):
        os.environ["BERTH_ADMIN_TOKEN"] = DEMO_ADMIN_TOKEN
    if demo:  # the demo is for trying things out: no rate limit unless one is asked for
        os.environ.setdefault("BERTH_RATE_LIMIT_PER_MINUTE", "0")
    os.environ["BERTH_LISTEN_URL"] = listen_url(host, port)  # for the processes uvicorn starts
    _check_port(host, port)

    async def prepare(services: Services) -> None:
        if demo:
            await load_demo(services)
        await _warn_of_mail_sender(services)

    with _errors_reported():
        configure_logging(Settings().log_level, Settings().log_format)
    fake = _fake_stripe_for_demo(host, port) if demo else None
    try:
        _serve(prepare, host, port, workers, demo=demo)
    finally:
        if fake is not None:
            fake.stop()


def _fake_stripe_for_demo(host: str, port: int) -> fake_stripe.FakeStripe | None:
    """The demo without Stripe keys: a fake Stripe (localstripe) beside it, in test mode, its
    webhooks sent to this server; the BERTH_STRIPE_* settings point the server at it."""
    if os.environ.get("BERTH_STRIPE_SECRET_KEY"):
        return None
    if not fake_stripe.available():
        errors.print(
            "[yellow]warning:[/yellow] no BERTH_STRIPE_SECRET_KEY and localstripe is not installed "
            "(`pip install localstripe`): the demo shop takes no card payments",
            highlight=False,
        )
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        stripe_port = probe.getsockname()[1]
    fake = fake_stripe.start(stripe_port)
    reach = "127.0.0.1" if host in WILDCARD_HOSTS else host
    fake.send_webhooks_to(listen_url(reach, port))
    os.environ.update(fake.environment())
    console.print(
        f"Test mode: card payments go to a fake Stripe (localstripe) at {fake.url}; no card is charged. "
        "Pay with the test card 4242 4242 4242 4242 (docs/payments.md lists the others).",
        highlight=False,
    )
    return fake


def _serve(
    prepare: Callable[[Services], Awaitable[None]], host: str, port: int, workers: int, *, demo: bool
) -> None:
    _run(prepare, create=demo, starting=True)
    settings = Settings()
    everywhere = " (listening on every interface)" if host in WILDCARD_HOSTS else ""
    console.print(
        f"Berth serving the OCTO API at [bold]{escape(settings.octo_endpoint())}[/bold]{everywhere} "
        f"({escape(redact_database_url(settings.database_url))})",
        highlight=False,
    )
    for warning in startup_warnings(settings, demo=demo):
        errors.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)
    if demo:
        console.print("Demo API keys: demo-reseller-a, demo-reseller-b; admin token: " + DEMO_ADMIN_TOKEN)
    trusted = [str(network) for network in proxy_networks(settings.trusted_proxies)]
    uvicorn.run(
        "berth.app:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,
        # X-Forwarded-* only from the proxies the operator names (uvicorn trusts 127.0.0.1 else);
        # with none named, uvicorn's proxy layer is left out of every request.
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted,
    )


@app.command()
def worker() -> None:
    """Run the background work alone (expiry, webhook fan-out and delivery).

    For example next to API processes started with BERTH_RUN_WORKER=false."""

    async def work(services: Services) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signal_number, stop.set)
        log_start("worker", services.settings)
        await _warn_of_mail_sender(services)
        console.print("Berth worker running; Ctrl-C stops it.")
        await asyncio.gather(run_background(services, stop), return_freed_memory(stop))

    with _errors_reported():
        configure_logging(Settings().log_level, Settings().log_format)
    _run(work, starting=True)


@app.command("demo")
def demo_command() -> None:
    """Load the demo catalogue and the two demo connections (idempotent)."""
    _run(load_demo)
    _say(f"Demo data loaded into the {_written_to()}: API keys demo-reseller-a and demo-reseller-b.")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every pending migration (`berth serve` does too, when it starts)."""

    async def work(services: Services) -> tuple[Upgrade, str]:
        done = await upgrade(services.database, services.settings.secret_box())
        return done, describe_database(services.database.url)

    done, where = _run(work, migrate=False, create=True)
    if done.before is None:
        said = f"Database created at revision {done.after} ({where})."
    elif done.before == done.after:
        said = f"Database already at revision {done.after}, the latest ({where})."
    else:
        said = f"Database upgraded from revision {done.before} to {done.after} ({where})."
    console.print(said, highlight=False, markup=False, soft_wrap=True)
    for note in done.notes:
        console.print(note, highlight=False, markup=False, soft_wrap=True)


@db_app.command("backup")
def db_backup(
    file: Annotated[Path, typer.Argument(dir_okay=False, help="Where to write the copy")],
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists")] = False,
) -> None:
    """Copy the database to FILE (only its owner may read it), safely while Berth serves: SQLite's
    online backup, or pg_dump for PostgreSQL."""
    with _errors_reported():
        url = Settings().database_url
        if is_postgres(url):
            dumped = backup_postgres(url, file, replace=force)
            _say(
                f"Backed up {describe_database(url)} to {dumped.target} ({dumped.size} bytes, pg_dump "
                "custom format). Restore it, with Berth stopped, into that database or an empty one, with:"
            )
            print(f"  {shlex.join(dumped.restore)}")
            return
        done = backup_sqlite(url, file, replace=force)
    revision = f"schema revision {done.revision}" if done.revision else "no Berth schema yet"
    _say(f"Backed up {describe_database(url)} to {done.target} ({done.size} bytes, {revision}).")


@catalog_app.command("import")
def catalog_import(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what the import would change; change nothing")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Import even if it removes or shrinks what live bookings hold")
    ] = False,
    cap_nets: Annotated[
        bool,
        typer.Option(
            "--cap-nets",
            help="Save even if contracts' nets end above the retail they apply to: sold at the retail",
        ),
    ] = False,
) -> None:
    """Replace the catalogue with FILE (YAML). A file with problems changes nothing, nor does an
    import that removes or shrinks what live bookings hold (unless --force), or that puts
    contracts' nets above the retail they apply to (unless --cap-nets: sold at the retail)."""
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        errors.print(f"[red]error:[/red] {escape(str(file))} is not UTF-8 text", highlight=False)
        raise typer.Exit(1) from None

    async def work(services: Services) -> ImportOutcome | ImportRefused:
        try:
            return await services.catalog.import_text(
                text, actor=COMMAND_LINE, dry_run=dry_run, force=force, cap_nets=cap_nets
            )
        except ImportRefused as refused:
            return refused

    _report_import(
        str(file), work, dry_run=dry_run, force=force, cap_nets=cap_nets, act="import", verb="imported"
    )


def _report_import(
    name: str,
    work: Callable[[Services], Awaitable[ImportOutcome | ImportRefused]],
    *,
    dry_run: bool,
    force: bool,
    cap_nets: bool,
    act: str,
    verb: str,
) -> None:
    """Run an import (or a restore) of `name`: what it changed, or why it did not."""
    try:
        outcome = _run(work)
    except CatalogFileError as exc:
        errors.print(f"[red]{escape(name)}: {len(exc.problems)} problem(s); nothing was {verb}[/red]")
        for problem in exc.problems:
            errors.print(f"  {name}:{problem}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    if isinstance(outcome, ImportRefused):
        _report_refusal(name, outcome, act, verb)
    changes = outcome.changes
    if dry_run:
        typer.echo(f"Dry run of {name}: nothing was {verb}.")
        for line in changes_lines(changes):
            typer.echo(line)
        refusals = []
        if changes.conflicts and not force:
            refusals.append(
                f"Without --force this {act} is refused: it removes or shrinks what "
                f"{changes.affected_bookings} live booking(s) hold."
            )
        if changes.nets_above_retail and not cap_nets:
            refusals.append(
                f"Without --cap-nets this {act} is refused: it puts {len(changes.nets_above_retail)} "
                "contract net(s) above the retail they apply to."
            )
        for refusal in refusals:
            typer.echo(refusal)
        if refusals:
            raise typer.Exit(1)
        return
    if changes.conflicts:
        typer.echo(f"{verb.capitalize()} over {changes.affected_bookings} live booking(s) (--force):")
        for line in conflict_lines(changes.conflicts):
            typer.echo(line)
    if changes.nets_above_retail:
        typer.echo("Contract nets now above the retail, sold at the retail (--cap-nets):")
        for line in net_lines(changes.nets_above_retail):
            typer.echo(line)
    _say(
        f"{verb.capitalize()} {len(outcome.catalog.products)} product(s) into the {_written_to()}; "
        f"catalogue version {outcome.version}."
    )


def _report_refusal(name: str, refused: ImportRefused, act: str, verb: str) -> NoReturn:
    changes = refused.changes
    if refused.bookings:
        typer.echo(
            f"{name}: refused: it removes or shrinks what {changes.affected_bookings} live booking(s) hold; "
            f"nothing was {verb}.",
            err=True,
        )
        for line in conflict_lines(changes.conflicts):
            typer.echo(line, err=True)
        typer.echo(f"See everything it changes with --dry-run; {act} it anyway with --force.", err=True)
    if refused.nets:
        typer.echo(
            f"{name}: refused: it puts {len(changes.nets_above_retail)} contract net(s) above the retail they "
            f"apply to; nothing was {verb}.",
            err=True,
        )
        for line in net_lines(changes.nets_above_retail):
            typer.echo(line, err=True)
        typer.echo(
            f"Change those contracts first (lower the net, or allowAboveRetail: true), or {act} with "
            "--cap-nets to sell them at the retail (no commission).",
            err=True,
        )
    raise typer.Exit(1)


@catalog_app.command("new")
def catalog_new(
    file: Annotated[Path, typer.Argument(dir_okay=False, help="Where to write it")],
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists")] = False,
) -> None:
    """Write a small commented catalogue to FILE, to start yours from (it touches no database)."""
    if file.exists() and not force:
        _fail(f"{file} already exists; nothing was written (--force replaces it)")
    try:
        file.write_text(starter_catalog_text(), encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {file}: {exc.strerror}")
    _say(
        f"Wrote a starting catalogue to {file}. Make it yours (every field: docs/catalog.md), "
        f"check it with `berth catalog import {file} --dry-run`, then import it."
    )


@catalog_app.command("export")
def catalog_export() -> None:
    """Print the catalogue as YAML (the format `catalog import` reads)."""

    async def work(services: Services) -> str:
        return await services.catalog.export_text()

    sys.stdout.write(_run(work))


@catalog_app.command("history")
def catalog_history(
    limit: Annotated[int, typer.Option(help="How many versions, newest first")] = 20,
) -> None:
    """List the catalogue's versions: when, who, through which door, and what each changed."""

    async def work(services: Services) -> list[CatalogVersion]:
        return await services.catalog.versions(limit=limit)

    table = Table("Version", "Saved (UTC)", "By", "Door", "What changed", box=None)
    for entry in _run(work):
        saved = entry.created_at.strftime("%Y-%m-%d %H:%M:%S")
        _add_row(table, str(entry.version), saved, entry.actor, entry.door.value, entry.summary)
    console.print(table)


@catalog_app.command("restore")
def catalog_restore(
    version: int,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what restoring would change; change nothing")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Restore even if it removes or shrinks what live bookings hold")
    ] = False,
    cap_nets: Annotated[
        bool,
        typer.Option(
            "--cap-nets",
            help="Restore even if contracts' nets end above the retail they apply to: sold at the retail",
        ),
    ] = False,
) -> None:
    """Save catalogue VERSION again as a new version, with the checks of an import."""

    async def work(services: Services) -> ImportOutcome | ImportRefused:
        try:
            return await services.catalog.restore(
                version, actor=COMMAND_LINE, door=Door.CLI, dry_run=dry_run, force=force, cap_nets=cap_nets
            )
        except ImportRefused as refused:
            return refused

    _report_import(
        f"version {version}",
        work,
        dry_run=dry_run,
        force=force,
        cap_nets=cap_nets,
        act="restore",
        verb="restored",
    )


@connection_app.command("create")
def connection_create(name: str) -> None:
    """Create a reseller connection and print its API key (shown only this once)."""

    async def work(services: Services) -> tuple[str, str, str]:
        connection, key, secret = await services.connections.create(name, actor=COMMAND_LINE)
        return connection.id, key, secret

    connection_id, key, secret = _run(work)
    _say(f"Connection {name} created (id {connection_id}) in the {_written_to()}.")
    console.print(
        "Webhook signing secret (shown once; Standard Webhooks, verify `webhook-signature` with it):"
    )
    print(secret)
    console.print("API key (shown once, store it now):")
    print(key)


@connection_app.command("list")
def connection_list(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON, as GET /admin/api/connections answers")
    ] = False,
) -> None:
    """List connections (keys are never shown, only their last characters)."""
    connections = _run(lambda services: services.connections.list())
    if as_json:
        print(json.dumps([connection_json(c) for c in connections], indent=2))
        return
    table = Table(
        "id",
        "name",
        "API key",
        "created (UTC)",
        "status",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    for c in connections:
        status = f"revoked {c.revoked_at:%Y-%m-%d %H:%M}" if c.revoked_at else "active"
        _add_row(table, c.id, c.name, c.key_hint, f"{c.created_at:%Y-%m-%d %H:%M}", status)
    _wide(table)


@connection_app.command("revoke")
def connection_revoke(connection: Annotated[str, typer.Argument(help="Connection id or name")]) -> None:
    """Revoke a connection: its API key stops working at once."""

    async def work(services: Services) -> Connection:
        try:
            return await services.connections.revoke(connection, actor=COMMAND_LINE, again=False)
        except NotFound as exc:
            hint = "`berth connection list` shows every connection's id and name"
            raise NotFound(f"{exc.message}; {hint}") from None

    revoked = _run(work)
    _say(
        f"Connection {revoked.name} ({revoked.id}) revoked in the {_written_to()}: "
        f"its API key {revoked.key_hint} no longer works."
    )


def _contract_document(connection: Connection) -> dict[str, object]:
    return {"products": ALL, **connection.contract.to_document()}


@contract_app.command("show")
def contract_show(connection: Annotated[str, typer.Argument(help="Connection id or unique name")]) -> None:
    """Print a connection's contract as YAML (the file `contract set` reads), with its version."""
    found = _run(lambda services: _find_connection(services, connection))
    console.print(
        f"# {found.name} ({found.id}), contract version {found.contract_version}",
        highlight=False,
        markup=False,
    )
    print(to_yaml(_contract_document(found)), end="")


@contract_app.command("set")
def contract_set(
    connection: Annotated[str, typer.Argument(help="Connection id or unique name")],
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The contract, YAML or JSON")],
) -> None:
    """Replace a connection's contract with FILE (saved as a new version; audited)."""
    try:
        document = read_yaml(file.read_text(encoding="utf-8"))
    except CatalogFileError as exc:
        _fail("; ".join(str(p) for p in exc.problems))

    async def work(services: Services) -> SavedContract:
        found = await _find_connection(services, connection)
        return await services.contracts.save(found.id, document, base_version=None, actor=COMMAND_LINE)

    saved = _run(work)
    _say(
        f"Contract of {saved.connection.name} ({saved.connection.id}) saved as version {saved.version} "
        f"in the {_written_to()}: {saved.contract.rate.kind}, products "
        f"{'all' if isinstance(saved.contract.products, str) else len(saved.contract.products)}."
    )


async def _find_connection(services: Services, id_or_name: str) -> Connection:
    """The connection with this id or unique name; NotFound says where to look them up."""
    try:
        return await services.connections.get(id_or_name)
    except NotFound as exc:
        hint = "`berth connection list` shows every connection's id and name"
        raise NotFound(f"{exc.message}; {hint}") from None


@connection_app.command("rotate-secret")
def connection_rotate_secret(
    connection: Annotated[str, typer.Argument(help="Connection id or name")],
    grace_hours: Annotated[
        int, typer.Option(min=0, help="Hours the old secrets keep signing alongside the new one")
    ] = 24,
) -> None:
    """Give a connection a new webhook signing secret, sealed with BERTH_SECRET_KEY (shown only
    this once)."""

    async def work(services: Services) -> tuple[Connection, str]:
        found = await _find_connection(services, connection)
        if found.revoked_at is not None:
            raise CommandRefused(f"connection {found.name} ({found.id}) is revoked: nothing was changed")
        grace = timedelta(hours=grace_hours)
        return found, await services.webhooks.rotate_secret(found.id, grace, actor=COMMAND_LINE)

    rotated, secret = _run(work)
    _say(
        f"New signing secret of {rotated.name} ({rotated.id}) stored in the {_written_to()}; "
        f"the old ones sign alongside it for {grace_hours} hour(s). Send it to the reseller "
        "(shown once):"
    )
    print(secret)


@shop_app.command("open")
def shop_open(
    name: Annotated[str, typer.Option(help="The name of the shop's connection")] = SHOP_NAME,
) -> None:
    """Open the web shop: its connection, with a contract at retail that takes card payments
    (done once; the shop then sells as the contract says, which staff may change like any
    other). Revoking the connection closes the shop."""

    async def work(services: Services) -> Connection:
        return await services.shop.open(COMMAND_LINE, name)

    connection = _run(work)
    base = (Settings().public_url or "http://127.0.0.1:8000").rstrip("/")
    _say(
        f"The web shop sells as connection {connection.name} ({connection.id}) in the {_written_to()}: "
        f"guests book at {base}/shop. Card payments need BERTH_STRIPE_SECRET_KEY and "
        "BERTH_STRIPE_PUBLISHABLE_KEY (docs/shop.md)."
    )


@app.command("statements")
def statements_command(
    month: Annotated[str, typer.Argument(help="The month, as YYYY-MM")],
    connection: Annotated[
        str | None, typer.Option("--connection", help="Only this connection (id or name)")
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", file_okay=False, help="The directory to write the files in")
    ] = Path("."),
) -> None:
    """Write each connection's statement of MONTH (or one connection's) as CSV and PDF."""

    async def work(services: Services) -> list[Path]:
        period = Month.parse(month)
        chosen = (
            [await _find_connection(services, connection)]
            if connection
            else await services.connections.list()
        )
        catalog = (await services.catalog.snapshot()).catalog
        out.mkdir(parents=True, exist_ok=True)
        written = []
        stems = statement_stems(chosen, period)
        for found in chosen:
            statement = await services.statements.of(catalog, found, period)
            stem = out / stems[found.id]
            csv_path, pdf_path = stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".pdf")
            csv_path.write_bytes(b"".join([chunk async for chunk in statement_csv(statement)]))
            pdf_path.write_bytes(
                render_statement(statement, catalog.supplier, services.settings.ticket_paper)
            )
            _say(
                f"{found.name}: {len(statement.lines)} line(s); "
                + ("; ".join(_total_text(t) for t in statement.totals) or "nothing sold")
            )
            written += [csv_path, pdf_path]
        return written

    written = _run(work)
    _say(f"Wrote {len(written)} file(s) in {out}.")


def statement_stems(connections: list[Connection], month: Month) -> dict[str, str]:
    """Each connection's statement file name (without suffix), by connection id: from its name,
    with its id as well where names fold to one file name (`adv x/y`, `adv x:y`; compared
    without case, as some file systems do), so no file overwrites another."""
    plain = {c.id: file_name("statement", c.name, str(month)) for c in connections}
    folded = Counter(stem.casefold() for stem in plain.values())
    return {
        c.id: plain[c.id]
        if folded[plain[c.id].casefold()] == 1
        else file_name("statement", c.name, c.id, str(month))
        for c in connections
    }


def _total_text(total: Total) -> str:
    def amount(value: int) -> str:
        return amount_text(value, total.precision)

    discount = (
        f"original {amount(total.original)}, discount {amount(total.discount)}, " if total.discount else ""
    )
    paid = (
        f", paid by gift voucher {amount(total.gift_paid)}, owed {amount(total.owed)}"
        if total.gift_paid
        else ""
    )
    return (
        f"{total.currency or 'no currency'} {discount}retail {amount(total.retail)}, net {amount(total.net)}, "
        f"commission {amount(total.commission)}{paid} ({total.count} line(s))"
    )


def _add_row(table: Table, *cells: str) -> None:
    """A row of literal text: a name like `[bold]x[/bold] :x:` is shown as written."""
    table.add_row(*(Text(cell) for cell in cells))


def _wide(table: Table) -> None:
    """Print a table wider than the terminal rather than cut short: an id is only useful whole."""
    natural = Measurement.get(console, console.options.update(max_width=sys.maxsize), table).maximum
    Console(width=max(console.width, natural), emoji=False).print(table)


def _no_such_member(exc: NotFound) -> NotFound:
    return NotFound(f"{exc.message}; `berth staff list` shows every account")


@staff_app.command("create")
def staff_create(
    email: str,
    role: Annotated[
        Role,
        typer.Option(
            help="viewer reads; operator also acts on bookings, departures and mappings; admin also manages connections, webhooks, staff and the catalogue; editor only edits the catalogue"
        ),
    ],
) -> None:
    """Create a staff account and print its one-time password (shown only this once; its
    owner chooses their own at first sign-in)."""

    async def work(services: Services) -> tuple[StaffMember, str]:
        return await services.staff.create(email, role, actor=COMMAND_LINE)

    member, password = _run(work)
    _say(
        f"Staff account {member.email} created ({member.role.value}, id {member.id}) in the {_written_to()}."
    )
    console.print("One-time password (shown once; they choose their own when they first sign in):")
    print(password)


@staff_app.command("token")
def staff_token(email: Annotated[str, typer.Argument(help="The member's email or id")]) -> None:
    """Print a new API token for /admin/api (shown only this once; it replaces the member's
    previous token)."""

    async def work(services: Services) -> tuple[StaffMember, str]:
        try:
            return await services.staff.issue_token(email, actor=COMMAND_LINE)
        except NotFound as exc:
            raise _no_such_member(exc) from None

    member, token = _run(work)
    _say(
        f"New API token of {member.email} ({member.role.value}), stored in the {_written_to()}; "
        "send it as 'Authorization: Bearer <token>' (shown once, store it now):"
    )
    print(token)


@staff_app.command("list")
def staff_list(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON, as GET /admin/api/staff answers")
    ] = False,
) -> None:
    """List staff accounts (passwords and tokens are never shown, only a token's last characters)."""
    members = _run(lambda services: services.staff.list())
    if as_json:
        print(json.dumps([staff_json(m) for m in members], indent=2))
        return
    table = Table(
        "email", "role", "id", "API token", "created (UTC)", "status",
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
    )  # fmt: skip
    for m in members:
        status = f"disabled {m.disabled_at:%Y-%m-%d %H:%M}" if m.disabled_at else "active"
        _add_row(
            table, m.email, m.role.value, m.id, m.token_hint or "-", f"{m.created_at:%Y-%m-%d %H:%M}", status
        )
    _wide(table)


@staff_app.command("disable")
def staff_disable(email: Annotated[str, typer.Argument(help="The member's email or id")]) -> None:
    """Disable a staff account: its API token stops working and it is signed out everywhere."""

    async def work(services: Services) -> StaffMember:
        try:
            return await services.staff.disable(email, actor=COMMAND_LINE)
        except NotFound as exc:
            raise _no_such_member(exc) from None

    member = _run(work)
    _say(
        f"Staff account {member.email} disabled in the {_written_to()}: its API token no longer "
        "works and its sessions have ended."
    )


def main() -> None:
    app()
