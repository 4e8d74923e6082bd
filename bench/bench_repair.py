"""Benchmark of `loa-mem summarize --repair`: a repository of N working-tree files and S summaries,
each of two sources, where a tenth of the summaries lost a source to a move (found again by
content) and a tenth to a deletion (the link removed), as whole processes (the venv's own
`loa-mem`), median wall time.

The repository is built once and committed; each timed run starts from a fresh copy of it
(copying is not timed), so every run does the same work.

    .venv/bin/python bench/bench_repair.py             # 5 runs, 2,000 files, 200 summaries
    .venv/bin/python bench/bench_repair.py --runs 9 --files 5000 --summaries 500
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOA_MEM = str(Path(sys.executable).with_name("loa-mem"))
NOW = "2026-11-22T12:00:00Z"
SUMMARIES = "grimoires/loa/summaries"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "LOA_MEM_NOW": NOW, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def _summary(rel: str, sources: list[str]) -> str:
    listed = "".join(f'  - "{s}"\n' for s in sources)
    links = "".join(f"- [{s.rsplit('/', 1)[-1]}]({os.path.relpath(s, os.path.dirname(rel))})\n"
                    for s in sources)
    return (f'---\nsummary_of:\n{listed}created: "{NOW}"\nstyle: bullet\nmethod: model\n'
            f"---\n\n## Summary\n\n- said\n\n---\nReferences:\n{links}")


def build(root: Path, files: int, summaries: int, env: dict[str, str]) -> None:
    root.mkdir()
    _git(root, "init", "-q")
    subprocess.run([LOA_MEM, "init"], cwd=root, env=env, check=True, capture_output=True)
    (root / SUMMARIES).mkdir(parents=True, exist_ok=True)
    for n in range(files):
        path = root / f"src/d{n % 40}/f{n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {n}\n" * 20, encoding="utf-8")
    for n in range(summaries):
        rel = f"{SUMMARIES}/s{n}.md"
        second = n + summaries  # each summary has two sources: a dead one goes, the other stays
        (root / rel).write_text(_summary(rel, [f"src/d{n % 40}/f{n}.txt",
                                               f"src/d{second % 40}/f{second}.txt"]),
                                encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "build")
    (root / "moved").mkdir()
    for n in range(0, summaries, 10):  # moved: found again by content
        _git(root, "mv", f"src/d{n % 40}/f{n}.txt", f"moved/g{n}.txt")
    for n in range(5, summaries, 10):  # deleted: the link is removed
        _git(root, "rm", "-q", f"src/d{n % 40}/f{n}.txt")
    _git(root, "commit", "-qm", "move and delete")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--summaries", type=int, default=200)
    args = parser.parse_args()
    if args.files < 2 * args.summaries:
        parser.error("--files must be at least twice --summaries (two sources per summary)")
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(Path(tmp))
        base = Path(tmp) / "base"
        build(base, args.files, args.summaries, env)
        times, counts = [], {}
        for run in range(args.runs):
            copy = Path(tmp) / f"run{run}"
            shutil.copytree(base, copy, symlinks=True)
            start = time.perf_counter()
            out = subprocess.run([LOA_MEM, "summarize", "--repair", "--json"], cwd=copy,
                                 env=env, check=True, capture_output=True, text=True).stdout
            times.append((time.perf_counter() - start) * 1000)
            counts = {}
            for repair in json.loads(out)["repairs"]:
                counts[repair["action"]] = counts.get(repair["action"], 0) + 1
            shutil.rmtree(copy)
    size = f"{args.files} files, {args.summaries} summaries"
    print(f"{'operation':20} {'size':>28} {'median ms':>10} {'min ms':>8}  repairs")
    print(f"{'summarize --repair':20} {size:>28} {statistics.median(times):>10.0f} "
          f"{min(times):>8.0f}  {counts}")


if __name__ == "__main__":
    main()
