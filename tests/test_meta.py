"""Sidecars (`<file>.meta.yml`): meta show and --set, pin and unpin, hotness from its four
weighted factors, and validate's coverage of sidecars and manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests import ws_support as ws
from tests.conftest import FIXED_NOW, Cli


def test_meta_shows_the_defaults_without_writing_anything(cli: Cli, store: Path) -> None:
    ws.write(store, "notes/plan.md", "# Plan\n")
    before, commits = support.snapshot(store), support.commit_count(store)
    data = cli.ok("meta", "notes/plan.md", "--json").json()

    assert data["exists"] is False
    assert data["sidecar"] == "notes/plan.md.meta.yml"
    assert data["meta"]["title"] == "plan"
    assert data["meta"]["summary"] == "(needs summary)"
    assert (data["meta"]["hotness"], data["meta"]["pin"], data["meta"]["tags"]) == (0.5, False,
                                                                                    [])
    assert data["hotness"] == 0.0
    assert data["weights"] == {"recent_touches": 0.3, "in_working_set": 0.2,
                               "model_hot_listed": 0.3, "user_pinned": 0.2}
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_meta_set_writes_the_fields_and_commits(cli: Cli, store: Path) -> None:
    ws.write(store, "tool/out.json", "{}\n")
    data = cli.ok("meta", "tool/out.json", "--set", "title=Python Output #1", "--set",
                  "tags=data, python", "--set", "custom.owner=alice", "--set",
                  "custom.rows=10432", "--json", now="2026-02-02T09:00:00Z").json()

    written = ws.sidecar(store, "tool/out.json")
    assert written["title"] == "Python Output #1"
    assert written["tags"] == ["data", "python"]
    assert written["custom"] == {"owner": "alice", "rows": 10432}
    assert written["provenance"]["created_at"] == "2026-02-02T09:00:00Z"
    assert data["changed"] == ["title", "tags", "custom.owner", "custom.rows"]
    assert support.changed_files(store) == ["grimoires/loa/memory/events.jsonl",
                                            "tool/out.json.meta.yml"]
    assert cli("validate").code == 0


def test_meta_set_keeps_hand_written_comments(cli: Cli, store: Path) -> None:
    ws.write(store, "a.txt", "x\n")
    ws.write(store, "a.txt.meta.yml", "# written by hand\ntitle: 'A'  # the short name\n"
             "pin: false\n")
    cli.ok("meta", "a.txt", "--set", "summary=The A file")

    text = (store / "a.txt.meta.yml").read_text(encoding="utf-8")
    assert text.startswith("# written by hand\ntitle: 'A'  # the short name\n")
    assert "summary: The A file" in text


@pytest.mark.parametrize(("assignment", "said"), [
    ("hotness=1", "computed by loa-mem"),
    ("provenance.created_by=me", "computed by loa-mem"),
    ("colour=red", "unknown sidecar field in --set"),
    ("pin=maybe", "--set pin is not true or false"),
    ("title", "not key=value"),
])
def test_meta_set_refuses_what_it_cannot_set(cli: Cli, store: Path, assignment: str,
                                             said: str) -> None:
    ws.write(store, "a.txt", "x\n")
    before = support.snapshot(store)
    outcome = cli("meta", "a.txt", "--set", assignment)

    assert outcome.code == 1
    assert said in outcome.stderr
    assert support.snapshot(store) == before


def test_meta_of_a_missing_file_or_of_loa_mems_own_files_is_refused(cli: Cli) -> None:
    assert "no file ghost.txt" in cli("meta", "ghost.txt").stderr
    assert "has no sidecar" in cli("meta", ".loa.config.yaml").stderr


def test_pin_and_unpin_set_the_flag_and_pin_joins_the_working_set(cli: Cli, store: Path) -> None:
    ws.write(store, "constitution-notes.md", "x\n")
    data = cli.ok("pin", "constitution-notes.md", "--json").json()

    assert ws.sidecar(store, "constitution-notes.md")["pin"] is True
    assert ws.hot_paths(store) == ["constitution-notes.md"]
    assert data["hotness_factors"]["user_pinned"] == 1.0
    assert data["hotness_factors"]["in_working_set"] == 1.0
    assert support.message(store).startswith("loa-mem pin: constitution-notes.md")
    again = cli("pin", "constitution-notes.md")
    assert again.code == 1 and "already pinned" in again.stderr

    cli.ok("unpin", "constitution-notes.md")
    assert ws.sidecar(store, "constitution-notes.md")["pin"] is False
    assert ws.hot_paths(store) == ["constitution-notes.md"]


def _turns(cli: Cli, store: Path, count: int) -> None:
    ws.write(store, "other.txt", "x\n")
    for _ in range(count):
        cli.ok("advise", "--hot", "other.txt", "--why", "busy elsewhere")


HOTNESS = [  # turns since the touch, pinned, on the cold list, expected hotness
    (0, False, False, 0.8),   # .3x1 + .2x1 + .3x1 + .2x0
    (4, False, False, 0.68),  # .3x(1 - 4/10) + .2 + .3
    (4, True, False, 0.88),   # + .2 pinned
    (10, False, False, 0.5),  # recent touches at 0 after untouched_turns (10)
    (2, False, True, 0.51),   # the cold hint is a third turn: .3x0.7 + .2x0 (cold) + .3
]


@pytest.mark.parametrize(("idle", "pinned", "cold", "expected"), HOTNESS)
def test_hotness_is_the_weighted_sum_of_the_four_factors(
        cli: Cli, store: Path, idle: int, pinned: bool, cold: bool, expected: float) -> None:
    ws.write(store, "a.txt", "x\n")
    cli.ok("advise", "--hot", "a.txt", "--why", "reading")
    if pinned:
        cli.ok("pin", "a.txt")
    _turns(cli, store, idle)
    if cold:
        cli.ok("advise", "--cold", "a.txt", "--why", "done")
    data = cli.ok("meta", "a.txt", "--json").json()

    assert data["hotness"] == expected


def test_pin_hotness_is_written_to_the_sidecar(cli: Cli, store: Path) -> None:
    ws.write(store, "a.txt", "x\n")
    cli.ok("advise", "--hot", "a.txt", "--why", "reading")
    cli.ok("pin", "a.txt")

    assert ws.sidecar(store, "a.txt")["hotness"] == 1.0
    assert ws.sidecar(store, "a.txt")["provenance"]["updated_at"] == FIXED_NOW


BROKEN = [
    ("a.txt.meta.yml", "title: A\npin: 'yes'\n", 2, "schema", "pin: must be of type boolean"),
    ("a.txt.meta.yml", "title: A\nhotness: 2\n", 2, "schema", "hotness: must be at most 1"),
    ("a.txt.meta.yml", "title: A\ncolour: red\n", 2, "schema", "unknown key 'colour'"),
    ("a.txt.meta.yml", "title: [A\n", 2, "yaml", "does not parse"),
    ("grimoires/loa/working-set/cold.yml",
     "protocol: MEMORY-MGMT/0.1\nupdated: null\nevict:\n- path: a.txt\n  why: x\n"
     "  suggested_action: burn\n", 6, "schema", "evict.0.suggested_action"),
    ("grimoires/loa/working-set/hot.yml",
     "protocol: MEMORY-MGMT/0.1\nkeep:\n- path: a.txt\n- path: a.txt\n", 4, "duplicate",
     "a.txt is listed twice"),
]


@pytest.mark.parametrize(("rel", "text", "line", "rule", "said"), BROKEN,
                         ids=["pin", "hotness", "unknown", "yaml", "action", "duplicate"])
def test_validate_reports_broken_sidecars_and_manifests_with_their_line(
        cli: Cli, store: Path, rel: str, text: str, line: int, rule: str, said: str) -> None:
    ws.write(store, "a.txt", "x\n")
    ws.write(store, rel, text)
    outcome = cli("validate", "--json")

    assert outcome.code == 1
    [problem] = [p for p in outcome.json()["problems"] if p["path"] == rel]
    assert (problem["line"], problem["rule"]) == (line, rule)
    assert said in problem["message"]


def test_validate_warns_about_an_orphan_sidecar_and_a_missing_summary(cli: Cli,
                                                                      store: Path) -> None:
    ws.write(store, "gone.txt.meta.yml", "title: gone\n")
    ws.write(store, "a.txt", "x\n")
    ws.write(store, "a.txt.meta.yml", "title: A\nsummarized_in: grimoires/loa/summaries/a.md\n")
    outcome = cli("validate", "--json")

    assert outcome.code == 0
    rules = {(p["path"], p["rule"], p["severity"]) for p in outcome.json()["problems"]}
    assert rules == {("gone.txt.meta.yml", "orphan", "warning"),
                     ("a.txt.meta.yml", "link", "warning")}
