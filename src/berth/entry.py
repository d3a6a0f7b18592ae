"""The `berth` command's entry point, apart from `berth.cli` on purpose: uvicorn starts its
workers with multiprocessing's spawn, which runs the parent's script again in each worker, and
with it the script's imports. Were the script to import the CLI, every worker would load Typer,
Rich's tables and Alembic for nothing (about 11 MB each)."""

from __future__ import annotations


def main() -> None:
    from berth.cli import main as run_cli

    run_cli()
