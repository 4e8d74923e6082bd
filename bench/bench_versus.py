"""loa-mem side by side with agentrecall-db (one SQLite file, keyword search).

Both get the same generated developer memories (1,000, 10,000 and, with --sizes, 100,000);
each operation runs as a whole process (the venv's own `loa-mem` and `agentrecall`), warmed once,
and the table shows the median of --runs runs:
- recall: `loa-mem recall QUERY --json` against `agentrecall search QUERY --json` (10 results);
- remember: `loa-mem remember TEXT -c learning` with its git commit against `agentrecall add`.
agentrecall-db is the optional `bench` extra (`pip install -e '.[bench]'`); without it the
table has loa-mem's column only, and says so. The last lines give remember's time at each size
as a multiple of its time at 10,000 entries (the target: at most 1.3 at 100,000).

    .venv/bin/python bench/bench_versus.py                       # 1,000 and 10,000 entries
    .venv/bin/python bench/bench_versus.py --sizes 1000,10000,100000 --runs 9
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
from collections.abc import Callable
from pathlib import Path

from bench import settled

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LOA_MEM = str(BIN / "loa-mem")
AGENTRECALL = str(BIN / "agentrecall")
NOW = "2026-11-22T12:00:00Z"
CATEGORIES = [("fact", "facts", 0.85), ("decision", "decisions", 0.95),
              ("learning", "learnings", 0.8), ("error", "errors", 0.7),
              ("preference", "preferences", 0.6)]
SUBJECTS = ["the billing service", "the auth gateway", "PostgreSQL", "Redis", "the CI pipeline",
            "the search indexer", "the mobile client", "Kafka", "the deploy script", "nginx",
            "the payments worker", "the GraphQL schema", "Terraform", "the cron scheduler",
            "the feature flags", "S3 uploads", "the websocket hub", "Celery", "the test suite",
            "the docs site"]
FINDINGS = ["times out under load", "needs a retry with backoff", "leaks connections on reload",
            "must stay behind the VPN", "is pinned to an old major version", "breaks on UTF-8 "
            "filenames", "caches too aggressively", "logs secrets unless scrubbed", "runs twice "
            "after a failover", "needs its migrations in order", "is slow on cold starts",
            "drops messages when the queue is full"]
REASONS = ["after the incident", "says the on-call runbook", "found while profiling",
           "agreed in the design review", "measured in staging", "reported by support",
           "seen in the nightly build", "noted during the upgrade"]
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "si", "de", "po", "gra", "stu", "ber",
              "fin", "ox", "ul", "cha", "pre", "mon", "tix")
CODES = [a + b + c for a in _SYLLABLES[:10] for b in _SYLLABLES[10:] for c in "nrsl"][:400]
Row = tuple[str, float, float | None]  # operation, loa-mem ms, agentrecall ms
QUERIES = ["redis timeout", "deploy retry backoff", "postgres migrations", "kafka queue full",
           "auth gateway vpn", "flaky nightly build", "websocket reload leak"]


def memories(size: int) -> list[dict[str, object]]:
    """`size` developer memories: a subject, a finding, a reason and two project code words
    (so that each is distinct and a query matches a few percent of them)."""
    rng = random.Random(size)
    found = []
    for n in range(1, size + 1):
        category, _, confidence = CATEGORIES[n % len(CATEGORIES)]
        subject, finding = rng.choice(SUBJECTS), rng.choice(FINDINGS)
        words = f"{rng.choice(CODES)} {rng.choice(CODES)}"
        day = f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}"
        found.append({"n": n, "category": category, "confidence": confidence, "day": day,
                      "content": f"{subject.capitalize()} {finding}, {rng.choice(REASONS)} "
                                 f"(ticket {n}, {words}).",
                      "tags": sorted({subject.split()[-1].lower(), rng.choice(CODES)})})
    return found


def _yaml_entry(memory: dict[str, object]) -> str:
    day = str(memory["day"])
    tags = ", ".join(str(t) for t in memory["tags"])  # type: ignore[attr-defined]
    return (f"- id: MEM-{day.replace('-', '')}-{memory['n']:06d}\n"
            f"  category: {memory['category']}\n  content: {json.dumps(memory['content'])}\n"
            f"  confidence: {memory['confidence']}\n  source:\n    session_id: bench\n"
            f"    timestamp: {day}T10:00:00Z\n  ttl: permanent\n  expires_at: null\n"
            f"  tags: [{tags}]\n")


def build_loa_mem(items: list[dict[str, object]], root: Path, env: dict[str, str]) -> None:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        subprocess.run(["git", "config", key, value], cwd=root, check=True)
    subprocess.run([LOA_MEM, "init"], cwd=root, env=env, check=True, capture_output=True)
    memory = root / "grimoires/loa/memory"
    for category, plural, _ in CATEGORIES:
        text = "".join(_yaml_entry(m) for m in items if m["category"] == category)
        with open(memory / f"{plural}.yaml", "a", encoding="utf-8") as handle:
            handle.write(text)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "bench store"], cwd=root, check=True)


def build_agentrecall(items: list[dict[str, object]], db: Path, env: dict[str, str]) -> None:
    dump = db.with_suffix(".jsonl")
    dump.write_text("".join(json.dumps({"content": m["content"], "tags": m["tags"],
                                        "importance": m["confidence"]}) + "\n" for m in items),
                    encoding="utf-8")
    subprocess.run([AGENTRECALL, "--db", str(db), "import", str(dump)], env=env, check=True,
                   capture_output=True)


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    return elapsed


def median_ms(runs: int, make: Callable[[int], list[str]], cwd: Path, env: dict[str, str]
              ) -> float:
    timed(make(runs), cwd, env)  # warm: the index, the caches, the page cache
    return statistics.median(timed(make(i), cwd, env) for i in range(runs))


def measure(size: int, where: Path, runs: int, versus: bool) -> list[Row]:
    env = {**os.environ, "LOA_MEM_NOW": NOW, "AGENTRECALL_EMBEDDINGS": "false"}
    items = memories(size)
    root, db = where / f"loa-{size}", where / f"agentrecall-{size}.db"
    build_loa_mem(items, root, env)
    timed([LOA_MEM, "recall", "warm"], root, env)  # builds the index
    settled(root)  # and the settler a large build leaves must not run under the timings
    if versus:
        build_agentrecall(items, db, env)
    ar = [AGENTRECALL, "--db", str(db), "--embeddings", "false"]
    rows: list[Row] = []
    loa = median_ms(runs, lambda i: [LOA_MEM, "recall", QUERIES[i % len(QUERIES)], "--json"],
                    root, env)
    other = median_ms(runs, lambda i: [*ar, "search", QUERIES[i % len(QUERIES)], "-k", "10",
                                       "--json"], root, env) if versus else None
    rows.append(("recall CLI / agentrecall search", loa, other))
    loa = median_ms(runs, lambda i: [LOA_MEM, "remember", f"Bench note {size}-{i}: "
                                     f"{time.time_ns()} {random.choice(CODES)}.", "-c",
                                     "learning"], root, env)
    other = median_ms(runs, lambda i: [*ar, "add", f"Bench note {size}-{i}: {time.time_ns()}.",
                                       "--tags", "bench"], root, env) if versus else None
    rows.append(("remember incl. commit / agentrecall add", loa, other))
    return rows


def installed() -> bool:
    return Path(AGENTRECALL).exists()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated stores")
    args = parser.parse_args()
    # as an installed package would be: compiled once, not on every run
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "loa_mem")], check=True,
                   capture_output=True)
    versus = installed()
    if not versus:
        print("agentrecall-db is not installed (pip install -e '.[bench]'): loa-mem only")
    where = Path(tempfile.mkdtemp(prefix="loa-mem-versus-"))
    print(f"{'operation':40} {'entries':>8} {'loa-mem ms':>11} {'agentrecall ms':>15} "
          f"{'ratio':>6}")
    remember: dict[int, float] = {}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            for operation, ours, theirs in measure(size, where, args.runs, versus):
                ratio = f"{ours / theirs:.2f}" if theirs else "-"
                shown = f"{theirs:.0f}" if theirs else "-"
                print(f"{operation:40} {size:>8} {ours:>11.0f} {shown:>15} {ratio:>6}",
                      flush=True)
                if operation.startswith("remember"):
                    remember[size] = ours
    finally:
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)
        else:
            print(f"stores kept in {where}")
    base = remember.get(10_000)
    for size, ms in sorted(remember.items()):
        if base and size != 10_000:
            print(f"remember at {size} entries: {ms / base:.2f}x its time at 10000")


if __name__ == "__main__":
    main()
