"""validate checks again only what changed, and reports exactly what a first validate reports:
an entry edited by hand, a change in one file that breaks or mends a link from another or
duplicates an id in it, an entry moved to another line, an entry forgotten since, a config that
changes the rules, a cache that cannot be read; in every output format, with the same exit code.

Each check compares the report with the one validate gives with no cache and no index (a fresh
clone), so it holds whichever way the result was reached.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import Cli
from tests.test_validate import BROKEN, EXPECTED, _append, _entry

FACTS = f"{support.MEMORY}/facts.yaml"
DECISIONS = f"{support.MEMORY}/decisions.yaml"


def report(cli: Cli) -> dict[str, Any]:
    return dict(cli("validate", "--json").json())


def first_report(cli: Cli) -> dict[str, Any]:
    shutil.rmtree(cli.root / ".git" / "loa-mem")
    return report(cli)


def edit(store: Path, rel: str, old: str, new: str) -> None:
    path = store / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def problems(data: dict[str, Any]) -> list[tuple[str, int, str, str | None]]:
    return [(p["path"], p["line"], p["rule"], p["id"]) for p in data["problems"]]


def test_a_second_validate_reports_the_same_problems(cli: Cli, store: Path) -> None:
    _append(store, FACTS, BROKEN)
    first = report(cli)

    assert [(line, rule, memory_id) for _, line, rule, memory_id in problems(first)] == EXPECTED
    assert report(cli) == first


def test_a_hand_edit_is_checked_again(cli: Cli, store: Path) -> None:
    _append(store, FACTS, BROKEN)
    report(cli)
    edit(store, FACTS, "  confidence: 0.5\n", "  confidence: 0.95\n")  # the floor is met
    edit(store, FACTS, "  content: Fine entry.\n", "  content: Fine entry.\n  colour: red\n")
    now = report(cli)

    assert (FACTS, 13, "floor", "MEM-2026-01") not in problems(now)
    assert (FACTS, 6, "schema", "MEM-20260101-001") in problems(now)
    assert now == first_report(cli)


@pytest.mark.parametrize("change", ["deleted", "link removed", "id changed"])
def test_a_change_in_one_file_that_breaks_a_link_from_another_is_reported(
        cli: Cli, store: Path, change: str) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001", extra="  superseded_by: MEM-20260101-002\n"))
    _append(store, DECISIONS, _entry("MEM-20260101-002", "decision",
                                     "  supersedes: MEM-20260101-001\n"
                                     "  related_memories: [MEM-20260101-001]\n"))
    assert report(cli)["problems"] == []
    if change == "deleted":
        edit(store, FACTS, _entry("MEM-20260101-001",
                                  extra="  superseded_by: MEM-20260101-002\n"), "")
    elif change == "link removed":
        edit(store, FACTS, "  superseded_by: MEM-20260101-002\n", "")
    else:
        edit(store, FACTS, "id: MEM-20260101-001", "id: MEM-20260101-003")
    now = report(cli)

    assert {(path, rule) for path, _, rule, _ in problems(now)} >= {(DECISIONS, "chain")}
    if change != "link removed":
        assert (DECISIONS, 11, "related", "MEM-20260101-002") in problems(now)
    assert now == first_report(cli)


def test_an_entry_copied_into_another_file_is_a_duplicate_in_both(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001"))
    _append(store, DECISIONS, _entry("MEM-20260101-002", "decision"))
    assert report(cli)["problems"] == []
    _append(store, DECISIONS, _entry("MEM-20260101-001"))
    now = report(cli)

    assert {(p, r) for p, _, r, _ in problems(now)} >= {(FACTS, "unique-id"),
                                                        (DECISIONS, "unique-id")}
    assert now == first_report(cli)


def test_a_problem_follows_its_entry_to_its_new_line(cli: Cli, store: Path) -> None:
    low = _entry("MEM-20260101-009").replace("confidence: 0.9", "confidence: 0.5")
    _append(store, FACTS, low)
    assert problems(report(cli)) == [(FACTS, 6, "floor", "MEM-20260101-009")]
    path = store / FACTS
    header, _, rest = path.read_text(encoding="utf-8").partition("- id:")
    path.write_text(header + _entry("MEM-20260101-001") + "- id:" + rest, encoding="utf-8")

    assert problems(report(cli)) == [(FACTS, 13, "floor", "MEM-20260101-009")]


def test_a_config_change_applies_to_unchanged_entries(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-009").replace("confidence: 0.9",
                                                             "confidence: 0.75"))
    assert problems(report(cli)) == [(FACTS, 6, "floor", "MEM-20260101-009")]
    config = store / ".loa.config.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("confidence_required: 0.8", "confidence_required: 0.7", 1),
                      encoding="utf-8")

    assert report(cli)["problems"] == []


ARCHIVED = f"{support.ARCHIVE}/facts.yaml"


def _problem_store(store: Path) -> None:
    """Problems of every kind, in three files: own problems, a duplicate across files, a link
    to nowhere, a one-way chain, an entry in the archive, an item that is not a mapping."""
    _append(store, FACTS, BROKEN + "- just a string\n")
    _append(store, DECISIONS, _entry("MEM-20260101-003", "decision",
                                     "  supersedes: MEM-20260101-005\n"
                                     "  related_memories: [MEM-20260101-077]\n"))
    _append(store, ARCHIVED, _entry("MEM-20260101-001"))


@pytest.mark.parametrize("form", ["text", "json", "github"])
def test_output_and_exit_code_from_the_cache_are_a_first_validate_s(
        cli: Cli, store: Path, form: str) -> None:
    _problem_store(store)
    first = cli("validate", "--format", form)
    cached = cli("validate", "--format", form)
    shutil.rmtree(store / ".git" / "loa-mem")
    again = cli("validate", "--format", form)

    assert first.code == 1
    assert (cached.code, cached.stdout) == (first.code, first.stdout) == (again.code, again.stdout)


def test_a_duplicate_removed_from_one_file_is_gone_from_the_other(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001"))
    _append(store, DECISIONS, _entry("MEM-20260101-001", "decision"))
    assert {(p, r) for p, _, r, _ in problems(report(cli))} == {(FACTS, "unique-id"),
                                                                (DECISIONS, "unique-id")}
    edit(store, DECISIONS, _entry("MEM-20260101-001", "decision"), "")
    now = report(cli)

    assert now["problems"] == []
    assert now == first_report(cli)


def test_a_link_mended_in_another_file_is_no_longer_reported(cli: Cli, store: Path) -> None:
    _append(store, FACTS, _entry("MEM-20260101-001", extra="  superseded_by: MEM-20260101-002\n"))
    assert problems(report(cli)) == [(FACTS, 10, "chain", "MEM-20260101-001")]
    _append(store, DECISIONS, _entry("MEM-20260101-002", "decision",
                                     "  supersedes: MEM-20260101-001\n"))
    now = report(cli)

    assert now["problems"] == []
    assert now == first_report(cli)


def test_an_entry_forgotten_since_turns_a_link_into_a_warning(cli: Cli, store: Path) -> None:
    """The facts file is unchanged: the events log alone says the id was forgotten."""
    _append(store, FACTS, _entry("MEM-20260101-001",
                                 extra="  related_memories: [MEM-20250101-001]\n"))
    assert [p["severity"] for p in report(cli)["problems"]] == ["error"]
    with (store / support.MEMORY / "events.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"op": "forget", "ids": ["MEM-20250101-001"], "time": "2026-01-01T00:00:00Z", '
                  '"actor": "user:x", "reason": "wrong"}\n')
    now = report(cli)

    assert [p["severity"] for p in now["problems"]] == ["warning"]
    assert now == first_report(cli)


def test_an_unreadable_cache_is_checked_again(cli: Cli, store: Path) -> None:
    _problem_store(store)
    first = report(cli)
    (store / ".git" / "loa-mem" / "validate.json").write_text('{"stamp": 1, "files": [', "utf-8")

    assert report(cli) == first


def test_a_file_emptied_by_accident_is_reported_every_time(cli: Cli, store: Path) -> None:
    support.remember(cli, "A fact worth keeping.", "fact")
    (store / FACTS).write_text("", encoding="utf-8")

    for _ in range(2):
        outcome = cli("validate", "--json")
        assert outcome.code == 1
        assert [(p["path"], p["rule"]) for p in outcome.json()["problems"]] == [(FACTS, "yaml")]
