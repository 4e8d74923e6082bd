"""Concurrent writers lose nothing (spec section 5): eight real processes remembering fifty
entries each at once leave 400 entries with unique ids, each in git history; a writer that cannot
get the lock in time exits 1 and names the holder.

The 8 x 50 test is the suite's one slow test (400 commits under one lock); it runs in plain
`pytest`, as .ci/run does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from loa_mem.core import lock
from loa_mem.memory.store import Store
from tests import support
from tests.conftest import git, run_loa_mem

WORKERS, EACH = 8, 50

# One writer process: the console entry's `run` called fifty times in a row, so that each of the
# eight processes remembers fifty entries while the seven others do the same (starting 400
# interpreters instead would only add start-up time, not concurrency).
WRITER = """
import sys
from loa_mem.cli.app import run
worker, each, category = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
for n in range(each):
    code = run(["remember", f"Worker {worker} wrote entry {n} of the race.", "-c", category,
                "--json"])
    if code:
        sys.exit(code)
"""


def _objects(text: str) -> list[dict[str, object]]:
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        found.append(value)
    return found


def test_eight_processes_remembering_fifty_entries_each(store: Path) -> None:
    env = {**os.environ, "LOA_MEM_LOCK_TIMEOUT": "300"}
    writers = [subprocess.Popen(
        [sys.executable, "-c", WRITER, str(w), str(EACH), "fact" if w % 2 == 0 else "learning"],
        cwd=store, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(WORKERS)]
    outputs = [w.communicate(timeout=600) for w in writers]

    codes = [(w.returncode, err) for w, (_, err) in zip(writers, outputs, strict=True)]
    assert codes == [(0, "")] * WORKERS
    reported = [r for out, _ in outputs for r in _objects(out)]
    assert len(reported) == WORKERS * EACH
    assert all(r["created"] is True for r in reported)
    ids = [str(r["id"]) for r in reported]
    assert len(set(ids)) == WORKERS * EACH

    assert sorted(support.all_ids(store)) == sorted(ids)
    contents = {e["content"] for c in ("fact", "learning") for e in support.entries(store, c)}
    assert contents == {f"Worker {w} wrote entry {n} of the race."
                        for w in range(WORKERS) for n in range(EACH)}

    trailers = git(store, "log", "--format=%(trailers:key=Loa-Id,valueonly)").split()
    assert sorted(trailers) == sorted(ids)
    subjects = git(store, "log", "--format=%s").splitlines()
    assert sum(s.startswith("loa-mem remember: ") for s in subjects) == WORKERS * EACH
    remembered = [e for e in support.events(store) if e["op"] == "remember"]
    assert sorted(i for e in remembered for i in e["ids"]) == sorted(ids)
    assert support.porcelain(store) == ""
    assert run_loa_mem(store, "validate").returncode == 0


def _lock_path(store: Path) -> Path:
    return Store.open(str(store)).cache_dir / "write.lock"


def test_a_writer_that_cannot_get_the_lock_names_the_holder(store: Path) -> None:
    before, commits = support.snapshot(store), support.commit_count(store)
    with lock.hold(_lock_path(store), "a-long-import", 5):
        result = run_loa_mem(store, "remember", "Waits for nobody.", "-c", "fact",
                             env={"LOA_MEM_LOCK_TIMEOUT": "0.3"})

    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert f"pid {os.getpid()}" in result.stderr
    assert "a-long-import" in result.stderr
    assert "LOA_MEM_LOCK_TIMEOUT" in result.stderr
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_read_commands_do_not_wait_for_the_lock(store: Path) -> None:
    with lock.hold(_lock_path(store), "a-long-import", 5):
        for args in (("recall",), ("status",), ("validate",)):
            result = run_loa_mem(store, *args, env={"LOA_MEM_LOCK_TIMEOUT": "0.3"})
            assert result.returncode == 0, (args, result.stderr)


def test_a_waiting_writer_goes_ahead_when_the_lock_is_released(store: Path) -> None:
    with lock.hold(_lock_path(store), "short-job", 5):
        process = subprocess.Popen(
            [sys.executable, "-m", "loa_mem", "remember", "Waited its turn.", "-c", "fact"],
            cwd=store, env={**os.environ, "LOA_MEM_LOCK_TIMEOUT": "60"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # let it reach the lock; the test holds whether or not it did
    _, err = process.communicate(timeout=60)

    assert process.returncode == 0, err
    assert support.entries(store, "fact")[0]["content"] == "Waited its turn."
