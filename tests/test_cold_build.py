"""The index built whole: after a fresh clone, a deleted index, or an index an older loa-mem
version wrote. Recall finds what the files say, the full-text index stays whole as entries
change afterwards, and nothing of a build is left behind."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loa_mem.memory.indexrows import key_offsets, key_text
from tests import support
from tests.conftest import Cli, git, run_loa_mem

FACTS = f"{support.MEMORY}/facts.yaml"


def ids(root: Path, *query: str) -> list[str]:
    done = run_loa_mem(root, "recall", *query, "--limit", "50", "--json")
    assert done.returncode == 0, done.stderr
    return [r["id"] for r in json.loads(done.stdout)["results"]]


def cache(root: Path) -> Path:
    return root / ".git" / "loa-mem"


def full_text_whole(root: Path) -> None:
    """FTS5's own check: its index holds exactly the words of the rows it indexes."""
    db = sqlite3.connect(cache(root) / "index.sqlite3")
    try:
        db.execute("INSERT INTO entry_text(entry_text, rank) VALUES('integrity-check', 1)")
    finally:
        db.close()


def remembered(cli: Cli) -> list[str]:
    return [support.remember(cli, f"Fact {n} about {word}.", "fact", "-t", f"t{n}")
            for n, word in enumerate(["caching", "queues", "logging", "tracing", "deploys"])]


def test_a_fresh_clone_finds_what_the_original_finds_and_keeps_no_build_files(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    remembered(cli)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))

    assert ids(clone, "queues logging") == ids(store, "queues logging")
    assert ids(clone, "tracing") == ids(store, "tracing")
    assert not list(cache(clone).glob("*build-*"))
    full_text_whole(clone)


def test_an_index_written_by_an_older_version_is_rebuilt(cli: Cli, store: Path) -> None:
    facts = remembered(cli)
    run_loa_mem(store, "recall")
    index = cache(store) / "index.sqlite3"
    db = sqlite3.connect(index)
    with db:  # what an older version left: its schema number, rows the files no longer hold
        db.execute("UPDATE meta SET value='11' WHERE key='schema'")
        db.execute("DELETE FROM files")
        db.execute("UPDATE entries SET id='MEM-20260101-ghostxyz'")
    db.close()

    assert sorted(ids(store, "caching queues logging tracing deploys")) == sorted(facts)
    assert "MEM-20260101-ghostxyz" not in ids(store)
    full_text_whole(store)


def test_words_of_changed_and_forgotten_entries_leave_the_full_text_index(
        cli: Cli, store: Path) -> None:
    facts = remembered(cli)
    (cache(store) / "index.sqlite3").unlink()
    cli.ok("forget", facts[1], "--reason", "obsolete")
    path = store / FACTS
    path.write_text(path.read_text(encoding="utf-8").replace("about logging", "about kafka"),
                    encoding="utf-8")

    assert ids(store, "queues") == []
    assert ids(store, "logging") == []
    assert ids(store, "kafka") == [facts[2]]
    full_text_whole(store)


def test_what_a_killed_build_left_is_cleared_by_the_next_build(cli: Cli, store: Path) -> None:
    facts = remembered(cli)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    leftover = cache(store) / f"index.sqlite3.build-{gone}"
    leftover.write_bytes(b"half a build")
    (cache(store) / "index.sqlite3").unlink()

    assert ids(store, "deploys") == [facts[4]]
    assert not leftover.exists()


def test_a_file_that_does_not_parse_is_named_and_the_others_are_indexed(
        cli: Cli, store: Path) -> None:
    remembered(cli)
    decision = support.remember(cli, "Use queues for deploys.", "decision")
    (store / FACTS).write_text("- id: [unclosed\n", encoding="utf-8")
    (cache(store) / "index.sqlite3").unlink()

    failed = run_loa_mem(store, "recall", "queues")
    assert failed.returncode == 1
    assert FACTS in failed.stderr and "Traceback" not in failed.stderr
    checked = run_loa_mem(store, "validate")
    assert FACTS in checked.stdout + checked.stderr
    git(store, "checkout", "--", FACTS)
    assert decision in ids(store, "queues")


_keys = st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=8)


@given(_keys, st.lists(st.integers(0, 500), min_size=8, max_size=8), st.booleans())
def test_key_lines_read_back_as_stored(keys: list[str], lines: list[int], same: bool) -> None:
    offsets = dict(zip(keys, lines, strict=False))
    data: Any = {k: None for k in (keys if same else reversed(keys))}
    assert key_offsets(data, key_text(data, offsets)) == offsets


