"""The real `berth` command as a separate process, and `berth serve` on a real loopback port.

A `berth` command is a process of its own: its argv, environment, working directory, standard
streams, exit status and database connections. Most are forked from a fork server (a zygote,
tests/berth_zygote.py) that one pytest process starts on first use and that has imported the
command once, which saves each command the 1.5-3 s of importing Berth. A command whose
environment or working directory differs from the zygote's in what the import read runs as a
fresh process, as does any with `fresh=True` (what a fresh interpreter does at start is what the
test checks) and every command where the zygote cannot be used (BERTH_TEST_FORK=0, or no
`os.pidfd_open`, i.e. not Linux)."""

from __future__ import annotations

import atexit
import fcntl
import io
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx

BERTH = Path(sys.executable).with_name("berth")
PORTS = range(8300, 8400)  # the range these tests may serve on
ZYGOTE = Path(__file__).with_name("berth_zygote.py")

# Read by the interpreter or the C library as a process starts, before any import: a forked
# child keeps the zygote's, so a command given others runs fresh.
STARTUP_NAMES = ("TZ", "LANG", "LANGUAGE")
STARTUP_PREFIXES = ("LC_", "PYTHON")
# Read at import by Rich's consoles (berth.cli makes two) but only kept when set: the zygote
# starts without them, and unset there they are read again at each print, from the command's
# environment.
READ_AGAIN = ("COLUMNS", "LINES")


def _startup(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in STARTUP_NAMES or k.startswith(STARTUP_PREFIXES)}


def _text(file: IO[bytes]) -> str:
    """What `file` holds, decoded as subprocess.run(text=True) decodes a child's output."""
    file.seek(0)
    return io.TextIOWrapper(io.BytesIO(file.read())).read()


class ForkServer:
    """The zygote of one pytest process and its control socket."""

    def __init__(self) -> None:
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_") and k not in READ_AGAIN}
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (the zygote's stderr while it runs)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, str(ZYGOTE), str(theirs.fileno()), str(BERTH)],
                env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
                pass_fds=[theirs.fileno()],
            )  # fmt: skip
        self._control = mine
        mine.settimeout(120)
        ready = json.loads(mine.recv(1 << 20) or b"{}")
        if "reads" not in ready:
            self._log.seek(0)
            raise RuntimeError(
                f"the berth fork server did not start: {ready.get('error')}\n{self._log.read().decode()}"
            )
        self.reads: dict[str, str | None] = ready["reads"]
        self.cwd: str | None = ready["cwd"] if ready["cwd_read"] else None

    def forks(self, env: Mapping[str, str], cwd: str) -> bool:
        """Whether a command in `env` and `cwd` would import as the zygote did."""
        if self.cwd is not None and cwd != self.cwd:
            return False
        for name, value in self.reads.items():
            if env.get(name) != value and not (name in READ_AGAIN and value is None):
                return False
        return _startup(env) == _startup(self.env)

    def run(
        self, argv: list[str], env: Mapping[str, str], cwd: str, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        request = json.dumps({"argv": argv, "env": dict(env), "cwd": cwd}).encode()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            mine, theirs = socket.socketpair()
            with mine:
                with theirs:
                    socket.send_fds(self._control, [request], [theirs.fileno(), out.fileno(), err.fileno()])
                mine.settimeout(timeout)
                try:
                    status = self._status(mine)
                except TimeoutError:  # as subprocess.run: kill, wait, raise with what was written
                    mine.settimeout(60)
                    mine.sendall(b"kill")
                    self._status(mine)
                    out.seek(0)
                    err.seek(0)
                    raise subprocess.TimeoutExpired(argv, timeout, out.read(), err.read()) from None
            return subprocess.CompletedProcess(argv, status, _text(out), _text(err))

    def _status(self, reply: socket.socket) -> int:
        said = b""
        while not said.endswith(b"\n"):
            chunk = reply.recv(64)
            if not chunk:
                raise RuntimeError(f"the berth fork server ended (status {self._process.poll()})")
            said += chunk
        return int(said)

    def close(self) -> None:
        self._control.close()  # the zygote ends when it reads the end of its control socket
        self._process.wait(timeout=30)
        self._log.close()


_server: ForkServer | None = None
_server_lock = threading.Lock()


def forking() -> bool:
    """Whether commands are forked from a fork server here."""
    return os.environ.get("BERTH_TEST_FORK") != "0" and hasattr(os, "pidfd_open")


def fork_server() -> ForkServer | None:
    """This pytest process's fork server, started on first use; None where there is none."""
    global _server
    if not forking():
        return None
    with _server_lock:
        if _server is None:
            _server = ForkServer()
            atexit.register(_server.close)
        return _server


def run_berth(
    args: list[str] | tuple[str, ...], env: Mapping[str, str], *, timeout: float = 60, fresh: bool = False
) -> subprocess.CompletedProcess[str]:
    """`berth ARGS` as a process of its own in exactly `env`, in this process's working
    directory, with no input; its output is captured, never a terminal. Forked from the fork
    server unless `fresh` or the command would not import as the zygote did."""
    argv = [str(BERTH), *args]
    cwd = os.getcwd()
    server = None if fresh else fork_server()
    if server is not None and server.forks(env, cwd):
        return server.run(argv, env, cwd, timeout)
    return subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False
    )


