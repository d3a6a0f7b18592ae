"""A fork server for the tests' `berth` commands: imports the command once, then forks one child
per command (tests/berth_process.py starts it and talks to it).

Run as `python tests/berth_zygote.py CONTROL_FD BERTH_SCRIPT`, never imported by the tests: the process is
kept to the standard library and Berth's own import, with no thread, event loop or database
connection, so that forking it is safe and each child starts as a fresh `berth` process would
once its imports are done. Each child then takes the environment, working directory, argv and
standard streams of its request, runs the `berth` console script's entry point and exits the
way the interpreter does (atexit handlers, non-daemon threads, the exit status of SystemExit)
but for the teardown of its modules.

What the import read of the environment and of the working directory is recorded and sent to
the parent, which forks only requests that agree with it (the rest run as fresh processes).

The protocol, over the SOCK_SEQPACKET socket CONTROL_FD:
- the zygote sends one JSON message when ready: {"reads": {NAME: value or null}, "cwd": ...,
  "cwd_read": bool};
- each request is one JSON message {"argv", "env", "cwd"} carrying three file descriptors: the
  parent's end of a reply socket, and the child's stdout and stderr;
- on the reply socket the zygote writes the exit status (as subprocess reports it, negative for a
  signal) once the child has ended; anything the parent writes there first kills the child.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, NoReturn

COMMAND = "berth"  # the console script, as pyproject.toml names it
PRELOADED = "berth.cli"  # what its entry point imports when it runs: loaded once, here


@dataclass
class Request:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdout: int
    stderr: int


class _Recorder:
    """Records what is read of os.environ and of the working directory until `stop`."""

    def __init__(self) -> None:
        self.reads: dict[str, str | None] = {}
        self.cwd_read = False
        self._getitem = os._Environ.__getitem__
        self._getcwd = os.getcwd
        reads, getitem, getcwd = self.reads, self._getitem, self._getcwd

        def recorded_getitem(environ: Any, key: str) -> str:
            try:
                value: str = getitem(environ, key)
            except KeyError:
                reads.setdefault(key, None)
                raise
            reads.setdefault(key, value)
            return value

        def recorded_getcwd() -> str:
            self.cwd_read = True
            return getcwd()

        os._Environ.__getitem__ = recorded_getitem  # type: ignore[method-assign, assignment]
        os.getcwd = recorded_getcwd

    def stop(self) -> None:
        os._Environ.__getitem__ = self._getitem  # type: ignore[method-assign]
        os.getcwd = self._getcwd


def prepare() -> tuple[Callable[[], Any], dict[str, Any]]:
    """Import the command as its console script would, recording what the import read."""
    recorder = _Recorder()
    try:
        (script,) = entry_points(group="console_scripts", name=COMMAND)
        entry = script.load()
        importlib.import_module(PRELOADED)
    finally:
        recorder.stop()
    import asyncio

    if threading.active_count() != 1:
        raise RuntimeError(f"importing {PRELOADED} started threads: {threading.enumerate()}")
    if asyncio.get_event_loop_policy()._local._loop is not None:  # type: ignore[attr-defined]
        raise RuntimeError(f"importing {PRELOADED} made an event loop")
    ready = {"reads": recorder.reads, "cwd": os.getcwd(), "cwd_read": recorder.cwd_read}
    return entry, ready


def serve(control: socket.socket) -> Request | None:
    """Answer requests until the parent closes `control`: None here, a Request in each child."""
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    running: dict[int, tuple[int, socket.socket]] = {}  # pid -> (pidfd, reply socket)
    while True:
        for key, _ in selector.select():
            if key.data == "control":
                message, fds, _, _ = socket.recv_fds(control, 1 << 20, 3)
                if not message:
                    return None
                reply_fd, stdout, stderr = fds
                reply = socket.socket(fileno=reply_fd)
                asked = json.loads(message)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    for fd, _sock in running.values():
                        os.close(fd)
                    for other in [reply, *(sock for _fd, sock in running.values())]:
                        other.close()
                    selector.close()
                    control.close()
                    return Request(asked["argv"], asked["env"], asked["cwd"], stdout, stderr)
                os.close(stdout)
                os.close(stderr)
                pidfd = os.pidfd_open(pid)
                running[pid] = (pidfd, reply)
                selector.register(pidfd, selectors.EVENT_READ, ("ended", pid))
                selector.register(reply, selectors.EVENT_READ, ("kill", pid))
            elif key.data[0] == "kill" and key.data[1] in running:  # the parent gave up or went away
                pidfd, reply = running[key.data[1]]
                selector.unregister(reply)
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            elif key.data[1] in running:  # the child ended
                pid = key.data[1]
                pidfd, reply = running.pop(pid)
                selector.unregister(pidfd)
                os.close(pidfd)
                if reply.fileno() in selector.get_map():
                    selector.unregister(reply)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):  # the parent went away
                    reply.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                reply.close()


def exit_status(exc: SystemExit) -> int:
    """The exit status of a process ended by `exc`, as the interpreter makes it."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def execute(request: Request, entry: Callable[[], Any]) -> NoReturn:
    """Become the command: its streams, directory, environment and argv, then its entry point
    as the console script calls it (`sys.exit(main())`), then the exit as the interpreter does
    it: an uncaught exception's traceback, non-daemon threads joined, atexit handlers run,
    streams flushed. Only the teardown of the modules is left out (0.3 s a command here):
    Berth's commands close what they open before they return."""
    stdin = os.open(os.devnull, os.O_RDONLY)
    for fd, target in ((stdin, 0), (request.stdout, 1), (request.stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    sys.argv = list(request.argv)
    try:
        sys.exit(entry())
    except SystemExit as exc:
        status = exit_status(exc)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = 120  # as the interpreter does when it cannot flush
    os._exit(status)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    sys.path[0] = os.path.dirname(os.path.realpath(sys.argv[2]))  # as the console script has it
    sys.argv = sys.argv[:1]
    try:
        entry, ready = prepare()
    except BaseException:
        control.send(json.dumps({"error": traceback.format_exc()}).encode())
        raise
    control.send(json.dumps(ready).encode())
    request = serve(control)
    if request is not None:
        execute(request, entry)


if __name__ == "__main__":
    main()
