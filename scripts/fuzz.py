#!/usr/bin/env python3
"""A longer fuzz run than CI's: schemathesis against Berth's OpenAPI, in process, with random
seeds, on SQLite (default) or PostgreSQL.

    .venv/bin/python scripts/fuzz.py [--examples 200] [--steps 300] [--postgres URL] [pytest args]

It runs tests/test_fuzz.py with BERTH_FUZZ_EXAMPLES / BERTH_FUZZ_STEPS raised, the coverage
phase on and BERTH_FUZZ_RANDOM=1 (a new seed each run, so repeated runs explore further). A
failure prints the request as a curl command to reproduce it. Stop it with Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=200, help="generated cases per operation (CI: 8)")
    parser.add_argument("--steps", type=int, default=300, help="stateful scenarios (CI: 25)")
    parser.add_argument(
        "--postgres", metavar="URL", help="run on PostgreSQL, e.g. postgresql://postgres@127.0.0.1:5432/test"
    )
    args, rest = parser.parse_known_args()
    env = {
        **os.environ,
        "BERTH_FUZZ_EXAMPLES": str(args.examples),
        "BERTH_FUZZ_STEPS": str(args.steps),
        "BERTH_FUZZ_COVERAGE": "1",
        "BERTH_FUZZ_RANDOM": "1",
    }
    env.pop("BERTH_TEST_POSTGRES_URL", None)
    if args.postgres:
        env["BERTH_TEST_POSTGRES_URL"] = args.postgres
    command = [sys.executable, "-m", "pytest", "tests/test_fuzz.py", "-p", "no:cacheprovider", "-q", *rest]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
