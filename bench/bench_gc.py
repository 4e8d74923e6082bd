"""Benchmark of `loa-mem gc` (issue 3): a working set of 1,000 files over a store of 10,000
entries, as whole processes (the venv's own `loa-mem`), median wall time beside the target.

The store is built once: grimoire YAML, 1,000 working-tree files with their sidecars, hot.yml
and cold.yml are generated as text and committed in one commit, and the index is warmed. Each
timed run starts from a fresh copy of that store (copying is not timed), so every run does the
same work: of the 1,000 files, 200 are on the cold list (100 evicted, 50 summarized, 30
archived, 20 compressed) and 200 hot files are untouched for 10 turns; of the 10,000 entries,
500 are expired and 250 superseded.

    .venv/bin/python bench/bench_gc.py             # 5 runs
    .venv/bin/python bench/bench_gc.py --runs 9 --files 1000 --entries 10000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOA_MEM = str(Path(sys.executable).with_name("loa-mem"))
NOW = "2026-11-22T12:00:00Z"
TARGET_MS = 3000
PLURALS = [("fact", "facts", 0.85), ("decision", "decisions", 0.95), ("learning", "learnings", 0.8),
           ("error", "errors", 0.7), ("preference", "preferences", 0.6)]
COLD_ACTIONS = (["delete_from_working_set"] * 100 + ["summarize_then_evict"] * 50
                + ["archive"] * 30 + ["compress"] * 20)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _entry(n: int, category: str, confidence: float, rng: random.Random, expired: bool,
           superseded_by: str | None, supersedes: str | None = None) -> str:
    words = " ".join(rng.choice(("cache", "parser", "deploy", "index", "token", "budget", "lock",
                                 "merge", "hook", "schema")) for _ in range(16))
    stamp = "2026-01-05T10:00:00Z" if expired else "2026-10-05T10:00:00Z"
    ttl, expires = ("30d", "2026-02-04T10:00:00Z") if expired else ("permanent", "null")
    link = f"  superseded_by: {superseded_by}\n" if superseded_by else ""
    link += f"  supersedes: {supersedes}\n" if supersedes else ""
    return (f"- id: MEM-20261005-{n:05d}\n  category: {category}\n  content: Entry {n} about "
            f"{words}.\n  summary: Entry {n} about {words[:50]}\n  confidence: {confidence}\n"
            f"  source:\n    session_id: bench\n    timestamp: {stamp}\n  ttl: {ttl}\n"
            f"  expires_at: {expires}\n  tags: [bench]\n{link}")


def _entries(root: Path, count: int) -> None:
    rng = random.Random(count)
    chunks: dict[str, list[str]] = {plural: [] for _, plural, _ in PLURALS}
    for n in range(1, count + 1):
        category, plural, confidence = PLURALS[n % len(PLURALS)]
        expired = category == "error" and n % 4 == 0            # 500 of 10,000
        superseded = category == "fact" and n % 8 == 0 and n + 5 <= count  # 249 of 10,000
        successor = f"MEM-20261005-{n + 5:05d}" if superseded else None
        # a chain agrees both ways: the successor (same category, 5 later) names its predecessor
        replaced = category == "fact" and (n - 5) % 8 == 0 and n > 5
        predecessor = f"MEM-20261005-{n - 5:05d}" if replaced else None
        chunks[plural].append(_entry(n, category, confidence, rng, expired, successor,
                                     predecessor))
    memory = root / "grimoires/loa/memory"
    for plural, items in chunks.items():
        with open(memory / f"{plural}.yaml", "a", encoding="utf-8") as handle:
            handle.write("".join(items))


def _file_text(n: int, rng: random.Random) -> str:
    lines = [f"tool output {n} line {i}: value={rng.randint(0, 10**6)}" for i in range(
        rng.randint(40, 160))]
    lines.insert(len(lines) // 2, f"ERROR: step {n} failed")
    return "\n".join(lines) + "\n"


def _working_set(root: Path, files: int) -> None:
    rng = random.Random(files)
    keep, evict = [], []
    for n in range(files):
        rel = f"work/batch-{n // 100:02d}/output-{n:04d}.log"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_file_text(n, rng), encoding="utf-8")
        (root / (rel + ".meta.yml")).write_text(
            f"title: output-{n:04d}\nsummary: (needs summary)\ntags: []\nhotness: 0.5\n"
            f"pin: false\nprovenance:\n  created_by: bench\n  created_at: '{NOW}'\n"
            f"  updated_at: '{NOW}'\n", encoding="utf-8")
        last_turn = 5 if 200 <= n < 400 else 18   # 200 untouched for 15 turns (limit 10)
        keep.append(f"- path: {rel}\n  why: bench\n  since: '{NOW}'\n  touches: 3\n"
                    f"  last_touch: '{NOW}'\n  last_turn: {last_turn}\n")
        if n < len(COLD_ACTIONS):
            evict.append(f"- path: {rel}\n  why: bench cold hint\n  last_touch: '{NOW}'\n"
                         f"  suggested_action: {COLD_ACTIONS[n]}\n")
    folder = root / "grimoires/loa/working-set"
    folder.mkdir(parents=True, exist_ok=True)
    head = f"protocol: MEMORY-MGMT/0.1\nupdated: '{NOW}'\n"
    (folder / "hot.yml").write_text(head + "turn: 20\nkeep:\n" + "".join(keep), encoding="utf-8")
    (folder / "cold.yml").write_text(head + "evict:\n" + "".join(evict), encoding="utf-8")


def build(where: Path, files: int, entries: int) -> Path:
    root = where / "template"
    root.mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.name", "bench")
    _git(root, "config", "user.email", "bench@example.invalid")
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    subprocess.run([LOA_MEM, "init"], cwd=root, env=env, check=True, capture_output=True)
    _entries(root, entries)
    _working_set(root, files)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench: working set and store")
    subprocess.run([LOA_MEM, "status"], cwd=root, env=env, check=True, capture_output=True)
    return root


def timed_gc(template: Path, where: Path, run: int, extra: list[str]) -> tuple[float, dict]:
    copy = where / f"run-{run}"
    shutil.copytree(template, copy, symlinks=True)
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    start = time.perf_counter()
    result = subprocess.run([LOA_MEM, "gc", "--json", *extra], cwd=copy, env=env,
                            capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        raise SystemExit(f"gc failed ({result.returncode}): {result.stderr}")
    shutil.rmtree(copy, ignore_errors=True)
    return elapsed, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=10_000)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "loa_mem")], check=True,
                   capture_output=True)
    where = Path(tempfile.mkdtemp(prefix="loa-mem-bench-gc-"))
    try:
        template = build(where, args.files, args.entries)
        size = f"{args.files} files, {args.entries} entries"
        print(f"{'operation':16} {'size':>28} {'median ms':>10} {'target ms':>10}  verdict")
        for label, extra in (("gc --dry-run", ["--dry-run"]), ("gc", [])):
            times, report = [], {}
            for run in range(args.runs):
                ms, report = timed_gc(template, where, run, extra)
                times.append(ms)
            median = statistics.median(times)
            verdict = "ok" if median <= TARGET_MS else f"MISS by {median - TARGET_MS:.0f} ms"
            print(f"{label:16} {size:>28} {median:>10.0f} {TARGET_MS:>10}  {verdict}", flush=True)
            counts: dict[str, int] = {}
            for action in report["gc_report"]["actions"]:
                counts[action["action"]] = counts.get(action["action"], 0) + 1
            print(f"{'':16} actions: {counts}, tokens_freed: "
                  f"{report['gc_report']['tokens_freed']}", flush=True)
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
