"""Server processes under test (Berth, the baseline) and the fresh databases Berth runs on."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import asyncpg
import httpx
from sqlalchemy.engine import make_url


class BenchError(Exception):
    """A problem that stops the run, with a message meant for the person running it."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _parent_pid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: parse after it.
    return int(stat.rpartition(")")[2].split()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def cpu_seconds(pids: Sequence[int]) -> float:
    """CPU time (user and system) the processes have used so far, in seconds (0 for one gone)."""
    ticks = 0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # utime and stime: fields 14 and 15
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float | None:
    """Resident set size of a process in MB (VmRSS), or None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


class ServerProcess:
    """A server started in its own process group, so stopping it stops all of its workers."""

    def __init__(
        self, name: str, argv: Sequence[str], env: Mapping[str, str], port: int, log_path: Path
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = dict(env)
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        if self.process is None:
            raise BenchError(f"{self.name} was not started")
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def ensure_alive(self) -> None:
        if not self.alive():
            raise BenchError(f"{self.name} exited unexpectedly. Last lines of its log:\n{self.log_tail()}")

    async def wait_healthy(self, path: str, within: float = 90.0) -> None:
        deadline = time.monotonic() + within
        async with httpx.AsyncClient(base_url=self.base_url, timeout=2.0) as client:
            while True:
                self.ensure_alive()
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(path)).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise BenchError(
                        f"{self.name} did not answer {path} with 200 within {within:.0f} s. "
                        f"Last lines of its log:\n{self.log_tail()}"
                    )
                await asyncio.sleep(0.2)

    def worker_pids(self) -> list[int]:
        """The uvicorn worker processes: children spawned by multiprocessing (not its
        resource tracker, nor the localstripe `berth serve --demo` starts without Stripe keys);
        with a single worker, uvicorn serves in the process itself."""
        if not self.alive():
            return []
        workers = []
        for entry in Path("/proc").iterdir():
            pid = int(entry.name) if entry.name.isdigit() else None
            if pid is not None and _parent_pid(pid) == self.pid and "spawn_main" in _cmdline(pid):
                workers.append(pid)
        return sorted(workers) or [self.pid]

    def worker_rss_mb(self) -> dict[int, float]:
        sizes = {pid: rss_mb(pid) for pid in self.worker_pids()}
        return {pid: size for pid, size in sizes.items() if size is not None}

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to the whole process group, SIGKILL whatever is left after `timeout`."""
        if self.process is None:
            return
        group = self.process.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=timeout)
        deadline = time.monotonic() + 5
        while _group_alive(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- databases ---------------------------------------------------------------------------


def postgres_admin_dsn(url: str) -> str:
    """The server URL as asyncpg takes it (accepts `postgresql+asyncpg://` too)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def redact(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


@contextlib.asynccontextmanager
async def sqlite_database(workdir: Path, name: str = "berth.db") -> AsyncIterator[str]:
    path = workdir / name
    yield f"sqlite+aiosqlite:///{path}"


@contextlib.asynccontextmanager
async def postgres_database(server_url: str) -> AsyncIterator[str]:
    """Create `berth_bench_<random>` on the server, yield its URL, drop it afterwards."""
    admin_dsn = postgres_admin_dsn(server_url)
    name = f"berth_bench_{uuid.uuid4().hex[:12]}"
    try:
        connection = await asyncpg.connect(admin_dsn, timeout=10)
    except (OSError, asyncpg.PostgresError) as exc:
        raise BenchError(f"cannot connect to PostgreSQL at {redact(server_url)}: {exc}") from None
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    try:
        yield make_url(admin_dsn).set(database=name).render_as_string(hide_password=False)
    finally:
        await asyncio.shield(_drop_database(admin_dsn, name))


async def _drop_database(admin_dsn: str, name: str) -> None:
    connection = await asyncpg.connect(admin_dsn, timeout=10)
    try:
        await connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
        )
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
    finally:
        await connection.close()


async def postgres_version(server_url: str) -> str | None:
    try:
        connection = await asyncpg.connect(postgres_admin_dsn(server_url), timeout=10)
    except (OSError, asyncpg.PostgresError):
        return None
    try:
        return str(await connection.fetchval("SHOW server_version"))
    finally:
        await connection.close()
