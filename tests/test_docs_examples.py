"""The documentation's examples, run as written against a real `berth serve --demo`.

Every ```sh block of the README's "## Demo tour" section, and every ```sh block of
docs/reseller-guide.md, runs in order in one `bash -euo pipefail` per document. The only
change made to the text is the server's address (the line `BERTH=http://127.0.0.1:8000`) and
the webhook receiver's port (`HOOK_PORT=8765`), so the test can use free ports. Blocks fenced
with another language (```text, ```console) are not run."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from standardwebhooks.webhooks import Webhook as Signer

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "reseller-guide.md"
TOUR_HEADING = "## Demo tour"
BERTH_LINE = "BERTH=http://127.0.0.1:8000"
HOOK_PORT_LINE = "HOOK_PORT=8765"
PRIVATE_TARGETS_SERVE = "BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS=true python3 dev.py serve"
FIRST_COMMANDS = ("python3 dev.py serve", "python3 dev.py test")
# The one site outside the repository the documents may link to.
EXTERNAL_ALLOWED = ("https://docs.octo.travel",)
MARK = "@@docs-example-block "
RUN_SECONDS = 300


@dataclass(frozen=True)
class Block:
    language: str
    line: int  # of the opening fence, counted from 1
    code: str


def code_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = re.fullmatch(r"\s*```(\S*)\s*", lines[index])
        if not opening:
            index += 1
            continue
        start = index
        index += 1
        while index < len(lines) and not re.fullmatch(r"\s*```\s*", lines[index]):
            index += 1
        blocks.append(Block(opening.group(1), start + 1, "\n".join(lines[start + 1 : index])))
        index += 1
    return blocks


def section_lines(text: str, heading: str) -> range:
    """Line numbers (from 1) of a `## ` section: its heading up to the next heading of its level or above."""
    lines = text.splitlines()
    assert heading in lines, f"no section {heading!r}"
    start = lines.index(heading)
    level = len(heading) - len(heading.lstrip("#"))
    end = next(
        (number for number in range(start + 1, len(lines)) if re.match(f"#{{1,{level}}} ", lines[number])),
        len(lines),
    )
    return range(start + 1, end + 1)


def runnable(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    blocks = [block for block in code_blocks(text) if block.language == "sh"]
    if path == README:
        tour = section_lines(text, TOUR_HEADING)
        blocks = [block for block in blocks if block.line in tour]
    return blocks


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def demo_server(tmp_path: Path, extra: dict[str, str]) -> Iterator[str]:
    """`berth serve --demo` on a free port and a fresh SQLite file, as `python3 dev.py serve` runs it."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("BERTH_")}
    env.update(BERTH_DATABASE_URL=f"sqlite:///{tmp_path / 'berth.db'}", BERTH_LOG_LEVEL="WARNING", **extra)
    berth = Path(sys.executable).with_name("berth")
    process = subprocess.Popen(
        [str(berth), "serve", "--demo", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                output = process.stdout.read().decode() if process.stdout else ""
                raise AssertionError(f"berth serve --demo did not start:\n{output}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)


def run_examples(path: Path, base: str) -> None:
    blocks = runnable(path)
    assert blocks, f"{path.name} has no ```sh example to run"
    name = path.relative_to(ROOT)
    text = "\n".join(block.code for block in blocks)
    assert BERTH_LINE in text.splitlines(), f"{name}: the examples must start from the line {BERTH_LINE}"
    script = ["set -euo pipefail"]
    for number, block in enumerate(blocks):
        code = block.code.replace(BERTH_LINE, f"BERTH={base}")
        code = code.replace(HOOK_PORT_LINE, f"HOOK_PORT={free_port()}")
        script += [f"printf '\\n{MARK}{number}\\n'", code]  # on a line of its own after any output
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", "\n".join(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # so a receiver an example leaves behind is stopped with it
    )
    try:
        output, _ = process.communicate(timeout=RUN_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    if process.returncode == 0:
        return
    shown = output.decode(errors="replace")
    failed = 0
    for line in shown.splitlines():
        if line.startswith(MARK):
            failed = int(line.removeprefix(MARK))
    block = blocks[failed]
    after = shown.split(f"{MARK}{failed}\n", 1)[-1]
    pytest.fail(
        f"{name}: the example at line {block.line} failed (exit {process.returncode}):\n"
        f"{block.code}\n--- its output ---\n{after}",
        pytrace=False,
    )


needs_a_shell = pytest.mark.skipif(
    not (shutil.which("bash") and shutil.which("curl")), reason="the examples need bash and curl"
)


@needs_a_shell
def test_the_readme_demo_tour_runs_as_written(tmp_path: Path) -> None:
    with demo_server(tmp_path, {}) as base:
        run_examples(README, base)


@needs_a_shell
def test_the_reseller_guide_runs_as_written(tmp_path: Path) -> None:
    """Its webhook examples deliver to a receiver on this machine: the guide says to start the
    demo with private targets allowed, and the server here is started that way."""
    assert PRIVATE_TARGETS_SERVE in GUIDE.read_text(encoding="utf-8")
    with demo_server(tmp_path, {"BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"}) as base:
        run_examples(GUIDE, base)


def test_the_readme_starts_with_the_two_commands() -> None:
    """`.ci/run` and the project's contract start from these two lines."""
    first = code_blocks(README.read_text(encoding="utf-8"))[0]
    commands = tuple(line.split("#")[0].strip() for line in first.code.splitlines()[:2])
    assert commands == FIRST_COMMANDS


@pytest.mark.parametrize("path", [README, GUIDE], ids=["README", "reseller-guide"])
def test_every_curl_fails_on_an_http_error(path: Path) -> None:
    """An example whose request is refused must stop the run, not print an error body and go
    on: `curl -f` (e.g. `-fsS`), unless the example shows the status on purpose (`%{http_code}`)."""
    lenient = []
    for block in runnable(path):
        for command in block.code.replace("\\\n", " ").splitlines():
            for part in command.split("|"):
                if re.search(r"(^|[\s($])curl\s", part) and not (
                    re.search(r"\s-[a-zA-Z]*f[a-zA-Z]*\s|\s--fail\s", part + " ") or "%{http_code}" in part
                ):
                    lenient.append(part.strip())
    assert lenient == []


DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", DOCUMENTS, ids=[d.name for d in DOCUMENTS])
def test_links_and_named_files_stay_in_the_repository(path: Path) -> None:
    """Links resolve to files of this repository (relative to the document), and so do the files
    it names in backticks (relative to the repository's root): a clone has nothing else."""
    text = path.read_text(encoding="utf-8")
    named = [(target, path.parent) for target in re.findall(r"\]\(([^)\s]+)\)", text)]
    named += [(target, ROOT) for target in re.findall(r"`([\w.-]+/[\w./-]*\.(?:md|py|yaml|toml|txt))`", text)]
    broken = []
    for target, base in named:
        if target.startswith(("http://", "https://")):
            if not target.startswith(EXTERNAL_ALLOWED):
                broken.append(f"{target}: outside the repository")
            continue
        file, _, anchor = target.partition("#")
        resolved = (base / file).resolve() if file else path
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(resolved.read_text(encoding="utf-8")):
            broken.append(f"{target}: no such section")
    assert broken == []


def anchors(markdown: str) -> set[str]:
    """The fragments a Markdown renderer gives the headings (GitHub's rule)."""
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    }


def receiver_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "receive_webhooks", ROOT / "docs/examples/receive_webhooks.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_receiver_verifies_as_berth_signs() -> None:
    """The guide tells resellers to copy `verify`: it accepts what Berth's signer produces
    (either of two signatures while a secret rotates) and nothing else."""
    verify = receiver_example().verify
    secret, old = "whsec_c2VjcmV0LW9mLXRoZS1jb25uZWN0aW9u", "whsec_b2xkLXNlY3JldA=="
    body, now = b'{"event": "booking_update"}', datetime.now(UTC)

    def headers(*secrets: str, at: datetime = now) -> dict[str, str]:
        signatures = " ".join(Signer(s).sign("msg_1", at, body.decode()) for s in secrets)
        return {
            "webhook-id": "msg_1",
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": signatures,
        }

    assert verify(secret, headers(secret), body)
    assert verify(secret, headers(old, secret), body)
    assert not verify(secret, headers(old), body)
    assert not verify(secret, headers(secret), body + b" ")
    assert not verify(secret, headers(secret, at=now - timedelta(minutes=10)), body)
    assert not verify(secret, {**headers(secret), "webhook-id": "msg_2"}, body)
