"""scripts/audit_dependencies.py: a known vulnerability fails the build; an audit that could
not check everything says so and passes (unless --strict)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "audit_dependencies.py"


def judge(tmp_path: Path, report: dict[str, Any], *flags: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--report", str(path), *flags],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_known_vulnerability_fails(tmp_path: Path) -> None:
    report = {
        "dependencies": [
            {
                "name": "jinja2",
                "version": "2.10",
                "vulns": [{"id": "PYSEC-2019-217", "fix_versions": ["2.10.1"]}],
            },
            {"name": "fastapi", "version": "0.165.0", "vulns": []},
        ]
    }
    run = judge(tmp_path, report)
    assert run.returncode == 1
    assert "VULNERABLE jinja2 2.10: PYSEC-2019-217 (fixed in: 2.10.1)" in run.stdout
    assert "2 of 2 pinned packages audited, 1 vulnerable" in run.stdout


def test_an_incomplete_audit_is_reported_and_passes_unless_strict(tmp_path: Path) -> None:
    report = {
        "dependencies": [
            {"name": "fastapi", "version": "0.165.0", "vulns": []},
            {
                "name": "uvicorn",
                "skip_reason": "Dependency not found on PyPI and could not be audited: uvicorn",
            },
        ]
    }
    run = judge(tmp_path, report)
    assert run.returncode == 0
    assert "dependency audit INCOMPLETE: 1 package(s) could not be audited (uvicorn)" in run.stdout
    assert judge(tmp_path, report, "--strict").returncode == 1
    clean = judge(
        tmp_path, {"dependencies": [{"name": "fastapi", "version": "0.165.0", "vulns": []}]}, "--strict"
    )
    assert clean.returncode == 0 and "1 of 1 pinned packages audited, 0 vulnerable" in clean.stdout
