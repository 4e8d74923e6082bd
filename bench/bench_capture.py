"""Benchmark of `loa-mem capture tool-result`, the hook Claude Code runs after every Bash call.

Times whole processes (the median of --runs runs) on the core benchmark's stores
(`bench.py: build_store`), with Claude Code's real hook input on stdin:

- a success with no open error of its command: the shortcut (`cli/fast_capture.py`) answers
  from `.git/loa-mem/open-errors.json` before typer, YAML or the store are imported;
- a failure captured (a new error memory and its commit), and the same failure again
  (occurrences counted on the entry, a commit);
- the success that fixes it (`fixed_at` recorded, a commit);

beside the floor: the interpreter starting and exiting.

    .venv/bin/python bench/bench_capture.py               # 1,000 and 10,000 entries
    .venv/bin/python bench/bench_capture.py --sizes 1000 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import LOA_MEM, NOW, build_store


def _hook(command: str, failed: bool, n: int = 0) -> str:
    if failed:
        return json.dumps({"session_id": "bench", "hook_event_name": "PostToolUseFailure",
                           "tool_name": "Bash", "tool_input": {"command": command},
                           "error": f"Exit code 1\nFAIL case {n}\nAssertionError: expected 2"})
    return json.dumps({"session_id": "bench", "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}})


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _time(argv: list[str], root: Path, stdin: str) -> tuple[float, float]:
    """Wall and CPU milliseconds of one process (CPU counts its children too: git)."""
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=env, input=stdin, capture_output=True, text=True,
                          check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr}")
    return elapsed, (_cpu() - cpu) * 1000


def _median(argv: list[str], root: Path, stdins: list[str]) -> tuple[float, float]:
    timed = [_time(argv, root, stdin) for stdin in stdins]
    return (statistics.median(w for w, _ in timed), statistics.median(c for _, c in timed))


def measure(root: Path, runs: int) -> list[tuple[str, tuple[float, float]]]:
    capture = [LOA_MEM, "capture", "tool-result", "--if-enabled"]
    rows = [("python -c pass (floor)", _median([sys.executable, "-c", "pass"], root,
                                               [""] * runs))]
    _time(capture, root, _hook("make warmup", True))  # open-errors.json exists from here on
    rows.append(("success, no open error (shortcut)",
                 _median(capture, root, [_hook(f"ls dir-{n}", False) for n in range(runs)])))
    rows.append(("failure captured (new error, commit)",
                 _median(capture, root, [_hook(f"pytest case_{n}", True, n)
                                         for n in range(runs)])))
    rows.append(("same failure again (occurrences, commit)",
                 _median(capture, root, [_hook("pytest case_0", True, 0)] * runs)))
    fixes = [_hook(f"pytest case_{n}", False) for n in range(1, runs)] or [_hook("x", False)]
    rows.append(("success that fixes an open error (commit)", _median(capture, root, fixes)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loa-mem-bench-capture-") as where:
        results = {size: measure(build_store(size, Path(where)), args.runs)
                   for size in args.sizes}
    names = [name for name, _ in results[args.sizes[0]]]
    header = ["capture tool-result (median)",
              *(f"{s:,}: {kind} ms" for s in args.sizes for kind in ("wall", "cpu"))]
    widths = [max(len(header[0]), *(len(n) for n in names)), *(len(h) for h in header[1:])]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row, name in enumerate(names):
        cells = [name, *(f"{value:.0f}" for s in args.sizes for value in results[s][row][1])]
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))


if __name__ == "__main__":
    main()
