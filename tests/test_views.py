"""What the human views show: readable effectiveness, archive fields, a state column when
recall includes more than active entries, and a replacement that keeps its tags."""

from __future__ import annotations

from pathlib import Path

from tests import support
from tests.conftest import Cli


def test_show_prints_effectiveness_in_words(cli: Cli) -> None:
    memory_id = support.remember(cli, "Run migrations before deploying.", "learning")
    cli.ok("feedback", memory_id, "--success")
    cli.ok("feedback", memory_id, "--failure")
    text = cli.ok("show", memory_id).stdout

    assert "effectiveness: score 50 after 2 application(s): 1 worked, 1 failed" in text
    assert "{" not in text


def test_show_without_outcomes_prints_a_dash(cli: Cli) -> None:
    memory_id = support.remember(cli, "The API speaks JSON.", "fact")
    assert "effectiveness: -" in cli.ok("show", memory_id).stdout


def test_show_names_when_and_why_an_entry_was_archived(cli: Cli) -> None:
    memory_id = support.remember(cli, "The staging host is called tern.", "fact")
    cli.ok("archive", memory_id, "--reason", "manual")
    text = cli.ok("show", memory_id).stdout

    assert f"{memory_id}  fact  archived" in text
    assert "archived:   2026-02-01T10:30:00Z   reason: manual" in text


def test_recall_with_superseded_entries_has_a_state_column(cli: Cli) -> None:
    old = support.remember(cli, "We deploy with Helm charts.", "fact")
    new = cli.ok("supersede", old, "We deploy with Argo CD.", "--json").json()["id"]
    lines = cli.ok("recall", "deploy", "--include-superseded").stdout.splitlines()

    assert lines[0].split()[:3] == ["ID", "CATEGORY", "STATE"]
    states = {line.split()[0]: line.split()[2] for line in lines[1:]}
    assert states == {old: "superseded", new: "active"}
    data = cli.ok("recall", "deploy", "--include-superseded", "--json").json()
    assert {r["id"]: r["state"] for r in data["results"]} == states


def test_recall_of_active_entries_only_has_no_state_column(cli: Cli) -> None:
    support.remember(cli, "We deploy with Helm charts.", "fact")
    assert "STATE" not in cli.ok("recall").stdout


def test_supersede_keeps_the_old_entrys_tags_and_adds_new_ones(cli: Cli, store: Path) -> None:
    old = cli.ok("remember", "Deploys go out on Tuesdays.", "-c", "fact", "-t", "deploy",
                 "-t", "schedule", "--json").json()["id"]
    new = cli.ok("supersede", old, "Deploys go out on Thursdays.", "-t", "release",
                 "--json").json()["id"]

    assert support.entry(store, new)["tags"] == ["deploy", "schedule", "release"]
    again = cli.ok("supersede", new, "Deploys go out every day.", "--json").json()["id"]
    assert support.entry(store, again)["tags"] == ["deploy", "schedule", "release"]