def berth_environment(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `berth` process: this one's, with no admin token unless `extra`
    sets one."""
    env = {**os.environ, "BERTH_DATABASE_URL": database_url, "BERTH_LOG_LEVEL": "WARNING"}
    env.pop("BERTH_ADMIN_TOKEN", None)
    return {**env, **extra}


def berth(
    *args: str, database_url: str, timeout: float = 60, fresh: bool = False, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """Run `berth ARGS` against `database_url` (see `run_berth`)."""
    return run_berth(args, berth_environment(database_url, **extra_env), timeout=timeout, fresh=fresh)


PORT_LOCKS = Path(tempfile.gettempdir()) / "berth-test-ports"


@contextmanager
def reserved_port() -> Iterator[int]:
    """A port of PORTS that no other test process of this machine holds until the block ends.

    Binding a port and letting it go says it was free a moment ago, not that another pytest
    worker will not pick it before this one's server binds it: each reservation holds an
    exclusive lock on a file named after the port, so two workers never serve on one port."""
    PORT_LOCKS.mkdir(exist_ok=True)
    for port in random.sample(PORTS, len(PORTS)):
        with (PORT_LOCKS / f"{port}.lock").open("a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            yield port
            return
    raise AssertionError(f"no free port in {PORTS}")


def free_port() -> int:
    """A port of PORTS where nothing listens now (for commands told to reach nothing)."""
    with reserved_port() as port:
        return port


@contextmanager
def berth_serve(database_url: str, *args: str, log: Path | None = None, **extra_env: str) -> Iterator[str]:
    """`berth serve ARGS` on a free port of PORTS until the block ends, with these extra
    `BERTH_*` settings; yields the base URL. Its output goes to `log` when given (a server
    that logs much would fill a pipe nobody reads)."""
    with reserved_port() as port:
        yield from _serve(port, database_url, args, log, extra_env)


def _serve(
    port: int, database_url: str, args: tuple[str, ...], log: Path | None, extra_env: dict[str, str]
) -> Iterator[str]:
    base = f"http://127.0.0.1:{port}"
    log_file = log.open("wb") if log is not None else None
    process = subprocess.Popen(
        [str(BERTH), "serve", "--port", str(port), *args],
        env=berth_environment(database_url, BERTH_PUBLIC_URL=base, **extra_env),
        stdout=log_file or subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.terminate()  # before reading: a server still running never ends its output
                said = process.communicate(timeout=15)[0] if process.stdout else b""
                raise AssertionError(f"berth serve did not start:\n{said.decode()}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)
        if log_file is not None:
            log_file.close()
