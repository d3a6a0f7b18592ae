"""The `berth` command line."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
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
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from berth import __version__
from berth.background import return_freed_memory, run_background
from berth.container import Services, build_services
from berth.demo.loader import DEMO_ADMIN_TOKEN, load_demo
from berth.domain.catalog.document import CatalogFileError
from berth.domain.catalog_changes import ImportRefused
from berth.domain.connections import Connection
from berth.domain.errors import NotFound, OctoError
from berth.domain.staff import COMMAND_LINE, Role, StaffMember
from berth.services.catalog import ImportOutcome
from berth.settings import WILDCARD_HOSTS, Settings, listen_url
from berth.store.backup import BackupError, backup_sqlite, is_postgres, pg_dump_commands
from berth.store.database import DatabaseUnavailable, UnsupportedDatabaseUrl, describe_database
from berth.store.migrate import UnknownRevision, Upgrade, upgrade
from berth.tickets.pkpass import PassSettingsError
from berth.views.catalog_changes import changes_lines, conflict_lines
from berth.views.connections import connection_json
from berth.views.staff import staff_json

app = typer.Typer(help="Berth: an OCTO booking server for tour and activity suppliers.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema and backups.", no_args_is_help=True)
catalog_app = typer.Typer(help="The supplier's catalogue.", no_args_is_help=True)
connection_app = typer.Typer(help="Reseller connections and their API keys.", no_args_is_help=True)
staff_app = typer.Typer(help="Staff accounts of the back office and the admin API.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(catalog_app, name="catalog")
app.add_typer(connection_app, name="connection")
app.add_typer(staff_app, name="staff")

console = Console()
errors = Console(stderr=True, soft_wrap=True)
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
    except (UnsupportedDatabaseUrl, UnknownRevision, BackupError, PassSettingsError) as exc:
        _fail(str(exc))
    except ValidationError as exc:
        _fail(f"invalid settings: {_settings_problems(exc)}")


def _run(work: Callable[[Services], Awaitable[T]], *, migrate: bool = True) -> T:
    """Run `work` on the configured database, brought up to date first unless `migrate` is off."""

    async def main() -> T:
        services = build_services(Settings())
        try:
            if migrate:
                await upgrade(services.database, services.settings.secret_box())
            return await work(services)
        finally:
            await services.close()

    with _errors_reported():
        return asyncio.run(main())


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

    async def prepare(services: Services) -> None:
        if demo:
            await load_demo(services)

    _run(prepare)
    settings = Settings()
    everywhere = " (listening on every interface)" if host in WILDCARD_HOSTS else ""
    console.print(
        f"Berth serving the OCTO API at [bold]{settings.octo_endpoint()}[/bold]{everywhere} ({redact_database_url(settings.database_url)})"
    )
    if settings.secret_key is None and not demo:
        errors.print(
            "[yellow]warning:[/yellow] BERTH_SECRET_KEY is not set: webhook signing secrets are sealed with "
            "the built-in development key, which is public. Set it before going live."
        )
    if demo:
        console.print("Demo API keys: demo-reseller-a, demo-reseller-b; admin token: " + DEMO_ADMIN_TOKEN)
    uvicorn.run(
        "berth.app:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,
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
        console.print("Berth worker running; Ctrl-C stops it.")
        await asyncio.gather(run_background(services, stop), return_freed_memory(stop))

    _run(work)


@app.command("demo")
def demo_command() -> None:
    """Load the demo catalogue and the two demo connections (idempotent)."""
    _run(load_demo)
    console.print("Demo data loaded: API keys demo-reseller-a and demo-reseller-b.")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply every pending migration (`berth serve` does too, when it starts)."""

    async def work(services: Services) -> tuple[Upgrade, str]:
        done = await upgrade(services.database, services.settings.secret_box())
        return done, describe_database(services.database.url)

    done, where = _run(work, migrate=False)
    if done.before is None:
        said = f"Database created at revision {done.after} ({where})."
    elif done.before == done.after:
        said = f"Database already at revision {done.after}, the latest ({where})."
    else:
        said = f"Database upgraded from revision {done.before} to {done.after} ({where})."
    console.print(said, highlight=False, markup=False, soft_wrap=True)


