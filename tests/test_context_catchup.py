"""The session-start block after a pull appended entries: the index and the side cache catch up
without opening the store, and the block is what a start from scratch in a copy (no index, no
side cache) prints. Anything but appended entries takes the slow path, with the same block."""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import support
from tests.conftest import FIXED_NOW, run_loa_mem

CACHE = ".git/loa-mem"
EVENTS = f"{support.MEMORY}/events.jsonl"


def context(store: Path, *args: str, now: str = FIXED_NOW,
            imports: bool = False) -> tuple[str, set[str]]:
    """The block `loa-mem context` prints, and the loa_mem modules it imported."""
    env = {"LOA_MEM_NOW": now, **({"PYTHONPROFILEIMPORTTIME": "1"} if imports else {})}
    done = run_loa_mem(store, "context", *args, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    return done.stdout, imported


def from_scratch(store: Path, where: Path, *args: str, now: str = FIXED_NOW) -> str:
    """The block in a copy of the repository without index and side cache."""
    copy = where / f"copy-{len(list(where.iterdir()))}"
    shutil.copytree(store, copy)
    for name in ("index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm", "context.cache"):
        (copy / CACHE / name).unlink(missing_ok=True)
    return context(copy, *args, now=now)[0]


def recall(store: Path) -> object:
    done = run_loa_mem(store, "recall", "--limit", "500", "--include-expired",
                       "--include-superseded", "--include-archived", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["results"]


def item(memory_id: str, content: str, category: str = "fact", confidence: float = 0.9,
         expires: str = "null", extra: str = "") -> str:
    return (f"- id: {memory_id}\n  category: {category}\n  content: {content}\n"
            f"  summary: {content}\n  confidence: {confidence}\n  source:\n"
            "    session_id: pulled\n    timestamp: 2026-01-31T10:00:00Z\n"
            f"  ttl: permanent\n  expires_at: {expires}\n  tags: [pulled]\n{extra}")


def pull(store: Path, category: str, *items: str, event: bool = True) -> None:
    """What a `git pull` of a teammate's remembered entries brings: the entries appended to
    one grimoire file and, with `event`, their event appended to the events log."""
    with open(support.grimoire(store, category), "a", encoding="utf-8") as handle:
        handle.write("".join(items))
    if event:
        with open(store / EVENTS, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"op": "remember", "ids": [], "time": FIXED_NOW,
                                     "actor": "user:teammate", "reason": None}) + "\n")


def remember(store: Path, content: str, category: str, *options: str,
             now: str = FIXED_NOW) -> str:
    """Through a process of its own, as every command here: this test process copies the
    repository, and must hold no connection to its index while it does (closing any file
    descriptor of the index file drops the process's locks on it)."""
    done = run_loa_mem(store, "remember", content, "-c", category, *options, "--json",
                       env={**os.environ, "LOA_MEM_NOW": now})
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


@pytest.fixture
def entries(store: Path) -> dict[str, str]:
    return {
        "decision": remember(store, "Use PostgreSQL for the main store.", "decision",
                             "--confidence", "0.95", now="2025-12-24T10:30:00Z"),
        "error": remember(store, "Flaky parser test when run in parallel.", "error",
                          "--confidence", "0.7", now="2026-01-07T10:30:00Z"),
        "fact": remember(store, "The CI runs on two cores.", "fact"),
        "learning": remember(store, "Batch SQLite inserts.", "learning"),
    }


