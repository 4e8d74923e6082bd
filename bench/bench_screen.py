"""Benchmark of the secret and personal-data screen (loa_mem/core/sensitive.py, core/detectors.py).

Prints, each as the median of --runs fresh processes or calls:
- the import cost of each detector library (detect-secrets with and without `requests` deferred,
  phonenumbers, the python-stdnum modules used);
- the scan cost of one text of each sort, once the libraries are loaded;
- `loa-mem remember` with its commit on a store of --size entries (default 10,000), for plain
  prose (no detector loads) and for a text that loads every detector, against the 350 ms budget.

    .venv/bin/python bench/bench_screen.py
    .venv/bin/python bench/bench_screen.py --size 10000 --runs 11
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import LOA_MEM, NOW, ROOT, build_store, timed

BUDGET_MS = 350
IMPORTS = {
    "detect-secrets plugins (requests deferred)":
        "from loa_mem.core import detectors; detectors._vendor_plugins()",
    "detect-secrets plugins (plain import)":
        "import detect_secrets.plugins.keyword, detect_secrets.plugins.aws",
    "phonenumbers": "import phonenumbers",
    "python-stdnum (iban, luhn, us.ssn)": "import stdnum.iban, stdnum.luhn, stdnum.us.ssn",
    "loa_mem.core.sensitive (own rules only)": "import loa_mem.core.sensitive",
}
TEXTS = {
    "plain prose": "Use ruff for linting and mypy in strict mode before every release.",
    "technical (path, sha, date)": "Fixed in grimoires/loa/memory/decisions.yaml at commit "
                                   "3a41611c0ffee4b8d1b2e1f0c9a8b7c6d5e4f3a2 on 2026-02-01.",
    "numbers (phone-like, card-like)": "Order 1234567890123457 shipped; call desk 4821 at 9.",
    "a secret (refused)": "DB_PASSWORD=Zq8#kd01Lm and AWS key AKIAZZZZZZZZZZZZZZZZ",
}
# Loads every detector: a 16+ character token, a key word, and a run of digits.
ALL_DETECTORS = ("Deploy of build 20261123104512 read grimoires/loa/memory/decisions.yaml "
                 "with the token cache warm")


def _python() -> str:
    return sys.executable


def import_ms(statement: str, runs: int) -> float:
    probe = (f"import time; s = time.perf_counter(); {statement}; "
             "print((time.perf_counter() - s) * 1000)")
    times = []
    for _ in range(runs):
        out = subprocess.run([_python(), "-c", probe], capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip()))
    return statistics.median(times)


def scan_us(text: str, runs: int) -> float:
    from loa_mem.core import sensitive

    sensitive.scan(text)  # load what this text needs
    times = []
    for _ in range(max(runs, 50)):
        start = time.perf_counter()
        sensitive.scan(text)
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def remember_ms(root: Path, text: str, runs: int) -> float:
    env = {**os.environ, "LOA_MEM_NOW": NOW}
    return statistics.median(
        timed([LOA_MEM, "remember", f"{text} ({i}-{time.time_ns()})", "-c", "learning"], root,
              env) for i in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "loa_mem")], check=True,
                   capture_output=True)
    print(f"{'import (fresh process)':48} {'median ms':>10}")
    for name, statement in IMPORTS.items():
        print(f"{name:48} {import_ms(statement, args.runs):>10.1f}", flush=True)
    print(f"\n{'scan of one text (libraries loaded)':48} {'median µs':>10}")
    for name, text in TEXTS.items():
        print(f"{name:48} {scan_us(text, args.runs):>10.0f}", flush=True)
    where = Path(tempfile.mkdtemp(prefix="loa-mem-bench-screen-"))
    try:
        root = build_store(args.size, where)
        print(f"\n{'remember (with commit)':48} {'entries':>8} {'median ms':>10} "
              f"{'budget ms':>10}  verdict")
        for name, text in (("plain prose (no detector loaded)", TEXTS["plain prose"]),
                           ("text that loads every detector", ALL_DETECTORS)):
            ms = remember_ms(root, text, args.runs)
            verdict = "ok" if ms <= BUDGET_MS else f"MISS by {ms - BUDGET_MS:.0f} ms"
            print(f"{name:48} {args.size:>8} {ms:>10.0f} {BUDGET_MS:>10}  {verdict}", flush=True)
    finally:
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