def test_the_first_recall_in_a_fresh_clone_needs_no_full_command_line(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    facts = remembered(cli)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    done = run_loa_mem(clone, "recall", "tracing", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = {line.split("|")[-1].strip().split(".")[0] for line in done.stderr.splitlines()
                if line.startswith("import time:")}

    assert [r["id"] for r in json.loads(done.stdout)["results"]] == [facts[3]]
    assert not imported & {"typer", "click", "rich"}


def test_first_commands_started_together_in_a_fresh_clone_agree(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    facts = remembered(cli)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    started = [subprocess.Popen([sys.executable, "-m", "loa_mem", "recall", "queues", "--json"],
                                cwd=clone, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for _ in range(4)]
    outputs = [process.communicate() for process in started]

    assert all(process.returncode == 0 for process in started), outputs
    assert {tuple(r["id"] for r in json.loads(out)["results"]) for out, _ in outputs} == {
        (facts[1],)}
    assert ids(clone, "deploys") == [facts[4]]
    full_text_whole(clone)


# 2,000 entries are read in parts by the building process itself, 4,000 (over 1 MB) by two
# forked processes
@pytest.mark.parametrize("count", [2000, 4000])
@pytest.mark.parametrize("odd", [False, True])
def test_a_large_file_read_in_parts_gives_every_entry_its_lines(
        cli: Cli, store: Path, odd: bool, count: int) -> None:
    ids_in_order = [f"MEM-20260201-{n:08d}" for n in range(count)]
    items = [f"- id: {memory_id}\n  category: fact\n  content: Zebra note {n} on a large "
             f"file, long enough to fill the part of a file that one process reads.\n"
             f"  confidence: 0.9\n  source:\n    session_id: s\n"
             f"    timestamp: 2026-02-01T10:00:00Z\n  ttl: permanent\n  expires_at: null\n"
             f"  tags: [zebra]\n" for n, memory_id in enumerate(ids_in_order)]
    if odd:  # a hand edit the fast reader leaves to the full parser
        head, _, rest = items[1500].partition("  content: ")
        items[1500] = head + '  content: "Zebra note 1500, quoted."\n' + rest.split("\n", 1)[1]
    text = "".join(items)
    assert len(text) > 2 * 256 * 1024
    (store / FACTS).write_text(text, encoding="utf-8")
    (cache(store) / "index.sqlite3").unlink(missing_ok=True)

    done = run_loa_mem(store, "recall", "zebra", "--limit", "5000", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    found = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    lines = text.split("\n")
    expected = {line[len("- id: "):]: number for number, line in enumerate(lines, start=1)
                if line.startswith("- id: ")}
    assert {memory_id: r["line"] for memory_id, r in found.items()} == expected
    assert found[ids_in_order[1500]]["content"].startswith(
        "Zebra note 1500, quoted." if odd else "Zebra note 1500 on")
    full_text_whole(store)
    assert not list(cache(store).glob("*build-*"))


def _large_file(count: int = 3000) -> list[str]:
    """Entries enough for a file read in parts (over twice a part's 256 KB)."""
    return [f"- id: MEM-20260201-{n:08d}\n  category: fact\n  content: Zebra note {n} on a "
            f"large file, long enough to fill the part of a file that one process reads.\n"
            f"  confidence: 0.9\n  source:\n    session_id: s\n"
            f"    timestamp: 2026-02-01T10:00:00Z\n  tags: [zebra]\n" for n in range(count)]


@pytest.mark.parametrize("edit", ["conflict", "undecodable"])
def test_a_fault_late_in_a_large_file_is_named_at_its_line(
        cli: Cli, store: Path, edit: str) -> None:
    """A part of a large file that cannot be read apart sends the whole file to the reader
    that names the fault: the same file and line as when the file is read whole."""
    items = _large_file()
    assert len("".join(items)) > 2 * 256 * 1024
    line = sum(item.count("\n") for item in items[:1800]) + 2
    if edit == "conflict":
        items[1800] = items[1800].replace("  category: fact\n", "<<<<<<< HEAD\n")
    data = "".join(items).encode()
    if edit == "undecodable":
        at = data.index(b"Zebra note 1800")
        data = data[:at] + b"\xff" + data[at + 1:]
        line += 1
    (store / FACTS).write_bytes(data)
    (cache(store) / "index.sqlite3").unlink(missing_ok=True)

    failed = run_loa_mem(store, "recall", "zebra")
    assert failed.returncode == 1
    assert f"{FACTS}:{line}:" in failed.stderr and "Traceback" not in failed.stderr


def test_an_alias_in_a_late_part_reads_the_anchor_of_an_early_one(
        cli: Cli, store: Path) -> None:
    items = _large_file()
    items[10] = items[10].replace("content: Zebra", "content: &note Zebra")
    head, _, rest = items[2900].partition("  content: ")
    items[2900] = head + "  content: *note\n" + rest.split("\n", 1)[1]
    (store / FACTS).write_text("".join(items), encoding="utf-8")
    (cache(store) / "index.sqlite3").unlink(missing_ok=True)

    done = run_loa_mem(store, "show", "MEM-20260201-00002900", "--json")
    assert done.returncode == 0, done.stderr
    assert "Zebra note 10 on a large file" in done.stdout
    full_text_whole(store)
