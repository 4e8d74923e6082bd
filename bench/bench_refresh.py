"""Benchmark of the paths where the index must catch up with the files.

For each store size (generated as in `bench.py`, committed once, index warmed) it times, as whole
processes with the venv's own `loa-mem`:
- `recall QUERY` warm, and the first recall after one grimoire file changed outside loa-mem
  (20 entries appended, as a `git pull` brings them; one entry edited, as in an editor);
- `context` warm, and the first context after 20 entries were appended outside loa-mem;
- the first `recall QUERY` in a fresh clone (no index: it builds it), of this store and of one
  of entries as `remember` writes them (varied lengths, long texts folded over several lines);
- `validate` with nothing changed, and the peak memory (RSS) of that validate;
- the index's size beside the YAML it was built from.
It prints one table with each figure's target.

    .venv/bin/python bench/bench_refresh.py                 # 1,000 and 10,000 entries
    .venv/bin/python bench/bench_refresh.py --sizes 1000,10000,100000 --runs 5
"""

from __future__ import annotations

import argparse
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

from bench import LOA_MEM, NOW, ROOT, WORDS, settled

FACTS = "grimoires/loa/memory/facts.yaml"


def run(command: list[str], root: Path) -> tuple[float, int]:
    """(wall ms, peak RSS in MB) of one process."""
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode() if process.stderr else ""
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}): {stderr}")
    return elapsed, usage.ru_maxrss // 1024


def query(i: int) -> list[str]:
    return [LOA_MEM, "recall", f"{WORDS[i * 7 % 400]} {WORDS[i * 13 % 400]}"]


def outside_entries(root: Path, count: int, rng: random.Random) -> None:
    """`count` new entries appended to the facts file and committed, as a pull brings them."""
    items = []
    for _ in range(count):
        words = " ".join(rng.choice(WORDS) for _ in range(18))
        suffix = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(8))
        items.append(f"- id: MEM-20261122-{suffix}\n  category: fact\n"
                     f"  content: Pulled note about {words}.\n  confidence: 0.85\n"
                     f"  source:\n    session_id: pulled\n    timestamp: 2026-11-22T11:00:00Z\n"
                     f"  ttl: permanent\n  expires_at: null\n  tags: [pulled]\n")
    with open(root / FACTS, "a", encoding="utf-8") as handle:
        handle.write("".join(items))
    git(root, "commit", "-qam", f"{count} pulled entries")


def outside_edit(root: Path, rng: random.Random) -> None:
    """One entry in the middle of the facts file edited, as in an editor."""
    path = root / FACTS
    text = path.read_text(encoding="utf-8")
    at = text.find("  content: ", len(text) // 2)
    end = text.find("\n", at)
    path.write_text(f"{text[:at]}  content: Edited by hand about {rng.choice(WORDS)}."
                    f"{text[end:]}", encoding="utf-8")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


def after(root: Path, runs: int, change: object, command: Callable[[int], list[str]],
          seed: int = 0) -> float:
    """Median time of `command(i)` run right after `change(root, rng)`, for i in range(runs):
    the queries of the warm recall, so that the two medians compare the same work. Each kind
    of change has a `seed` of its own: two pulls seeded alike would bring the same ids twice,
    which no pull does (ids are drawn at random when an entry is remembered)."""
    rng = random.Random(runs * 100 + seed)
    times = []
    for i in range(runs):
        change(root, rng)  # type: ignore[operator]
        times.append(run(command(i), root)[0])
    return median(times)


def measure(size: int, root: Path, where: Path, runs: int) -> list[tuple[str, str, str]]:
    run([LOA_MEM, "recall", "warm"], root)
    settled(root)
    warm = median([run(query(i), root)[0] for i in range(runs)])
    pulled = after(root, runs, lambda r, rng: outside_entries(r, 20, rng), query, seed=1)
    edited = after(root, runs, outside_edit, query, seed=2)
    run([LOA_MEM, "context"], root)
    context = median([run([LOA_MEM, "context"], root)[0] for _ in range(runs)])
    context_pulled = after(root, runs, lambda r, rng: outside_entries(r, 20, rng),
                           lambda i: [LOA_MEM, "context"], seed=3)
    git(root, "commit", "-qam", "edits", "--allow-empty")
    fresh = first_recall(root, where)
    written = built_apart(size, where, written=True)
    fresh_written = first_recall(written, where)
    shutil.rmtree(written)
    run([LOA_MEM, "validate"], root)
    checks = [run([LOA_MEM, "validate"], root) for _ in range(max(1, min(runs, 3)))]
    yaml_size = sum(p.stat().st_size for p in (root / "grimoires").rglob("*.yaml"))
    index_size = sum(p.stat().st_size for p in (root / ".git" / "loa-mem").glob("index*"))
    double, big = size >= 100_000, size >= 10_000
    return [
        ("recall QUERY, warm", f"{warm:.0f} ms", ""),
        ("recall after 20 entries pulled", f"{pulled:.0f} ms", f"<= {2 * warm:.0f} (2x warm)"),
        ("recall after one entry edited", f"{edited:.0f} ms", f"<= {2 * warm:.0f} (2x warm)"),
        ("context, warm", f"{context:.0f} ms", ""),
        ("context after 20 entries pulled", f"{context_pulled:.0f} ms",
         f"<= {2 * context:.0f} (2x warm)"),
        ("first recall in a fresh clone", f"{fresh:.0f} ms",
         "<= 2500" if double else "<= 400" if big else ""),
        ("fresh clone, remember's layout", f"{fresh_written:.0f} ms",
         "<= 2500" if double else "<= 400" if big else ""),
        ("validate, nothing changed", f"{median([c[0] for c in checks]):.0f} ms",
         "<= 1000" if double else ""),
        ("validate, peak RSS", f"{max(c[1] for c in checks)} MB", "<= 150" if double else ""),
        ("index size / YAML size", f"{index_size / 2**20:.1f} / {yaml_size / 2**20:.1f} MB "
         f"= {index_size / yaml_size:.2f}x", "<= 1.5x"),
    ]


def first_recall(root: Path, where: Path) -> float:
    """The first recall in a fresh clone of the store at `root` (ms); the clone is deleted."""
    clone = where / f"clone-{root.name}"
    git(where, "clone", "-q", str(root), str(clone))
    elapsed = run(query(3), clone)[0]
    settled(clone)
    shutil.rmtree(clone)
    return elapsed


def built_apart(size: int, where: Path, written: bool = False) -> Path:
    """`build_store` in a process of its own: a child's peak RSS (`ru_maxrss`) starts from its
    parent's peak, so a bench process that held a 100,000-entry store's text would put its own
    ~90 MB under every figure of the RSS row. `written`: entries as `remember` writes them,
    long texts folded over several lines."""
    code = ("import sys; from pathlib import Path; from bench import build_store; "
            "print(build_store(int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == '1'))")
    done = subprocess.run([sys.executable, "-c", code, str(size), str(where), str(int(written))],
                          check=True, capture_output=True, text=True, cwd=Path(__file__).parent)
    return Path(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the generated stores")
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "loa_mem")], check=True,
                   capture_output=True)
    where = Path(tempfile.mkdtemp(prefix="loa-mem-bench-refresh-"))
    print(f"{'path':34} {'entries':>8} {'measured':>26}  target")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            root = built_apart(size, where)
            for name, value, target in measure(size, root, where, args.runs):
                print(f"{name:34} {size:>8} {value:>26}  {target}", flush=True)
    finally:
        if args.keep:
            print(f"stores kept in {where}")
        else:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
