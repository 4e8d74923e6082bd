"""Benchmark of what the people feature adds to the session-start hook (`loa-mem context`).

Builds a personal store of --prefs preferences in a temporary LOA_MEM_HOME, then times, in fresh
processes (median of --runs), `context.fast.preference_lines(None)`: importing
`loa_mem.people.home`, resolving the user (LOA_MEM_USER, or `git config user.email`), reading
the store and appending to the access log. Also times one `loa-mem pref observe` (a write with
its commit).

    .venv/bin/python bench/bench_people.py --prefs 50 --runs 21
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = ("import time, loa_mem.context.fast as c\n"
         "s = time.perf_counter(); n = len(c.preference_lines(None))\n"
         "print(json.dumps([n, (time.perf_counter() - s) * 1000]))")


def build(home: Path, count: int) -> dict[str, str]:
    from loa_mem.core import clock
    from loa_mem.people import home as people
    from loa_mem.people import rules as prefs_rules
    from loa_mem.people import writing as people_store

    env = {"LOA_MEM_HOME": str(home), "LOA_MEM_USER": "bench@example.com"}
    os.environ.update(env)
    now = clock.now()
    with people_store.writing(people.check_user(env["LOA_MEM_USER"]), "bench") as change:
        for n in range(count):
            key = f"pref_{n:03d}"
            if n % 2:
                change.prefs[key] = prefs_rules.set_explicit(None, key, f"value {n}", now)
            else:
                change.prefs[key] = prefs_rules.observe(None, key, [f"a{n}", f"b{n}"], now)[0]
    return env


def probe(env: dict[str, str], runs: int) -> tuple[int, float]:
    times, lines = [], 0
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", "import json\n" + PROBE],
                              env={**os.environ, **env}, capture_output=True, text=True,
                              check=True)
        lines, ms = json.loads(done.stdout)
        times.append(ms)
    return lines, statistics.median(times)


def write_once(env: dict[str, str], runs: int) -> float:
    times = []
    for n in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "loa_mem", "pref", "observe", "bench_key",
                        f"v{n % 3}"], env={**os.environ, **env}, capture_output=True,
                       check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefs", type=int, default=50)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = build(Path(tmp) / "home", args.prefs)
        lines, ms = probe(env, args.runs)
        print(f"preferences in the hook, LOA_MEM_USER set: {ms:.1f} ms ({lines} lines)")
        git_env = {**env, "LOA_MEM_USER": "", "GIT_CONFIG_COUNT": "1",
                   "GIT_CONFIG_KEY_0": "user.email", "GIT_CONFIG_VALUE_0": "bench@example.com"}
        lines, ms = probe(git_env, args.runs)
        print(f"preferences in the hook, user from git:    {ms:.1f} ms ({lines} lines)")
        print(f"loa-mem pref observe (process, commit):     {write_once(env, 7):.0f} ms")


if __name__ == "__main__":
    main()
