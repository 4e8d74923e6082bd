"""The session-start block after a pull appended entries, made from the appended entries alone
(no index, no SQLite): the block is what a start from scratch in a copy prints, the next start
is a warm one, and the index catches up when a command reads it. Whatever that path cannot
vouch for goes to the catch-up path, with the same block."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import support
from tests.conftest import FIXED_NOW, run_loa_mem
from tests.test_context_catchup import context, from_scratch, item, pull, recall, remember

PULLED = "loa_mem.integrations.context_pulled"
HEAVY = {"sqlite3", "loa_mem.memory.index", "loa_mem.integrations.context_catchup",
         "loa_mem.memory.store"}


@pytest.fixture
def started(store: Path) -> Path:
    """A store of a few entries whose caches the session start has just written."""
    remember(store, "Use PostgreSQL for the main store.", "decision", "--confidence", "0.95",
             now="2025-12-24T10:30:00Z")
    remember(store, "Flaky parser test when run in parallel.", "error", "--confidence", "0.7",
             now="2026-01-07T10:30:00Z")
    remember(store, "The CI runs on two cores.", "fact")
    remember(store, "Batch SQLite inserts.", "learning")
    context(store)
    return store


def test_a_pull_is_answered_from_the_appended_entries_alone(
        started: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    where = tmp_path_factory.mktemp("copies")
    pull(started, "fact", item("MEM-20260131-pulled01", "Deploys need two approvals.", "fact",
                               0.99),
         item("MEM-20260131-pulled02", "Staging moved to the new host.", "fact", 0.9,
              "2026-06-01T10:00:00Z"),
         item("MEM-20260131-pulled03", "An old note.", "fact", 0.5), event=False)
    block, imported = context(started, imports=True)

    assert "- MEM-20260131-pulled01: Deploys need two approvals. (0.99; pulled)" in block
    assert "· 7 active memories ·" in block
    assert block == from_scratch(started, where)
    assert PULLED in imported and not imported & HEAVY
    assert not {name.split(".")[0] for name in imported} & {"typer", "click", "rich", "yaml"}
    # the next start is a warm one; the index catches up when a command reads it
    again, imported = context(started, imports=True)
    assert again == block and PULLED not in imported and not imported & HEAVY
    assert recall(started) == recall(where / "copy-0")
    blocks = [json.loads(context(started, "--json")[0]),
              json.loads(from_scratch(started, where, "--json"))]
    assert {**blocks[0], "root": ""} == {**blocks[1], "root": ""}


@pytest.mark.parametrize("args", [("--json",), ("--query", "deploys")])
def test_a_start_that_reads_the_index_after_it_catches_the_index_up_without_the_store(
        started: Path, tmp_path_factory: pytest.TempPathFactory, args: tuple[str, ...]) -> None:
    where = tmp_path_factory.mktemp("copies")
    pull(started, "fact", item("MEM-20260131-pulledaa", "Deploys need two approvals.", "fact",
                               0.99), event=False)
    assert PULLED in context(started, imports=True)[1]
    pull(started, "decision", item("MEM-20260131-pulledbb", "Deploys go out on Tuesdays.",
                                   "decision", 0.97), event=True)
    assert PULLED in context(started, imports=True)[1]
    block, imported = context(started, *args, imports=True)
    assert "loa_mem.integrations.context_catchup" in imported
    assert "loa_mem.memory.store" not in imported
    scratch = from_scratch(started, where, *args)
    if args == ("--json",):
        assert {**json.loads(block), "root": ""} == {**json.loads(scratch), "root": ""}
    else:
        assert block == scratch and "MEM-20260131-pulledbb" in block
    assert recall(started) == recall(where / "copy-0")
    assert context(started)[0] == from_scratch(started, where)


def test_pulls_into_several_files_with_events_and_later_starts(
        started: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    where = tmp_path_factory.mktemp("copies")
    # the last start is past the memo's span (an entry expires on 2026-02-06): the catch-up
    # path answers it, the same way
    for number, now in enumerate(["2026-02-01T10:30:00Z", "2026-02-02T08:00:00Z",
                                  "2026-02-04T00:00:00Z", "2026-03-20T00:00:00Z"]):
        pull(started, "decision", item(f"MEM-20260131-dec{number}", f"Decision {number}.",
                                       "decision", 0.9 + number / 100))
        pull(started, "error", item(f"MEM-20260131-err{number}", f"Error {number}.", "error",
                                    0.8, extra="  superseded_by: MEM-20260101-x\n"),
             item(f"MEM-20260131-arc{number}", f"Archived {number}.", "error", 0.95,
                  extra="  archived: true\n"))
        block, imported = context(started, now=now, imports=True)
        assert block == from_scratch(started, where, now=now)
        assert (PULLED in imported and not imported & HEAVY) == (number < 3)


@pytest.mark.parametrize("change", [
    "edit above the end", "replace the file", "expires within the warning window",
    "already expired", "effectiveness record", "an id listed already", "unreadable entry",
    "entry the fast reader leaves to the full parser", "archive file", "as recent as now",
    "continue the last entry", "ranking tie with another score"])
def test_what_the_appended_entries_cannot_vouch_for_gives_the_same_block(
        started: Path, tmp_path_factory: pytest.TempPathFactory, change: str) -> None:
    where = tmp_path_factory.mktemp("copies")
    facts = support.grimoire(started, "fact")
    fact_id = support.entries(started, "fact")[0]["id"]
    new = item("MEM-20260131-pulled01", "Deploys need two approvals.")
    taken = True  # whether the appended entries alone still answer
    if change == "edit above the end":
        facts.write_text(facts.read_text(encoding="utf-8").replace("two cores", "four cores")
                         + new, encoding="utf-8")
        taken = False
    elif change == "replace the file":
        facts.write_text(new + item("MEM-20260131-pulled02", "Second."), encoding="utf-8")
        taken = False
    elif change in ("expires within the warning window", "already expired"):
        expires = "2026-02-03T00:00:00Z" if change.startswith("expires") else "2026-01-02T00:00:00Z"
        pull(started, "fact", item("MEM-20260131-pulled01", "Soon gone.", expires=expires),
             event=False)
        taken = False
    elif change == "effectiveness record":
        pull(started, "fact", new + "  effectiveness:\n    applications: 4\n    successes: 4\n",
             event=False)
        taken = False
    elif change == "an id listed already":
        pull(started, "fact", item(fact_id, "The same id, pulled again."), event=False)
        taken = False
    elif change == "unreadable entry":
        pull(started, "fact", "- id: MEM-20260131-pulled01\n  content: [unclosed\n", event=False)
        taken = False
    elif change == "entry the fast reader leaves to the full parser":
        pull(started, "fact", new.replace("content: Deploys need two approvals.",
                                          'content: "Deploys need \\"two\\" approvals."'),
             event=False)
    elif change == "archive file":
        archive = support.grimoire(started, "fact", archive=True)
        archive.parent.mkdir(parents=True, exist_ok=True)
        archive.write_text(new, encoding="utf-8")
        taken = False  # a grimoire file the side cache saw absent
    elif change == "as recent as now":
        pull(started, "fact", new.replace("2026-01-31T10:00:00Z", FIXED_NOW), event=False)
    elif change == "continue the last entry":
        pull(started, "fact", "  note: continued by hand\n", event=False)
        taken = False
    else:  # the same confidence and time as the fact above: ordered by id, as SQLite does
        stored = support.entries(started, "fact")[0]
        pull(started, "fact", item("MEM-20260101-aaaaaaaa", "Ties with the fact.",
                                   confidence=stored["confidence"]).replace(
            "2026-01-31T10:00:00Z", str(stored["source"]["timestamp"])), event=False)
    block, imported = context(started, imports=True)
    assert block == from_scratch(started, where)
    assert (PULLED in imported and not imported & HEAVY) == taken


def test_a_side_cache_written_before_the_text_records_takes_the_catch_up_path(
        started: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A side cache written by a loa-mem without the `texts` record: the first pull after it
    goes through the catch-up path, which records them; the next pull is answered alone."""
    where = tmp_path_factory.mktemp("copies")
    cache = started / ".git/loa-mem/context.cache"
    import marshal

    magic, value = marshal.loads(cache.read_bytes())
    del value["texts"]
    cache.write_bytes(marshal.dumps((magic, value)))
    for number in range(2):
        pull(started, "fact", item(f"MEM-20260131-pulled0{number}", f"Pulled {number}."),
             event=False)
        block, imported = context(started, imports=True)
        assert block == from_scratch(started, where)
        assert (PULLED in imported and not imported & HEAVY) == (number == 1)


