"""Effectiveness (spec section 3): recall --track counts applications, feedback counts successes
and failures, score = round(100 x successes / applications), tiers; and the events log, one
line per operation with op, ids, time, actor and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import FIXED_NOW, Cli, git


def _apply(cli: Cli, memory_id: str, steps: str) -> None:
    for step in steps:
        if step == "t":
            hits = cli.ok("recall", "--track", "--json").json()["results"]
            assert [h["id"] for h in hits] == [memory_id]
        else:
            cli.ok("feedback", memory_id, "--success" if step == "s" else "--failure")


# steps (t: recall --track, s: feedback --success, f: feedback --failure), then the expected
# applications, successes, failures, score and tier
@pytest.mark.parametrize("case", [
    ("s", 1, 1, 0, 100, "high"),
    ("f", 1, 0, 1, 0, "review"),       # under 20, but fewer than 3 applications
    ("t", 1, 0, 0, 0, "untested"),     # recalls alone do not judge an entry
    ("ttt", 3, 0, 0, 0, "untested"),
    ("tf", 1, 0, 1, 0, "review"),
    ("tttf", 3, 0, 1, 0, "ineffective"),
    ("tts", 2, 1, 0, 50, "normal"),
    ("ttts", 3, 1, 0, 33, "review"),
    ("tttss", 3, 2, 0, 67, "normal"),
    ("ssf", 3, 2, 1, 67, "normal"),    # feedback without a tracked recall implies one
    ("tsf", 2, 1, 1, 50, "normal"),
    ("tttttssss", 5, 4, 0, 80, "high"),  # Loa's own example
    ("ttttsss", 4, 3, 0, 75, "normal"),
    ("sttttttt", 8, 1, 0, 13, "ineffective"),  # 12.5 rounds half up
    ("ttttttttsssss", 8, 5, 0, 63, "normal"),  # 62.5 rounds half up
])
def test_score_and_tier(cli: Cli, store: Path, case: tuple[str, int, int, int, int, str]) -> None:
    steps, applications, successes, failures, score, tier = case
    memory_id = support.remember(cli, "Clear the CI cache when the lockfile changes.", "learning")
    _apply(cli, memory_id, steps)
    effect = support.entry(store, memory_id)["effectiveness"]

    assert effect == {"applications": applications, "successes": successes,
                      "failures": failures, "score": score, "last_applied": FIXED_NOW}
    assert cli.ok("show", memory_id, "--json").json()["tier"] == tier
    cli.ok("validate")


def test_feedback_reports_the_new_score(cli: Cli) -> None:
    memory_id = support.remember(cli, "Clear the CI cache when the lockfile changes.", "learning")
    data = cli.ok("feedback", memory_id, "--failure", "--json").json()

    assert data["effectiveness"]["score"] == 0
    assert data["tier"] == "review"
    assert "score 50 after 2 application(s), tier normal" in cli.ok(
        "feedback", memory_id, "--success").stdout


def test_feedback_needs_success_or_failure(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Clear the CI cache when the lockfile changes.", "learning")
    commits = support.commit_count(store)
    outcome = cli("feedback", memory_id)

    assert outcome.code != 0
    assert "--success" in outcome.stderr
    assert support.commit_count(store) == commits


def test_feedback_on_an_archived_entry_is_refused(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Clear the CI cache when the lockfile changes.", "learning")
    cli.ok("archive", memory_id)
    outcome = cli("feedback", memory_id, "--success")

    assert outcome.code == 1
    assert "archived" in outcome.stderr


def test_track_counts_each_result_once_in_one_commit(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "Cache npm in CI.", "learning")
    second = support.remember(cli, "Cache pip in CI.", "learning")
    third = support.remember(cli, "The service is written in Go.", "fact")
    commits = support.commit_count(store)
    data = cli.ok("recall", "cache", "--track", "--json").json()

    assert sorted(r["id"] for r in data["results"]) == sorted([first, second])
    assert data["tracked"] is True
    assert data["commit"] == support.head(store)
    assert support.commit_count(store) == commits + 1
    assert sorted(support.trailers(store)) == sorted(
        [("Loa-Op", "track"), ("Loa-Id", first), ("Loa-Id", second)])
    for memory_id in (first, second):
        assert support.entry(store, memory_id)["effectiveness"]["applications"] == 1
    assert "effectiveness" not in support.entry(store, third)


def test_track_with_no_results_writes_nothing(cli: Cli, store: Path) -> None:
    support.remember(cli, "Cache npm in CI.", "learning")
    before, commits = support.snapshot(store), support.commit_count(store)
    data = cli.ok("recall", "kubernetes", "--track", "--json").json()

    assert data["results"] == []
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_status_flags_entries_for_review(cli: Cli) -> None:
    weak = support.remember(cli, "Cache npm in CI.", "learning")
    strong = support.remember(cli, "Pin the Go toolchain.", "learning")
    cli.ok("feedback", weak, "--failure")
    cli.ok("feedback", strong, "--success")

    assert cli.ok("status", "--json").json()["review"] == [weak]


def test_every_operation_appends_one_event(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "Cache npm in CI.", "learning", "--agent", "builder")
    second = support.remember(cli, "The service is written in Go.", "fact")
    third = cli.ok("supersede", second, "The service is written in Go 1.22.", "--json").json()["id"]
    cli.ok("feedback", first, "--success")
    cli.ok("recall", "npm", "--track")
    cli.ok("archive", first, "--reason", "ineffective")
    cli.ok("restore", first)
    cli.ok("forget", third, "--reason", "duplicated in the README",
           env={"LOA_MEM_ACTOR": "ci:nightly"})
    cli.ok("recall", "Go")  # read-only: no event
    cli.ok("remember", "Cache npm in CI.", "-c", "learning")  # a duplicate: no event

    log = support.events(store)
    assert [(e["op"], e["ids"]) for e in log] == [
        ("init", []), ("remember", [first]), ("remember", [second]),
        ("supersede", [third, second]), ("feedback", [first]), ("track", [first]),
        ("archive", [first]), ("restore", [first]), ("forget", [third])]
    for event in log:
        assert {"op", "ids", "time", "actor", "reason"} <= set(event), event
        assert event["time"] == FIXED_NOW
    assert log[1]["actor"] == "agent:builder"
    assert log[2]["actor"].startswith("user:")
    assert log[6]["reason"] == "ineffective"
    assert (log[8]["actor"], log[8]["reason"]) == ("ci:nightly", "duplicated in the README")
    assert log[1]["reason"] is None


def test_each_event_is_committed_with_its_change(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Cache npm in CI.", "learning")

    assert f"{support.MEMORY}/events.jsonl" in support.changed_files(store)
    committed = git(store, "show", f"HEAD:{support.MEMORY}/events.jsonl")
    assert memory_id in committed.splitlines()[-1]
