"""Files keep what people write in them (spec section 1): in a hand-written grimoire with
comments, odd quoting, odd indentation and its own key order, every command changes only the
lines it is about. Each result is compared with a golden file in tests/golden/ (regenerate with
UPDATE_GOLDEN=1 after checking the diff by eye; ids a command mints are random, so they are
replaced by <ID1>, <ID2>, ... in both), and checked line by line: every line
outside the entries a command touched is byte-identical, and every comment inside a touched
entry survives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loa_mem.core import yamlio
from tests import support
from tests.conftest import Cli, git

GOLDEN = Path(__file__).parent / "golden"
INPUT = (GOLDEN / "learnings.input.yaml").read_text(encoding="utf-8")
FIRST, SECOND, THIRD = "MEM-20260115-001", "MEM-20260115-002", "MEM-20260115-003"

# name: (command, entries it edits in place, entries it removes from the file)
OPS: dict[str, tuple[tuple[str, ...], set[str], set[str]]] = {
    "remember": (("remember", "Pin the Node version in CI.", "-c", "learning", "--json"), set(),
                 set()),
    "supersede": (("supersede", SECOND, "Folded content, now on one line.", "--json"), {SECOND},
                  set()),
    "feedback": (("feedback", THIRD, "--success"), {THIRD}, set()),
    "archive": (("archive", FIRST), set(), {FIRST}),
    "forget": (("forget", THIRD, "--reason", "no longer true"), set(), {THIRD}),
}


@pytest.fixture
def hand_written(cli: Cli, store: Path) -> Path:
    path = support.grimoire(store, "learning")
    path.write_text(INPUT, encoding="utf-8")
    git(store, "commit", "-q", "-m", "hand-written learnings", "--", str(path))
    cli.ok("validate")
    return path


def _spans() -> dict[str, tuple[int, int]]:
    return {item.data["id"]: (item.first_line, item.last_line)
            for item in yamlio.load_list(INPUT, "input").items}


def _golden(name: str, actual: str) -> str:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    return path.read_text(encoding="utf-8")


def _is_subsequence(needles: list[str], haystack: list[str]) -> bool:
    found = iter(haystack)
    return all(any(line == candidate for candidate in found) for line in needles)


@pytest.mark.parametrize("name", list(OPS))
def test_a_command_changes_only_the_lines_it_is_about(cli: Cli, hand_written: Path,
                                                      name: str) -> None:
    args, edited, removed = OPS[name]
    outcome = cli.ok(*args)
    minted = [support.assert_new_id(outcome.json()["id"])] if "--json" in args else []
    actual = hand_written.read_text(encoding="utf-8")

    normalised = support.normalise_ids(actual, minted)
    assert normalised == _golden(f"{name}.yaml", normalised)
    spans = _spans()
    lines = INPUT.splitlines(keepends=True)
    touched = {n for memory_id in edited | removed
               for n in range(spans[memory_id][0], spans[memory_id][1] + 1)}
    untouched = [line for n, line in enumerate(lines, 1) if n not in touched]
    assert _is_subsequence(untouched, actual.splitlines(keepends=True))
    for memory_id in edited:
        first, last = spans[memory_id]
        for line in lines[first - 1:last]:
            if "#" in line:
                comment = line[line.index("#"):]
                assert comment in actual, comment
    for memory_id in removed:
        assert f"id: {memory_id}" not in actual
    cli.ok("validate")


def test_edits_keep_the_lines_of_the_edited_entry(cli: Cli, hand_written: Path) -> None:
    # The odd indentation of the second entry and the indented tag list of the third stay
    # exactly as written; the edit only adds lines.
    cli.ok("feedback", SECOND, "--failure")
    cli.ok("feedback", THIRD, "--failure")
    actual = hand_written.read_text(encoding="utf-8").splitlines(keepends=True)

    assert _is_subsequence(INPUT.splitlines(keepends=True), actual)


def test_an_archived_entry_keeps_its_comments_in_the_archive(cli: Cli, store: Path,
                                                             hand_written: Path) -> None:
    cli.ok("archive", FIRST)
    archived = support.grimoire(store, "learning", archive=True).read_text(encoding="utf-8")

    assert archived == _golden("archive.archived.yaml", archived)
    assert "# the first one" in archived
    assert "# content first, because it matters most" in archived
    assert "'Run the migrations before the seed script; otherwise \"users\" is empty.'" in (
        archived)


def test_restore_after_forget_puts_the_hand_written_text_back(cli: Cli,
                                                              hand_written: Path) -> None:
    spans = _spans()
    first, last = spans[SECOND]
    original = "".join(INPUT.splitlines(keepends=True)[first - 1:last])
    cli.ok("forget", SECOND, "--reason", "testing restore")
    cli.ok("restore", SECOND)

    assert original in hand_written.read_text(encoding="utf-8")
    cli.ok("validate")
