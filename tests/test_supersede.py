"""Update is supersession (spec section 3): the old entry stays, linked both ways, and leaves
recall; a superseded entry cannot be superseded again, and the refusal names its chain head."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli


def _supersede(cli: Cli, old: str, content: str, *options: str, stdin: str | None = None) -> str:
    """Supersede through the CLI and return the new id (the command must succeed)."""
    data = cli.ok("supersede", old, content, *options, "--json", stdin=stdin).json()
    assert data["supersedes"] == old, data
    return support.assert_new_id(data["id"])


def _chain(cli: Cli) -> tuple[str, str, str]:
    a = support.remember(cli, "The API uses REST.", "decision")
    b = _supersede(cli, a, "The API uses GraphQL.")
    c = _supersede(cli, b, "The API uses gRPC internally and GraphQL outside.")
    return a, b, c


def test_supersede_links_both_ways_and_keeps_the_old_entry(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "The API uses REST.", "decision", "-t", "api")
    before = support.grimoire(store, "decision").read_text(encoding="utf-8")
    data = cli.ok("supersede", a, "The API uses GraphQL.", "-t", "api", "--json").json()

    b = support.assert_new_id(data["id"])
    assert b != a
    assert (data["supersedes"], data["created"]) == (a, True)
    old, new = support.entry(store, a), support.entry(store, b)
    assert old["superseded_by"] == b
    assert old["content"] == "The API uses REST."
    assert new["supersedes"] == a
    assert "superseded_by" not in new or new["superseded_by"] is None
    assert new["category"] == "decision"
    assert new["confidence"] == 0.9
    after = support.grimoire(store, "decision").read_text(encoding="utf-8")
    # The old entry's lines are kept; only its superseded_by line is added.
    assert after.startswith(before.rstrip("\n") + f"\n  superseded_by: {b}\n")


def test_supersede_is_one_commit_with_both_ids(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "The API uses REST.", "decision")
    commits = support.commit_count(store)
    b = _supersede(cli, a, "The API uses GraphQL.")

    assert support.commit_count(store) == commits + 1
    assert support.changed_files(store) == [f"{support.MEMORY}/decisions.yaml",
                                            f"{support.MEMORY}/events.jsonl"]
    assert support.message(store).startswith(f"loa-mem supersede: {b} supersedes {a}")
    assert support.trailers(store) == [("Loa-Op", "supersede"), ("Loa-Id", b), ("Loa-Id", a)]


def test_the_superseded_entry_leaves_recall(cli: Cli) -> None:
    a = support.remember(cli, "The API uses REST.", "decision")
    b = _supersede(cli, a, "The API uses GraphQL.")

    assert [r["id"] for r in cli.ok("recall", "API", "--json").json()["results"]] == [b]
    hits = cli.ok("recall", "API", "--include-superseded", "--json").json()["results"]
    assert sorted(r["id"] for r in hits) == sorted([a, b])
    assert cli.ok("show", a, "--json").json()["state"] == "superseded"


def test_show_gives_the_whole_chain_from_any_member(cli: Cli) -> None:
    a, b, c = _chain(cli)

    for member in (a, b, c):
        assert cli.ok("show", member, "--json").json()["chain"] == [a, b, c]
    assert f"{a} -> {b} -> {c}" in cli.ok("show", b).stdout


@pytest.mark.parametrize("member", [0, 1], ids=["first", "second"])
def test_superseding_a_superseded_entry_names_the_chain_head(cli: Cli, store: Path,
                                                             member: int) -> None:
    chain = _chain(cli)
    c = chain[2]
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = cli("supersede", chain[member], "The API uses SOAP.")

    assert outcome.code == 1
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert f"head of its chain is {c}" in outcome.stderr
    assert f"supersede {c} instead" in outcome.stderr
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_the_chain_head_can_be_superseded(cli: Cli, store: Path) -> None:
    a, b, c = _chain(cli)
    d = _supersede(cli, c, "The API uses SOAP.")

    assert len({a, b, c, d}) == 4
    assert support.entry(store, c)["superseded_by"] == d
    assert cli.ok("show", a, "--json").json()["chain"] == [a, b, c, d]
    assert cli.ok("validate", "--json").json()["problems"] == []


def test_superseding_with_the_same_content_is_refused(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "The API uses REST.", "decision")
    commits = support.commit_count(store)
    outcome = cli("supersede", a, "the API uses REST")

    assert outcome.code == 1
    assert support.commit_count(store) == commits


def test_superseding_an_archived_entry_is_refused(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "The API uses REST.", "decision")
    cli.ok("archive", a)
    outcome = cli("supersede", a, "The API uses GraphQL.")

    assert outcome.code == 1
    assert "archived" in outcome.stderr


def test_supersede_checks_the_new_entry_like_remember(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "The API uses REST.", "decision")
    outcome = cli("supersede", a, "The API uses GraphQL.", "--confidence", "0.85")

    assert outcome.code == 1
    assert "floor of 0.9" in outcome.stderr
    assert "superseded_by" not in support.entry(store, a)


def test_supersede_into_another_category(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "Builds take ten minutes.", "fact")
    data = cli.ok("supersede", a, "Builds take ten minutes unless the cache is cold.",
                  "-c", "learning", "--json").json()
    b = support.assert_new_id(data["id"])

    assert data["path"] == f"{support.MEMORY}/learnings.yaml"
    assert support.entry(store, b)["ttl"] == "90d"
    assert support.changed_files(store) == [f"{support.MEMORY}/events.jsonl",
                                            f"{support.MEMORY}/facts.yaml",
                                            f"{support.MEMORY}/learnings.yaml"]
    assert cli.ok("validate", "--json").json()["ok"] is True


def test_supersede_reads_stdin(cli: Cli, store: Path) -> None:
    a = support.remember(cli, "The API uses REST.", "decision")
    b = _supersede(cli, a, "-", stdin="The API uses GraphQL.\n")

    assert support.entry(store, b)["content"] == "The API uses GraphQL."
