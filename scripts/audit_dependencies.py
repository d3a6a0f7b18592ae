#!/usr/bin/env python3
"""Audit the pinned dependencies (constraints.txt) for known vulnerabilities with pip-audit.

    .venv/bin/python scripts/audit_dependencies.py [--strict] [--report FILE]

`--report FILE` judges an existing `pip-audit --format json` report instead of running it.

Exit status: 1 when a vulnerability is known for a pinned version. When the vulnerability
service cannot be reached, or cannot tell about some packages (a mirror that does not serve
per-version data answers "not found"), the audit is incomplete: that is reported plainly and,
unless --strict, does not fail the build (the packages were not shown to be safe, nor unsafe).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def main() -> int:
    args = sys.argv[1:]
    strict = "--strict" in args
    if "--report" in args:
        return judge(json.loads(Path(args[args.index("--report") + 1]).read_text()), strict)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "audit.json"
        command = [
            str(BIN / "pip-audit"), "--requirement", str(ROOT / "constraints.txt"), "--no-deps",
            "--disable-pip", "--progress-spinner", "off", "--format", "json", "--output", str(report),
            "--timeout", "20",
        ]  # fmt: skip
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return incomplete("pip-audit did not finish within 10 minutes", strict)
        data = json.loads(report.read_text()) if report.exists() and report.stat().st_size else None
    if data is None:
        reason = (run.stderr.strip().splitlines() or ["no output"])[-1]
        return incomplete(f"pip-audit could not run ({reason})", strict)
    return judge(data, strict)


def judge(data: dict[str, Any], strict: bool) -> int:
    dependencies = data.get("dependencies", [])
    vulnerable = [d for d in dependencies if d.get("vulns")]
    skipped = [d for d in dependencies if d.get("skip_reason")]
    audited = len(dependencies) - len(skipped)
    for dependency in vulnerable:
        for vuln in dependency["vulns"]:
            fixes = ", ".join(vuln.get("fix_versions") or []) or "no fixed version yet"
            print(
                f"VULNERABLE {dependency['name']} {dependency['version']}: {vuln['id']} (fixed in: {fixes})"
            )
    print(
        f"dependency audit: {audited} of {len(dependencies)} pinned packages audited, {len(vulnerable)} vulnerable"
    )
    if vulnerable:
        return 1
    if skipped:
        names = ", ".join(d["name"] for d in skipped[:8]) + (" …" if len(skipped) > 8 else "")
        return incomplete(
            f"{len(skipped)} package(s) could not be audited ({names}): {skipped[0]['skip_reason']}", strict
        )
    return 0


def incomplete(reason: str, strict: bool) -> int:
    print(f"dependency audit INCOMPLETE: {reason}")
    print("  the vulnerability service (PyPI's JSON API) was unreachable or had no data for these versions;")
    print("  nothing is known to be vulnerable, but the packages above were not checked.")
    return 1 if strict else 0


if __name__ == "__main__":
    sys.exit(main())
