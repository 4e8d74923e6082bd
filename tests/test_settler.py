"""A large store's first command answers before the index is settled: the full-text merge and
the lookup indexes are left to a background process, which the next command starts again when
it was killed. Until it is done every command gives the same answers."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from loa_mem.core import lock
from loa_mem.memory import unsettled
from tests import support
from tests.conftest import Cli, git, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"
LOOKUPS = {"entries_id", "entries_path", "entries_norm", "entries_live", "entries_time"}


def index_file(root: Path) -> Path:
    return root / ".git" / "loa-mem" / "index.sqlite3"


def state(root: Path) -> tuple[bool, set[str]]:
    """(still unsettled, the lookup indexes there)."""
    db = sqlite3.connect(index_file(root))
    try:
        unsettled = db.execute("SELECT 1 FROM meta WHERE key='unsettled'").fetchone()
        names = {name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type='index' AND name LIKE 'entries_%'")}
        return unsettled is not None, names
    finally:
        db.close()


def wait_settled(root: Path, seconds: float = 60.0) -> set[str]:
    """The lookup indexes once the background settler is done (it runs apart from the test)."""
    deadline = time.monotonic() + seconds
    while True:
        unsettled, names = state(root)
        if not unsettled or time.monotonic() > deadline:
            assert not unsettled, "the index was not settled in time"
            return names
        time.sleep(0.1)


def full_text_whole(root: Path) -> None:
    db = sqlite3.connect(index_file(root))
    try:
        db.execute("INSERT INTO entry_text(entry_text, rank) VALUES('integrity-check', 1)")
    finally:
        db.close()


def ids(root: Path, *query: str) -> list[str]:
    done = run_loa_mem(root, "recall", *query, "--limit", "100", "--json")
    assert done.returncode == 0, done.stderr
    return [r["id"] for r in json.loads(done.stdout)["results"]]


def large_store(store: Path, count: int = 4000) -> list[str]:
    """A facts file over 1 MB (read by several processes: a build that defers its settling),
    committed."""
    made = [f"MEM-20260201-{n:08d}" for n in range(count)]
    (store / FACTS).write_text("".join(
        f"- id: {memory_id}\n  category: fact\n  content: Note {n} about "
        f"{('zebra', 'otter', 'heron', 'lynx')[n % 4]} habits, long enough to make the file "
        f"large.\n  confidence: 0.9\n  source:\n    session_id: s{n % 9}\n"
        f"    timestamp: 2026-02-01T10:{n % 60:02d}:00Z\n  tags: [t{n % 5}]\n"
        for n, memory_id in enumerate(made)), encoding="utf-8")
    git(store, "add", "-A")
    git(store, "commit", "-qm", "many facts")
    index_file(store).unlink(missing_ok=True)
    return made


def test_a_large_build_answers_first_and_is_settled_in_the_background(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    made = large_store(store)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))

    first = ids(clone, "zebra habits")
    assert len(first) == 100 and set(first) <= set(made)

    assert wait_settled(clone) == LOOKUPS
    assert ids(clone, "zebra habits") == first
    full_text_whole(clone)
    assert not list((clone / ".git" / "loa-mem").glob("*build-*"))
    assert not (clone / ".git" / "loa-mem" / "index.sqlite3-wal").exists() or \
        (clone / ".git" / "loa-mem" / "index.sqlite3-wal").stat().st_size == 0


def unsettle(root: Path) -> None:
    """The index as a build leaves it when its settler was killed before it started."""
    db = sqlite3.connect(index_file(root))
    try:
        for name in LOOKUPS:
            db.execute(f"DROP INDEX {name}")
        db.execute("INSERT INTO meta VALUES('unsettled', '')")
        db.commit()
    finally:
        db.close()


def test_an_index_left_unsettled_answers_alike_and_the_next_command_settles_it(
        cli: Cli, store: Path) -> None:
    made = large_store(store)
    before = ids(store, "otter")
    wait_settled(store)
    shown = run_loa_mem(store, "show", made[7], "--json")
    unsettle(store)

    # while the build lock is held (a build, or a settler at work), commands answer as before
    # and none starts another settler
    with lock.hold(store / ".git" / "loa-mem" / "build.lock", "test", 5):
        assert ids(store, "otter") == before
        again = run_loa_mem(store, "show", made[7], "--json")
        assert again.returncode == 0 and again.stdout == shown.stdout
        added = support.remember(cli, "An otter note written before the index settled.")
        assert added in ids(store, "otter note written")
        during = ids(store, "otter")
        time.sleep(0.5)
        assert state(store) == (True, set())

    ids(store, "heron")  # the first command after: starts a settler
    assert wait_settled(store) == LOOKUPS
    full_text_whole(store)
    assert ids(store, "otter") == during


def test_a_settler_whose_index_was_deleted_meanwhile_leaves_no_file(
        cli: Cli, store: Path) -> None:
    large_store(store)
    ids(store, "lynx")
    wait_settled(store)
    unsettle(store)
    with lock.hold(store / ".git" / "loa-mem" / "build.lock", "test", 5):
        unsettled.start(index_file(store))
        [settler] = unsettled._started
        index_file(store).unlink()
    os.waitpid(settler, 0)
    unsettled._started.clear()

    assert not index_file(store).exists()
    assert "lynx" in run_loa_mem(store, "recall", "lynx").stdout.lower()  # rebuilt as usual