def test_a_pull_is_caught_up_without_opening_the_store(
        store: Path, entries: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    where = tmp_path_factory.mktemp("copies")
    context(store)
    pull(store, "fact", item("MEM-20260131-pulled01", "Deploys need two approvals.", "fact",
                             0.99),
         item("MEM-20260131-pulled02", "Old staging host is gone.", "fact", 0.9,
              "2026-02-04T10:00:00Z"))
    block, imported = context(store, imports=True)

    assert "- MEM-20260131-pulled01: Deploys need two approvals. (0.99; pulled)" in block
    assert "MEM-20260131-pulled02" in block.split("## Memories")[0]  # expiring soon
    assert "· 6 active memories ·" in block
    assert block == from_scratch(store, where)
    assert "loa_mem.integrations.context_catchup" in imported
    assert "loa_mem.memory.store" not in imported and "loa_mem.core.git" not in imported
    assert not {name.split(".")[0] for name in imported} & {"typer", "click", "rich", "yaml"}
    # the index caught up as the store catches it up, and the caches are fresh again
    copy = where / "copy-0"
    assert recall(store) == recall(copy)
    assert context(store, imports=True)[1].isdisjoint({"loa_mem.integrations.context_catchup"})


@pytest.mark.parametrize("change", ["edit above the end", "continue the last entry",
                                    "delete the file", "change the config", "pin a file",
                                    "unreadable entry"])
def test_anything_but_appended_entries_takes_the_slow_path_with_the_same_block(
        store: Path, entries: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
        change: str) -> None:
    where = tmp_path_factory.mktemp("copies")
    context(store)
    facts = support.grimoire(store, "fact")
    if change == "edit above the end":
        pull(store, "fact", item("MEM-20260131-pulled01", "Deploys need two approvals."))
        facts.write_text(facts.read_text(encoding="utf-8").replace("two cores", "four cores"),
                         encoding="utf-8")
    elif change == "continue the last entry":
        pull(store, "fact", "  note: continued by hand\n")
    elif change == "delete the file":
        support.grimoire(store, "learning").unlink()
    elif change == "change the config":
        pull(store, "fact", item("MEM-20260131-pulled01", "Deploys need two approvals."))
        config = store / ".loa.config.yaml"
        config.write_text(config.read_text(encoding="utf-8") + "context:\n  per_category: 1\n",
                          encoding="utf-8")
    elif change == "pin a file":
        pull(store, "fact", item("MEM-20260131-pulled01", "Deploys need two approvals."))
        (store / "design.md.meta.yml").write_text("title: Design\npin: true\n",
                                                  encoding="utf-8")
    else:
        pull(store, "fact", "- id: MEM-20260131-pulled01\n  content: [unclosed\n")
    block, imported = context(store, imports=True)
    assert "loa_mem.memory.store" in imported
    assert block == from_scratch(store, where)


EXAMPLES = itertools.count()
STEPS = st.lists(st.tuples(
    st.sampled_from(["pull", "pull", "pull", "events", "edit", "comment", "remember", "pin",
                     "nothing", "several", "archive", "quoted", "replace", "plain", "plain"]),
    st.sampled_from(["fact", "decision", "learning", "error"]),
    st.integers(0, 40), st.integers(0, 20)), min_size=1, max_size=5)


def _pulled(example: int, number: int, category: str, at: int, plain: bool = False) -> str:
    """1 to 3 entries of `category`: some below the ranking's minimum confidence, expiring
    soon, later or already, superseded or archived (`plain`: none expiring within a week)."""
    found = []
    for n in range(1 + at % 3):
        kind = [0, 2, 4, 5][(at + n) % 4] if plain else (at + n) % 6
        expires = {1: "2026-02-03T00:00:00Z", 2: "2026-06-01T00:00:00Z",
                   3: "2026-01-01T00:00:00Z"}.get(kind, "null")
        extra = {4: "  superseded_by: MEM-20260101-x\n", 5: "  archived: true\n"}.get(kind, "")
        memory_id = f"MEM-20260131-e{example:03d}s{number}n{n}"
        found.append(item(memory_id, f"Pulled {category} {example} {number} {n} on kafka.",
                          category, [0.5, 0.75, 0.9, 0.99][(at + n) % 4], expires, extra))
    return "".join(found)


def _quoted(text: str) -> str:
    """`text` with its first content double-quoted, with escapes: the full parser reads it."""
    start = text.index("  content: ") + len("  content: ")
    end = text.index("\n", start)
    return f'{text[:start]}"Quoted \\"{text[start:end]}\\""{text[end:]}'


def _edit(store: Path, _: str, category: str, at: int) -> None:
    path = support.grimoire(store, category)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("confidence: 0.", "confidence: 0.6", 1), encoding="utf-8")


def _archive(store: Path, entries: str, category: str, at: int) -> None:
    archive = support.grimoire(store, category, archive=True)
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive, "a", encoding="utf-8") as handle:
        handle.write(entries)


def _replace(store: Path, entries: str, category: str, at: int) -> None:
    """The file replaced by another that begins otherwise."""
    path = support.grimoire(store, category)
    path.write_text(entries + path.read_text(encoding="utf-8"), encoding="utf-8")


# what a step changes outside loa-mem, from the entries it brings
_OUTSIDE: dict[str, Callable[[Path, str, str, int], None]] = {
    "pull": lambda store, entries, category, at: pull(store, category, entries,
                                                      event=at % 2 == 0),
    "events": lambda store, entries, category, at: pull(store, category, event=True),
    "edit": _edit,
    "comment": lambda store, entries, category, at: pull(store, category,
                                                         f"# pulled {at}\n\n", event=False),
    "archive": _archive,
    # an entry the fast reader leaves to the full parser
    "quoted": lambda store, entries, category, at: pull(store, category, _quoted(entries),
                                                        event=False),
    "replace": _replace,
}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_any_series_of_pulls_prints_what_a_start_from_scratch_prints(
        store: Path, entries: dict[str, str],
        tmp_path_factory: pytest.TempPathFactory,
        steps: list[tuple[str, str, int, int]]) -> None:
    where = tmp_path_factory.mktemp("copies")
    example = next(EXAMPLES)
    hours = 0
    context(store)
    for number, (kind, category, at, later) in enumerate(steps):
        if kind in _OUTSIDE:
            _OUTSIDE[kind](store, _pulled(example, number, category, at), category, at)
        elif kind == "remember":
            remember(store, f"Remembered {example} {number} {at} about kafka.", category,
                     "--confidence", "0.95")
        elif kind == "several":  # one pull, entries in two files
            pull(store, category, _pulled(example, number, category, at), event=False)
            pull(store, "preference", _pulled(example, number + 50, "preference", at + 1),
                 event=False)
        elif kind == "plain":  # a pull the appended entries alone answer (context_pulled)
            pull(store, category, _pulled(example, number, category, at, plain=True),
                 event=at % 3 == 0)
        elif kind == "pin":  # a pull that brings a pinned file besides entries
            (store / f"doc{example}-{number}.md.meta.yml").write_text(
                f"title: Doc {number}\npin: true\n", encoding="utf-8")
            pull(store, category, _pulled(example, number, category, at))
        hours += later
        now = f"2026-02-{1 + hours // 24:02d}T{hours % 24:02d}:30:00Z"
        if at % 5:
            assert context(store, now=now)[0] == from_scratch(store, where, now=now)
        else:  # the JSON block: read from the index, not the memo
            blocks = [json.loads(context(store, "--json", now=now)[0]),
                      json.loads(from_scratch(store, where, "--json", now=now))]
            assert {**blocks[0], "root": ""} == {**blocks[1], "root": ""}
