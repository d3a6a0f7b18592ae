"""wrk: installing it, composing its Lua script, running it and reading its results."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servers import BenchError

LUA_DIR = Path(__file__).resolve().parent / "lua"
RESULT_MARK = "BERTH_BENCH_RESULT "
# wrk's default is 2 s; a slow route must be measured slow, not dropped as timeouts.
REQUEST_TIMEOUT = "10s"


def ensure_wrk(say: Any) -> str:
    """Path of wrk, installed with apt-get first when it is missing."""
    found = shutil.which("wrk")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None:
        raise BenchError("wrk is not installed and apt-get is not available: install wrk and run again")
    prefix: list[str] = []
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if sudo is None:
            raise BenchError("wrk is not installed: run `sudo apt-get install -y wrk` and run again")
        prefix = [sudo, "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    say("wrk not found: installing it with apt-get (apt-get update, apt-get install -y wrk)")
    for command in ([apt, "update"], [apt, "install", "-y", "wrk"]):
        done = subprocess.run([*prefix, *command], env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BenchError(
                f"could not install wrk: `{' '.join(command)}` failed (exit {done.returncode}):\n{tail}\n"
                "Install wrk yourself (apt-get install wrk) and run again."
            )
    found = shutil.which("wrk")
    if found is None:
        raise BenchError("apt-get installed wrk but it is not on PATH")
    return found


def wrk_version(wrk: str) -> str:
    done = subprocess.run([wrk, "-v"], capture_output=True, text=True, check=False)
    first = (done.stdout + done.stderr).strip().splitlines()
    return first[0].split(" Copyright")[0].strip() if first else "unknown"


def compose_script(route_script: Path | None, target: Path) -> Path:
    """lib.lua + the route's script + report.lua, as one file for `wrk -s`."""
    parts = [LUA_DIR / "lib.lua", *([route_script] if route_script else []), LUA_DIR / "report.lua"]
    text = "".join(f"-- {part.name}\n{part.read_text()}\n" for part in parts)
    target.write_text(text)
    return target


@dataclass
class WrkResult:
    requests: int
    duration_s: float
    requests_per_s: float
    latency_ms: dict[str, float]
    non_2xx: int  # wrk's count of answers with status >= 400
    socket_errors: dict[str, int]
    statuses: dict[str, int] = field(default_factory=dict)  # when the script counted them
    collected: list[str] = field(default_factory=list)

    @property
    def socket_error_count(self) -> int:
        return sum(self.socket_errors.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "duration_s": round(self.duration_s, 3),
            "requests_per_s": round(self.requests_per_s, 1),
            "latency_ms": {key: round(value, 3) for key, value in self.latency_ms.items()},
            "non_2xx": self.non_2xx,
            "socket_errors": self.socket_errors,
            "statuses": self.statuses,
            "collected": len(self.collected),
        }


def parse_result(stdout: str, collect_file: Path | None) -> WrkResult:
    line = next((line for line in stdout.splitlines() if line.startswith(RESULT_MARK)), None)
    if line is None:
        raise ValueError("wrk printed no result line")
    data = json.loads(line[len(RESULT_MARK) :])
    duration_s = float(data["duration_us"]) / 1e6
    requests = int(data["requests"])
    errors = {key: int(value) for key, value in data["errors"].items()}
    collected: list[str] = []
    if collect_file is not None and collect_file.exists():
        collected = collect_file.read_text().split()
    return WrkResult(
        requests=requests,
        duration_s=duration_s,
        requests_per_s=requests / duration_s if duration_s > 0 else 0.0,
        latency_ms={key: float(value) / 1000 for key, value in data["latency_us"].items()},
        non_2xx=errors.pop("status", 0),
        socket_errors=errors,
        statuses={key: int(value) for key, value in (data.get("statuses") or {}).items()},
        collected=collected,
    )


def _forget(path: Path | None) -> None:
    if path is not None:
        path.unlink(missing_ok=True)


async def run_wrk(
    wrk: str,
    url: str,
    *,
    script: Path,
    headers: Mapping[str, str],
    duration: int,
    connections: int,
    threads: int,
    env: Mapping[str, str],
    collect_file: Path | None = None,
) -> WrkResult:
    argv = [
        wrk,
        f"--threads={threads}",
        f"--connections={connections}",
        f"--duration={duration}s",
        f"--timeout={REQUEST_TIMEOUT}",
        f"--script={script}",
    ]
    for name, value in headers.items():
        argv += ["--header", f"{name}: {value}"]
    argv.append(url)
    _forget(collect_file)
    process = await asyncio.create_subprocess_exec(
        *argv,
        env={
            **os.environ,
            **env,
            **({"BERTH_BENCH_COLLECT_FILE": str(collect_file)} if collect_file else {}),
        },
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout=duration + 60)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(process.wait(), timeout=5)
        raise
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace").strip()
    try:
        if process.returncode != 0 or stderr:
            raise ValueError(f"exit {process.returncode}")
        return parse_result(stdout, collect_file)
    except (ValueError, KeyError, TypeError) as exc:
        raise BenchError(
            f"wrk failed on {url} ({exc}).\ncommand: {' '.join(argv)}\nstdout:\n{stdout.strip()}\n"
            f"stderr:\n{stderr}"
        ) from None