def test_a_remember_after_a_pull_sees_every_entry(
        started: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    where = tmp_path_factory.mktemp("copies")
    pull(started, "fact", item("MEM-20260131-pulledaa", "Deploys need two approvals.", "fact",
                               0.99), event=False)
    assert PULLED in context(started, imports=True)[1]
    remember(started, "Releases go out on Tuesdays.", "fact", "--confidence", "0.97")
    done = run_loa_mem(started, "validate", env={**os.environ, "LOA_MEM_NOW": FIXED_NOW})
    assert done.returncode == 0, done.stdout + done.stderr
    block = context(started)[0]
    assert "MEM-20260131-pulledaa" in block and "Releases go out on Tuesdays." in block
    assert block == from_scratch(started, where)


def test_the_text_records_describe_the_files(
        started: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each record the side cache keeps (signature, CRC-32, line breaks) is that of its file,
    whoever wrote it: a start from scratch after a whole build, the catch-up path, this one."""
    import marshal
    import zlib

    def records(store: Path) -> dict[str, list[int]]:
        _, value = marshal.loads((store / ".git/loa-mem/context.cache").read_bytes())
        return dict(value["texts"])

    def described(store: Path) -> None:
        found = records(store)
        assert len(found) == 5
        for path, (_, size, crc, lines, indent) in found.items():
            data = (store / path).read_bytes()
            assert (size, crc, lines, indent) == (len(data), zlib.crc32(data),
                                                  data.count(b"\n"), 0)

    where = tmp_path_factory.mktemp("copies")
    from_scratch(started, where)  # a whole build, then the side cache from nothing
    described(where / "copy-0")
    pull(started, "fact", item("MEM-20260131-pulledaa", "Deploys need two approvals."),
         event=False)
    assert PULLED in context(started, imports=True)[1]
    described(started)
    pull(started, "fact", item("MEM-20260131-pulledbb", "Soon gone.",
                               expires="2026-02-03T00:00:00Z"), event=False)
    assert "loa_mem.integrations.context_catchup" in context(started, imports=True)[1]
    described(started)
