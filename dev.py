#!/usr/bin/env python3
"""Set up Berth's environment and run it.

    python3 dev.py serve [berth serve options]   # demo server on an embedded SQLite file
    python3 dev.py test [pytest options]          # the whole test suite, on every core
    python3 dev.py bench [benchmark options]      # Berth against a same-run baseline (benchmarks/)

The first run creates `.venv` and installs the exact versions pinned in `constraints.txt`;
later runs reinstall only when `pyproject.toml` or `constraints.txt` changed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".berth-installed"
CHROMIUM = Path(os.environ.get("BERTH_TEST_CHROMIUM", "/usr/bin/chromium"))  # as tests/chromium.py
SKIP_BROWSER = "BERTH_TEST_SKIP_BROWSER"


def _digest() -> str:
    hasher = hashlib.sha256()
    for name in ("pyproject.toml", "constraints.txt"):
        hasher.update((ROOT / name).read_bytes())
    return hasher.hexdigest()


def ensure_environment() -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"Berth needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        print("Creating .venv ...", flush=True)
        venv.create(VENV, with_pip=True)
    digest = _digest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    print("Installing Berth and its pinned dependencies into .venv ...", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-c", "constraints.txt", "-e", ".[dev]"], check=True, cwd=ROOT)
    STAMP.write_text(digest)


def apt_install(package: str, needed_by: str) -> None:
    """Install a Debian package where we may (as root, with apt-get)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("apt-get"):
        return
    print(f"Installing Debian's {package} for {needed_by} ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", package]):
        if subprocess.run(command, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            print(f"Could not install {package} ({' '.join(command)} failed).", flush=True)
            return


def ensure_chromium() -> None:
    """The browser tests (back office, scanner, API docs) drive Debian's chromium. Without it they
    would fail one by one (tests/chromium.py), so the run stops first and says what is missing,
    unless it was told to go without browsers."""
    if CHROMIUM.exists() or os.environ.get(SKIP_BROWSER) == "1":
        return
    apt_install("chromium", "the browser tests")
    if not CHROMIUM.exists():
        sys.exit(
            f"Debian's chromium is missing at {CHROMIUM} and could not be installed here; the browser "
            "tests (marked `browser`) need it.\nInstall it (as root: apt-get install chromium) and run "
            f"again, or set {SKIP_BROWSER}=1 to run the suite without them (reported as skipped)."
        )


def ensure_pg_dump() -> None:
    """`berth db backup` on PostgreSQL runs pg_dump, from Debian's postgresql-client."""
    if not shutil.which("pg_dump"):
        apt_install("postgresql-client", "the PostgreSQL backup tests")


def ensure_openssl() -> None:
    """The Apple Wallet pass tests check signatures with the `openssl` command."""
    if not shutil.which("openssl"):
        apt_install("openssl", "the Apple Wallet pass tests")


def main() -> None:
    command, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    if command not in ("serve", "test", "bench"):
        sys.exit(__doc__)
    ensure_environment()
    os.chdir(ROOT)
    python = str(BIN / "python")
    if command == "serve":
        berth = str(BIN / "berth")
        os.execv(berth, [berth, "serve", "--demo", *args])
    if command == "bench":
        os.execv(python, [python, "benchmarks/run.py", *args])
    ensure_chromium()
    ensure_pg_dump()
    ensure_openssl()
    os.execve(python, [python, "-m", "pytest", *parallel(args), *args], writing_bytecode())


def parallel(args: list[str]) -> list[str]:
    """The suite on every core (pytest-xdist), each test file on one worker: a file's
    module-scoped servers and browsers start once and its tests keep their order. `-n 0` (or
    any `-n`) given by the caller wins."""
    if any(arg.startswith(("-n", "--numprocesses", "--dist")) or arg.endswith("no:xdist") for arg in args):
        return []
    return ["-n", "auto", "--dist", "loadfile"]


def writing_bytecode() -> dict[str, str]:
    """The suite's environment: the caller's, but with Python writing bytecode. Where
    PYTHONDONTWRITEBYTECODE is set (container images often set it), every pytest worker compiled
    Berth and rewrote the asserts of every test module again (6 of a worker's 10 s of collection
    here), and every Python process the tests start (`berth serve`, the fork servers, pytest in
    a subprocess) compiled Berth again; written once to `__pycache__` (ignored by git), it is
    read by the next."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


if __name__ == "__main__":
    main()