@db_app.command("backup")
def db_backup(
    file: Annotated[Path, typer.Argument(dir_okay=False, help="Where to write the copy")],
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists")] = False,
) -> None:
    """Copy the database to FILE, safely while Berth serves (SQLite); show the pg_dump command (PostgreSQL)."""
    with _errors_reported():
        url = Settings().database_url
        if is_postgres(url):
            commands = pg_dump_commands(url, file)
            print(
                "Berth does not copy a PostgreSQL database itself: pg_dump does, from one consistent "
                "snapshot, while Berth goes on serving. Back up with (pg_dump asks for the password, "
                "or reads PGPASSWORD or ~/.pgpass):"
            )
            print(f"  {shlex.join(commands.dump)}")
            print("Restore, with Berth stopped, into that database (or an empty one) with:")
            print(f"  {shlex.join(commands.restore)}")
            raise typer.Exit(1)
        done = backup_sqlite(url, file, replace=force)
    revision = f"schema revision {done.revision}" if done.revision else "no Berth schema yet"
    console.print(
        f"Backed up {describe_database(url)} to {done.target} ({done.size} bytes, {revision}).",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


@catalog_app.command("import")
def catalog_import(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, readable=True)],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what the import would change; change nothing")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Import even if it removes or shrinks what live bookings hold")
    ] = False,
) -> None:
    """Replace the catalogue with FILE (YAML). A file with problems changes nothing, nor does an
    import that removes or shrinks what live bookings hold (unless --force)."""
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        errors.print(f"[red]error:[/red] {file} is not UTF-8 text")
        raise typer.Exit(1) from None

    async def work(services: Services) -> ImportOutcome | ImportRefused:
        try:
            return await services.catalog.import_text(text, actor=COMMAND_LINE, dry_run=dry_run, force=force)
        except ImportRefused as refused:
            return refused

    try:
        outcome = _run(work)
    except CatalogFileError as exc:
        errors.print(f"[red]{file}: {len(exc.problems)} problem(s); nothing was imported[/red]")
        for problem in exc.problems:
            errors.print(f"  {file}:{problem}", markup=False, highlight=False)
        raise typer.Exit(1) from None
    if isinstance(outcome, ImportRefused):
        count = outcome.changes.affected_bookings
        typer.echo(
            f"{file}: refused: it removes or shrinks what {count} live booking(s) hold; nothing was imported.",
            err=True,
        )
        for line in conflict_lines(outcome.changes.conflicts):
            typer.echo(line, err=True)
        typer.echo("See everything it changes with --dry-run; import it anyway with --force.", err=True)
        raise typer.Exit(1)
    changes = outcome.changes
    if dry_run:
        typer.echo(f"Dry run of {file}: nothing was imported.")
        for line in changes_lines(changes):
            typer.echo(line)
        if changes.conflicts and not force:
            typer.echo(
                "Without --force this import is refused: it removes or shrinks what "
                f"{changes.affected_bookings} live booking(s) hold."
            )
            raise typer.Exit(1)
        return
    if changes.conflicts:
        typer.echo(f"Imported over {changes.affected_bookings} live booking(s) (--force):")
        for line in conflict_lines(changes.conflicts):
            typer.echo(line)
    console.print(
        f"Imported {len(outcome.catalog.products)} product(s); catalogue version {outcome.version}."
    )


@catalog_app.command("export")
def catalog_export() -> None:
    """Print the catalogue as YAML (the format `catalog import` reads)."""

    async def work(services: Services) -> str:
        return await services.catalog.export_text()

    sys.stdout.write(_run(work))


@connection_app.command("create")
def connection_create(name: str) -> None:
    """Create a reseller connection and print its API key (shown only this once)."""

    async def work(services: Services) -> tuple[str, str, str]:
        connection, key, secret = await services.connections.create(name, actor=COMMAND_LINE)
        return connection.id, key, secret

    connection_id, key, secret = _run(work)
    console.print(f"Connection [bold]{name}[/bold] created (id {connection_id}).")
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
        table.add_row(c.id, c.name, c.key_hint, f"{c.created_at:%Y-%m-%d %H:%M}", status)
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
    console.print(
        f"Connection {revoked.name} ({revoked.id}) revoked: its API key {revoked.key_hint} no longer works.",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _wide(table: Table) -> None:
    """Print a table wider than the terminal rather than cut short: an id is only useful whole."""
    natural = Measurement.get(console, console.options.update(max_width=sys.maxsize), table).maximum
    Console(width=max(console.width, natural)).print(table)


def _no_such_member(exc: NotFound) -> NotFound:
    return NotFound(f"{exc.message}; `berth staff list` shows every account")


@staff_app.command("create")
def staff_create(
    email: str,
    role: Annotated[
        Role,
        typer.Option(
            help="viewer reads; operator also acts on bookings, departures and mappings; admin also manages connections, webhooks, staff and the catalogue"
        ),
    ],
) -> None:
    """Create a staff account and print its one-time password (shown only this once; its
    owner chooses their own at first sign-in)."""

    async def work(services: Services) -> tuple[StaffMember, str]:
        return await services.staff.create(email, role, actor=COMMAND_LINE)

    member, password = _run(work)
    console.print(
        f"Staff account {member.email} created ({member.role.value}, id {member.id}).",
        highlight=False,
        markup=False,
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
    console.print(
        f"API token of {member.email} ({member.role.value}); send it as 'Authorization: Bearer <token>' "
        "(shown once, store it now):",
        highlight=False,
        markup=False,
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
        table.add_row(
            m.email, m.role.value, m.id, m.token_hint or "-", f"{m.created_at:%Y-%m-%d %H:%M}", status
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
    console.print(
        f"Staff account {member.email} disabled: its API token no longer works and its sessions have ended.",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def main() -> None:
    app()
