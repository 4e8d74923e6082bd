"""Forgetting is intentional, visible and recoverable (spec section 3): forget removes, logs and
commits; restore brings the entry back byte for byte from git history; history lists commits."""

from __future__ import annotations

from pathlib import Path

from tests import support
from tests.conftest import Cli, git

FIRST, SECOND, THIRD = "MEM-20260201-001", "MEM-20260201-002", "MEM-20260201-003"


def _three(cli: Cli) -> None:
    support.remember(cli, "The service is written in Go.", "fact", "-t", "go")
    support.remember(cli, "Staging runs on two nodes.\nProduction runs on six.", "fact",
                     "--summary", "Node counts", "-t", "infra", "--session", "s-1")
    support.remember(cli, "The docs live in /docs.", "fact")


def _block(text: str, memory_id: str) -> str:
    """The lines of one entry in a grimoire file's text."""
    lines = text.splitlines(keepends=True)
    start = next(n for n, line in enumerate(lines) if line.startswith(f"- id: {memory_id}"))
    end = next((n for n in range(start + 1, len(lines)) if lines[n].startswith("- ")), len(lines))
    return "".join(lines[start:end])


def test_forget_removes_the_entry_logs_and_commits(cli: Cli, store: Path) -> None:
    _three(cli)
    facts = support.grimoire(store, "fact")
    before = facts.read_text(encoding="utf-8")
    data = cli.ok("forget", SECOND, "--reason", "wrong node counts", "--json").json()

    after = facts.read_text(encoding="utf-8")
    assert after == before.replace(_block(before, SECOND), "")
    assert data["commit"] == support.head(store)
    assert support.message(store).startswith(f"loa-mem forget: {SECOND} (wrong node counts)")
    assert support.trailers(store) == [("Loa-Op", "forget"), ("Loa-Id", SECOND)]
    assert support.changed_files(store) == [f"{support.MEMORY}/events.jsonl",
                                            f"{support.MEMORY}/facts.yaml"]
    last = support.events(store)[-1]
    assert (last["op"], last["ids"], last["reason"]) == ("forget", [SECOND], "wrong node counts")


def test_a_forgotten_entry_is_gone_from_reads_and_says_how_to_get_it_back(cli: Cli) -> None:
    _three(cli)
    cli.ok("forget", SECOND, "--reason", "wrong")

    assert SECOND not in [r["id"] for r in cli.ok("recall", "--json").json()["results"]]
    outcome = cli("show", SECOND)
    assert outcome.code == 1
    assert "restore" in outcome.stderr
    assert cli.ok("status", "--json").json()["forgotten"] == 1


def test_a_forgotten_id_is_never_handed_out_again(cli: Cli) -> None:
    _three(cli)
    cli.ok("forget", THIRD, "--reason", "wrong")

    assert support.remember(cli, "A new fact after forgetting.", "fact") == "MEM-20260201-004"


def test_restore_brings_the_entry_back_byte_for_byte(cli: Cli, store: Path) -> None:
    _three(cli)
    cli.ok("feedback", SECOND, "--success")
    facts = support.grimoire(store, "fact")
    original = _block(facts.read_text(encoding="utf-8"), SECOND)
    cli.ok("forget", SECOND, "--reason", "wrong")
    support.remember(cli, "Another fact meanwhile.", "fact")
    data = cli.ok("restore", SECOND, "--json").json()

    assert _block(facts.read_text(encoding="utf-8"), SECOND) == original
    assert data["commit"] == support.head(store)
    assert support.trailers(store) == [("Loa-Op", "restore"), ("Loa-Id", SECOND)]
    assert cli.ok("show", SECOND, "--json").json()["state"] == "active"
    assert cli.ok("status", "--json").json()["forgotten"] == 0
    assert cli.ok("validate", "--json").json()["problems"] == []


def test_restore_of_an_active_entry_is_nothing_to_do(cli: Cli, store: Path) -> None:
    _three(cli)
    commits = support.commit_count(store)
    outcome = cli("restore", FIRST)

    assert outcome.code == 1
    assert "already active" in outcome.stderr
    assert support.commit_count(store) == commits


def test_restore_of_an_id_git_never_saw_is_not_found(cli: Cli) -> None:
    outcome = cli("restore", "MEM-20250101-001")

    assert outcome.code == 1
    assert "history" in outcome.stderr


def test_history_lists_every_commit_that_touched_the_entry(cli: Cli, store: Path) -> None:
    _three(cli)
    shas = []
    cli.ok("feedback", SECOND, "--success")
    shas.append(support.head(store))
    cli.ok("forget", SECOND, "--reason", "wrong")
    shas.append(support.head(store))
    cli.ok("restore", SECOND)
    shas.append(support.head(store))
    remembered = git(store, "log", "--format=%H", f"--grep=^Loa-Id: {SECOND}$").split()[-1]

    commits = cli.ok("history", SECOND, "--json").json()["commits"]
    assert [c["sha"] for c in commits] == [*reversed(shas), remembered]
    assert [c["subject"].split(":")[0] for c in commits] == [
        "loa-mem restore", "loa-mem forget", "loa-mem feedback", "loa-mem remember"]
    assert shas[-1][:10] in cli.ok("history", SECOND).stdout


def test_history_of_an_unknown_id_is_not_found(cli: Cli) -> None:
    outcome = cli("history", "MEM-20250101-001")

    assert outcome.code == 1


def test_forgetting_a_superseded_entry_leaves_a_warning_not_an_error(cli: Cli) -> None:
    support.remember(cli, "The API uses REST.", "decision")
    cli.ok("supersede", FIRST, "The API uses GraphQL.")
    cli.ok("forget", FIRST, "--reason", "REST was never used")
    data = cli.ok("validate", "--json").json()

    assert data["ok"] is True
    [problem] = data["problems"]
    assert (problem["severity"], problem["rule"], problem["id"]) == ("warning", "chain", SECOND)


def test_forget_an_archived_entry(cli: Cli, store: Path) -> None:
    _three(cli)
    cli.ok("archive", FIRST)
    cli.ok("forget", FIRST, "--reason", "not needed even in the archive")

    assert support.entries(store, "fact", archive=True) == []
    assert support.changed_files(store) == [f"{support.ARCHIVE}/facts.yaml",
                                            f"{support.MEMORY}/events.jsonl"]
