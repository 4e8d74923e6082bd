"""Benchmark of `loa-mem report --html`: build time and file size at 1,000 and 10,000 entries.

Stores are built as bench.py builds them (grimoire text generated directly, committed once),
plus a supersede chain every 50 entries and effectiveness on every fifth learning, so each
section of the page has something to draw. Times the whole process (the venv's own `loa-mem`),
median of a few runs, against the issue's target (10,000 entries: 3 s and 5 MB).

    .venv/bin/python bench/bench_report.py                 # 1,000 and 10,000 entries
    .venv/bin/python bench/bench_report.py --sizes 1000 --runs 3
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import LOA_MEM, NOW, build_store

TARGET_SECONDS, TARGET_BYTES = 3.0, 5_000_000


def _extra(match: re.Match[str], name: str, links: dict[str, str],
           back: dict[str, str]) -> str:
    memory_id = match.group(1)
    lines = [match.group(0)]
    if memory_id in links:
        lines.append(f"  supersedes: {links[memory_id]}")
    if memory_id in back:
        lines.append(f"  superseded_by: {back[memory_id]}")
    if name == "learnings.yaml" and int(memory_id[-5:]) % 25 == 2:
        n = int(memory_id[-5:])
        apps, wins = 3 + n % 4, n % 4
        score = (200 * wins + apps) // (2 * apps)
        lines.append(f"  effectiveness: {{applications: {apps}, successes: {wins}, "
                     f"failures: {apps - wins}, score: {score}}}")
    return "\n".join(lines)


def enrich(root: Path) -> None:
    """Chains (entry n supersedes entry n-5, every 50 entries: same category) and effectiveness
    on learnings, written as text and committed."""
    memory = root / "grimoires/loa/memory"
    for path in memory.glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        ids = re.findall(r"^- id: (MEM-\S+)$", text, re.M)
        links = {new: old for n, (old, new) in enumerate(itertools.pairwise(ids)) if n % 10 == 0}
        back = {old: new for new, old in links.items()}
        text = re.sub(r"^- id: (MEM-\S+)$", functools.partial(
            _extra, name=path.name, links=links, back=back), text, flags=re.M)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "chains and effectiveness"], cwd=root, check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="loa-mem-bench-report-"))
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    try:
        print(f"{'entries':>8}  {'median s':>8}  {'size MB':>8}  verdict")
        for size in (int(s) for s in args.sizes.split(",")):
            root = build_store(size, where)
            enrich(root)
            subprocess.run([LOA_MEM, "status"], cwd=root, env=env, check=True,
                           capture_output=True)  # the index, built once as any command would
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                subprocess.run([LOA_MEM, "report", "-o", str(where / "r.html")], cwd=root,
                               env=env, check=True, capture_output=True)
                times.append(time.perf_counter() - start)
            seconds, size_bytes = statistics.median(times), (where / "r.html").stat().st_size
            ok = seconds <= TARGET_SECONDS and size_bytes <= TARGET_BYTES
            verdict = "ok" if ok or size < 10_000 else "MISS"
            print(f"{size:>8}  {seconds:>8.2f}  {size_bytes / 1e6:>8.2f}  {verdict}")
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
