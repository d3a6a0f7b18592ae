"""The top entries of py-spy profiles of Berth's workers: each function's own time (samples in
which it was running) and total time (samples in which it was on the stack), in percent of the
samples of the workers' main threads (the event loop; threads waiting on a lock are left out).

    .venv/bin/python benchmarks/profile_top.py [--top 15] worker-1.txt worker-2.txt

Input: `py-spy record --format raw --function` files (collapsed stacks, one per line with its
sample count). See README.md, "Profiling a route".
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# A worker's main thread: uvicorn's workers are started by multiprocessing.
MAIN = "spawn_main"
_WHERE = re.compile(r"\s*\((?P<file>[^()]*?)(?::\d+)?\)$")


def _frame(raw: str) -> str:
    """`name (path/to/file.py:12)` as `name (file.py)`, the path from the package on."""
    found = _WHERE.search(raw)
    if found is None:
        return raw
    path = found["file"].split("site-packages/")[-1].split("/src/")[-1]
    return f"{raw[: found.start()]} ({path})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for path in args.files:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = [_frame(f) for f in stack.split(";")]
            if not any(f.startswith(MAIN) for f in frames):
                continue
            samples += int(count)
            own[frames[-1]] += int(count)
            for frame in set(frames):
                total[frame] += int(count)
    if not samples:
        raise SystemExit("no samples of a worker's main thread")
    print(f"{samples} samples of the workers' main threads")
    print("\nown %   function")
    for frame, count in own.most_common(args.top):
        print(f"{100 * count / samples:5.1f}   {frame}")
    print("\ntotal % function (the roots every sample has left out)")
    shown = [(f, c) for f, c in total.most_common() if c < samples]
    for frame, count in shown[: args.top]:
        print(f"{100 * count / samples:5.1f}   {frame}")


if __name__ == "__main__":
    main()
