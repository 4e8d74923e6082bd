"""Outside edits anywhere in a big grimoire file, one after another: each catch-up cuts only the
part between the blocks of the text it recorded last that are still at the file's start and
end, and recall then shows exactly what a cold build of the same files shows (lines included).
The cut of a file's bytes gives the items and hashes the cut of its decoded text gives."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loa_mem.core import spanhash, yamlfast
from tests import support
from tests.conftest import Cli, clones_of, git, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"
SIZE = 700  # entries: the catch-up records blocks of 256


def memory_id(n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz234567"
    return "MEM-20260201-big" + "".join(letters[n >> (5 * k) & 31] for k in range(4, -1, -1))


def entry_text(n: int, content: str) -> str:
    return (f"- id: {memory_id(n)}\n  category: fact\n  content: {content}\n"
            f"  confidence: 0.8\n  source:\n    session_id: outside\n"
            f"    timestamp: 2026-02-01T10:00:00Z\n  ttl: permanent\n  expires_at: null\n"
            f"  tags: [outside]\n")


def listed(root: Path) -> list[dict[str, Any]]:
    return Cli(root).ok("recall", "--limit", "2000", "--include-expired", "--include-superseded",
                        "--include-archived", "--json").json()["results"]


COPIES = itertools.count()


def cold(store: Path, where: Path) -> list[dict[str, Any]]:
    copy = where / f"copy-{next(COPIES)}"
    shutil.copytree(store, copy)
    (copy / ".git" / "loa-mem" / "index.sqlite3").unlink()
    return listed(copy)


@pytest.fixture
def big(cli: Cli, store: Path) -> Path:
    path = store / FACTS
    path.write_text(path.read_text(encoding="utf-8") + "".join(
        entry_text(n, f"Big fact {n} about kafka and topic {n % 37}.") for n in range(SIZE)),
        encoding="utf-8")
    git(store, "add", "-A")
    git(store, "commit", "-qm", "a big file")
    listed(store)
    return store


EDITS = st.lists(st.tuples(
    st.sampled_from(["edit", "edit", "lines", "delete", "insert", "comment", "append", "cut",
                     "same", "swap"]),
    st.integers(0, SIZE + 50)), min_size=2, max_size=5)


def _apply(text: str, kind: str, at: int, number: int) -> str:
    head, *items = text.split("\n- ")
    items = [f"- {item}" for item in items]
    where = at % len(items)
    if kind == "edit":
        items[where] = items[where].replace("about", f"ABOUT {number}", 1)
    elif kind == "lines":  # an entry grows by lines: every entry after it moves down
        items[where] = items[where].replace("  tags:", f"  note: |\n    more {at}\n    lines\n"
                                            "  tags:", 1)
    elif kind == "delete":
        items.pop(where)
    elif kind == "insert":
        items.insert(where, entry_text(SIZE + 100 * number + at, f"Inserted {at} on redis.")
                     .rstrip("\n"))
    elif kind == "comment":
        items[where] = items[where] + f"\n# note {at}\n"
    elif kind == "append":
        items.append(entry_text(SIZE + 100 * number + at, f"Appended {at} on redis.")
                     .rstrip("\n"))
    elif kind == "cut":  # the end of the file goes
        items = items[:max(1, where)]
    elif kind == "swap":
        items[where], items[-1] = items[-1], items[where]
    return "\n".join([head, *items]) if items else head


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=EDITS)
def test_outside_edits_anywhere_in_a_big_file_read_as_a_cold_build(
        big: Path, tmp_path_factory: pytest.TempPathFactory,
        steps: list[tuple[str, int]]) -> None:
    where = tmp_path_factory.mktemp("copies")
    path = big / FACTS
    git(big, "checkout", "-q", "--", FACTS)
    for number, (kind, at) in enumerate(steps):
        text = path.read_text(encoding="utf-8")
        text = _apply(text.rstrip("\n") + "\n", kind, at, number)
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        assert listed(big) == cold(big, where)


LINES = st.lists(st.one_of(
    st.sampled_from(["- id: a", "-", "- ", "  key: value", "  - nested", "# comment",
                     "  # indented comment", "", "   ", "  text ", " \x1f", "\u3000", "  \xa0",
                     "  héllo wörld", "- ünïcode: x", "#", "-x"]),
    st.text(alphabet=" -#ab\xe9\u2003", max_size=6)), max_size=14)


@settings(max_examples=400, deadline=None)
@given(lines=LINES, end=st.sampled_from(["", "\n"]), indent=st.sampled_from([0, 2]))
def test_the_bytes_cut_gives_the_items_and_hashes_of_the_text_cut(
        lines: list[str], end: str, indent: int) -> None:
    text = "\n".join(lines) + end
    by_text = yamlfast.cut(text, indent)
    by_bytes = spanhash.cut(text.encode("utf-8"), indent)
    if by_text is None:
        assert by_bytes is None
        return
    assert by_bytes is not None
    assert [(line, text.encode("utf-8")[start:end].decode("utf-8"), text_hash)
            for line, start, end, text_hash in by_bytes] == [
        (line, chunk, spanhash.digest(spanhash._content(chunk))) for line, chunk in by_text]


def process_listed(root: Path, query: str) -> list[dict[str, Any]]:
    """What `loa-mem recall QUERY --json` prints as its own process (recall's fast path)."""
    done = run_loa_mem(root, "recall", query, "--limit", "50", "--json")
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return results


def test_recall_as_a_process_after_pulls_and_edits_shows_what_a_cold_build_shows(
        big: Path, tmp_path: Path) -> None:
    # the fast path catches the changed files up without the store; a forget pulled from a
    # teammate (an event and an edited file) and a new file go through the store
    ana, ben = clones_of(big, tmp_path, ("ana", "ben"))
    for clone in (ana, ben):
        git(clone, "config", "user.email", "t@example.invalid")
        git(clone, "config", "user.name", "t")
        process_listed(clone, "kafka")
    forgotten = memory_id(350)
    Cli(ana).ok("forget", forgotten, "--reason", "wrong")
    git(ana, "push", "-q", "origin", "HEAD")
    path = ben / FACTS
    for step in range(3):
        text = path.read_text(encoding="utf-8")
        path.write_text(_apply(text, "edit", 300 + 101 * step, step), encoding="utf-8")
        assert process_listed(ben, "kafka ABOUT") == process_listed(
            cold_copy(ben, tmp_path), "kafka ABOUT")
    path.write_text(_apply(path.read_text(encoding="utf-8"), "lines", 5, 9), encoding="utf-8")
    done = run_loa_mem(ben, "recall", "kafka", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "loa_mem.memory.reread" in imported
    assert "loa_mem.memory.store" not in imported
    git(ben, "commit", "-qam", "edits")
    git(ben, "pull", "-q", "--no-rebase", "origin", "HEAD")
    found = process_listed(ben, "kafka topic 17")
    assert forgotten not in [r["id"] for r in found]
    assert found == process_listed(cold_copy(ben, tmp_path), "kafka topic 17")


def cold_copy(store: Path, where: Path) -> Path:
    copy = where / f"copy-{next(COPIES)}"
    shutil.copytree(store, copy)
    (copy / ".git" / "loa-mem" / "index.sqlite3").unlink()
    return copy


GAPS = st.sampled_from(["", "", "# a comment\n", "\n", "  # indented\n\n"])


@settings(max_examples=60, deadline=None)
@given(head=st.sampled_from(["", "# header\n", "\n"]),
       gaps=st.lists(GAPS, min_size=1, max_size=600), end=st.sampled_from(["", "# end\n"]))
def test_a_whole_build_records_the_blocks_a_catch_up_would(
        tmp_path_factory: pytest.TempPathFactory, head: str, gaps: list[str], end: str) -> None:
    """The record a cold build writes for a file (its item starts found by their lines alone)
    is the one a catch-up writes after cutting the same bytes item by item."""
    from loa_mem.memory import reread

    text = head + "".join(entry_text(n, f"Fact {n}.") + gap for n, gap in enumerate(gaps)) + end
    path = tmp_path_factory.mktemp("record") / "facts.yaml"
    path.write_bytes(text.encode("utf-8"))
    stat = path.stat()
    signature = (stat.st_mtime_ns, stat.st_size)
    data = path.read_bytes()
    found = spanhash.cut(data, 0)
    assert found is not None
    cut = reread._record_text(signature, len(data), reread._blocks(data, found, 0, len(data)))
    assert reread.built_record(str(path), FACTS, 0, signature) == ("reread:" + FACTS, cut)
    assert reread.built_record(str(path), FACTS, 0, (signature[0] + 1, signature[1])) is None


def test_the_first_edits_after_a_fresh_build_read_as_a_cold_build(
        big: Path, tmp_path: Path) -> None:
    (big / ".git" / "loa-mem" / "index.sqlite3").unlink()
    listed(big)  # a whole build, which records each file's blocks
    from loa_mem.memory.index import Index

    index = Index(str(big / ".git" / "loa-mem" / "index.sqlite3"))
    try:
        assert json.loads(index.meta("reread:" + FACTS) or "{}").get("blocks")
    finally:
        index.close()
    path = big / FACTS
    for number, (kind, at) in enumerate([("edit", 300), ("append", 1), ("lines", 10)]):
        text = path.read_text(encoding="utf-8")
        path.write_text(_apply(text.rstrip("\n") + "\n", kind, at, number) + "\n",
                        encoding="utf-8")
        assert listed(big) == cold(big, tmp_path)
