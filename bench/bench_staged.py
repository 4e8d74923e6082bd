"""Benchmark of `validate --staged`, what the pre-commit hook runs before every commit.

Two paths: when the working tree is what is staged, the files are checked in place (as plain
`validate` does); when something is unstaged or untracked, the staged files are checked out
into a temporary repository whose index is built from scratch. Also timed: a whole
`git commit` with the hook installed, against one without. Prints median wall times.

    .venv/bin/python bench/bench_staged.py                  # 1,000 and 10,000 entries
    .venv/bin/python bench/bench_staged.py --sizes 1000 --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import LOA_MEM, NOW, ROOT, build_store, timed


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _median(runs: int, command: list[str], root: Path, env: dict[str, str]) -> float:
    return statistics.median(timed(command, root, env) for _ in range(runs))


def _commits(runs: int, root: Path, env: dict[str, str]) -> float:
    """A commit of one staged note file (not a memory file), median over `runs`."""
    times = []
    for n in range(runs):
        (root / "notes.md").write_text(f"note {n}\n", encoding="utf-8")
        _git(root, "add", "notes.md")
        times.append(timed(["git", "commit", "-qm", f"note {n}"], root, env))
    return statistics.median(times)


def measure(size: int, root: Path, runs: int) -> list[tuple[str, float]]:
    env = {**os.environ, "LOA_MEM_NOW": NOW,
           "PATH": f"{Path(LOA_MEM).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    timed([LOA_MEM, "validate"], root, env)  # builds the index once
    rows = [("validate", _median(runs, [LOA_MEM, "validate"], root, env)),
            ("validate --staged (tree = index)",
             _median(runs, [LOA_MEM, "validate", "--staged"], root, env))]
    (root / "scratch.txt").write_text("untracked: the staged files are copied\n", "utf-8")
    rows.append(("validate --staged (temporary copy)",
                 _median(runs, [LOA_MEM, "validate", "--staged"], root, env)))
    (root / "scratch.txt").unlink()
    rows.append(("git commit, no hook", _commits(runs, root, env)))
    timed([LOA_MEM, "hooks", "install", "--git"], root, env)
    rows.append(("git commit, pre-commit hook", _commits(runs, root, env)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "loa_mem")], check=True,
                   capture_output=True)
    where = Path(tempfile.mkdtemp(prefix="loa-mem-bench-staged-"))
    print(f"{'operation':38} {'entries':>8} {'median ms':>10}")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            root = build_store(size, where)
            for operation, ms in measure(size, root, args.runs):
                print(f"{operation:38} {size:>8} {ms:>10.0f}", flush=True)
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
