"""Update is supersession (spec section 3): the old entry stays, linked both ways, and leaves
recall; a superseded entry cannot be superseded again, and the refusal names its chain head."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli

A, B, C = "MEM-20260201-001", "MEM-20260201-002", "MEM-20260201-003"


def _chain(cli: Cli) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    cli.ok("supersede", A, "The API uses GraphQL.")
    cli.ok("supersede", B, "The API uses gRPC internally and GraphQL outside.")


def test_supersede_links_both_ways_and_keeps_the_old_entry(cli: Cli, store: Path) -> None:
    support.remember(cli, "The API uses REST.", "decision", "-t", "api")
    before = support.grimoire(store, "decision").read_text(encoding="utf-8")
    data = cli.ok("supersede", A, "The API uses GraphQL.", "-t", "api", "--json").json()

    assert (data["id"], data["supersedes"], data["created"]) == (B, A, True)
    old, new = support.entry(store, A), support.entry(store, B)
    assert old["superseded_by"] == B
    assert old["content"] == "The API uses REST."
    assert new["supersedes"] == A
    assert "superseded_by" not in new or new["superseded_by"] is None
    assert new["category"] == "decision"
    assert new["confidence"] == 0.9
    after = support.grimoire(store, "decision").read_text(encoding="utf-8")
    # The old entry's lines are kept; only its superseded_by line is added.
    assert after.startswith(before.rstrip("\n") + f"\n  superseded_by: {B}\n")


def test_supersede_is_one_commit_with_both_ids(cli: Cli, store: Path) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    commits = support.commit_count(store)
    cli.ok("supersede", A, "The API uses GraphQL.")

    assert support.commit_count(store) == commits + 1
    assert support.changed_files(store) == [f"{support.MEMORY}/decisions.yaml",
                                            f"{support.MEMORY}/events.jsonl"]
    assert support.message(store).startswith(f"loa-mem supersede: {B} supersedes {A}")
    assert support.trailers(store) == [("Loa-Op", "supersede"), ("Loa-Id", B), ("Loa-Id", A)]


def test_the_superseded_entry_leaves_recall(cli: Cli) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    cli.ok("supersede", A, "The API uses GraphQL.")

    assert [r["id"] for r in cli.ok("recall", "API", "--json").json()["results"]] == [B]
    hits = cli.ok("recall", "API", "--include-superseded", "--json").json()["results"]
    assert sorted(r["id"] for r in hits) == [A, B]
    assert cli.ok("show", A, "--json").json()["state"] == "superseded"


def test_show_gives_the_whole_chain_from_any_member(cli: Cli) -> None:
    _chain(cli)

    for member in (A, B, C):
        assert cli.ok("show", member, "--json").json()["chain"] == [A, B, C]
    assert f"{A} -> {B} -> {C}" in cli.ok("show", B).stdout


@pytest.mark.parametrize("target", [A, B])
def test_superseding_a_superseded_entry_names_the_chain_head(cli: Cli, store: Path,
                                                             target: str) -> None:
    _chain(cli)
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = cli("supersede", target, "The API uses SOAP.")

    assert outcome.code == 1
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert f"head of its chain is {C}" in outcome.stderr
    assert f"supersede {C} instead" in outcome.stderr
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_the_chain_head_can_be_superseded(cli: Cli, store: Path) -> None:
    _chain(cli)
    cli.ok("supersede", C, "The API uses SOAP.")

    assert support.entry(store, C)["superseded_by"] == "MEM-20260201-004"
    assert cli.ok("show", A, "--json").json()["chain"] == [A, B, C, "MEM-20260201-004"]
    assert cli.ok("validate", "--json").json()["problems"] == []


def test_superseding_with_the_same_content_is_refused(cli: Cli, store: Path) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    commits = support.commit_count(store)
    outcome = cli("supersede", A, "the API uses REST")

    assert outcome.code == 1
    assert support.commit_count(store) == commits


def test_superseding_an_archived_entry_is_refused(cli: Cli, store: Path) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    cli.ok("archive", A)
    outcome = cli("supersede", A, "The API uses GraphQL.")

    assert outcome.code == 1
    assert "archived" in outcome.stderr


def test_supersede_checks_the_new_entry_like_remember(cli: Cli, store: Path) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    outcome = cli("supersede", A, "The API uses GraphQL.", "--confidence", "0.85")

    assert outcome.code == 1
    assert "floor of 0.9" in outcome.stderr
    assert "superseded_by" not in support.entry(store, A)


def test_supersede_into_another_category(cli: Cli, store: Path) -> None:
    support.remember(cli, "Builds take ten minutes.", "fact")
    data = cli.ok("supersede", A, "Builds take ten minutes unless the cache is cold.",
                  "-c", "learning", "--json").json()

    assert data["path"] == f"{support.MEMORY}/learnings.yaml"
    assert support.entry(store, B)["ttl"] == "90d"
    assert support.changed_files(store) == [f"{support.MEMORY}/events.jsonl",
                                            f"{support.MEMORY}/facts.yaml",
                                            f"{support.MEMORY}/learnings.yaml"]
    assert cli.ok("validate", "--json").json()["ok"] is True


def test_supersede_reads_stdin(cli: Cli, store: Path) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    cli.ok("supersede", A, "-", stdin="The API uses GraphQL.\n")

    assert support.entry(store, B)["content"] == "The API uses GraphQL."
