"""Forgetting is intentional, visible and recoverable (spec section 3): forget removes, logs and
commits; restore brings the entry back byte for byte from git history; history lists commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from loa_mem.memory import rules as model
from tests import support
from tests.conftest import Cli, git


def _three(cli: Cli) -> tuple[str, str, str]:
    """Three facts remembered in order; their ids."""
    first = support.remember(cli, "The service is written in Go.", "fact", "-t", "go")
    second = support.remember(cli, "Staging runs on two nodes.\nProduction runs on six.", "fact",
                              "--summary", "Node counts", "-t", "infra", "--session", "s-1")
    third = support.remember(cli, "The docs live in /docs.", "fact")
    return first, second, third


def _block(text: str, memory_id: str) -> str:
    """The lines of one entry in a grimoire file's text."""
    lines = text.splitlines(keepends=True)
    start = next(n for n, line in enumerate(lines) if line.startswith(f"- id: {memory_id}"))
    end = next((n for n in range(start + 1, len(lines)) if lines[n].startswith("- ")), len(lines))
    return "".join(lines[start:end])


def test_forget_removes_the_entry_logs_and_commits(cli: Cli, store: Path) -> None:
    _, second, _ = _three(cli)
    facts = support.grimoire(store, "fact")
    before = facts.read_text(encoding="utf-8")
    data = cli.ok("forget", second, "--reason", "wrong node counts", "--json").json()

    after = facts.read_text(encoding="utf-8")
    assert after == before.replace(_block(before, second), "")
    assert data["commit"] == support.head(store)
    assert support.message(store).startswith(f"loa-mem forget: {second} (wrong node counts)")
    assert support.trailers(store) == [("Loa-Op", "forget"), ("Loa-Id", second)]
    assert support.changed_files(store) == [f"{support.MEMORY}/events.jsonl",
                                            f"{support.MEMORY}/facts.yaml"]
    last = support.events(store)[-1]
    assert (last["op"], last["ids"], last["reason"]) == ("forget", [second], "wrong node counts")


def test_a_forgotten_entry_is_gone_from_reads_and_says_how_to_get_it_back(cli: Cli) -> None:
    _, second, _ = _three(cli)
    cli.ok("forget", second, "--reason", "wrong")

    assert second not in [r["id"] for r in cli.ok("recall", "--json").json()["results"]]
    outcome = cli("show", second)
    assert outcome.code == 1
    assert "restore" in outcome.stderr
    assert cli.ok("status", "--json").json()["forgotten"] == 1


def test_a_forgotten_id_is_never_handed_out_again(cli: Cli, store: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    first, _, third = _three(cli)
    cli.ok("forget", third, "--reason", "wrong")
    # Ids are random; make the draw hit the forgotten id, then one still in use, then a free one.
    fresh = "MEM-20260201-zzzz2222"
    draws = iter([third, first, fresh])
    monkeypatch.setattr(model, "new_id", lambda day: next(draws))

    assert support.remember(cli, "A new fact after forgetting.", "fact") == fresh
    assert third not in support.all_ids(store)
    assert support.all_ids(store).count(first) == 1


def test_restore_brings_the_entry_back_byte_for_byte(cli: Cli, store: Path) -> None:
    _, second, _ = _three(cli)
    cli.ok("feedback", second, "--success")
    facts = support.grimoire(store, "fact")
    original = _block(facts.read_text(encoding="utf-8"), second)
    cli.ok("forget", second, "--reason", "wrong")
    support.remember(cli, "Another fact meanwhile.", "fact")
    data = cli.ok("restore", second, "--json").json()

    assert _block(facts.read_text(encoding="utf-8"), second) == original
    assert data["commit"] == support.head(store)
    assert support.trailers(store) == [("Loa-Op", "restore"), ("Loa-Id", second)]
    assert cli.ok("show", second, "--json").json()["state"] == "active"
    assert cli.ok("status", "--json").json()["forgotten"] == 0
    assert cli.ok("validate", "--json").json()["problems"] == []


@pytest.mark.parametrize("damage", [b"\xff\xfe not UTF-8\n", b"  - : [unclosed\n"])
def test_restore_looks_past_a_version_committed_broken(cli: Cli, store: Path,
                                                       damage: bytes) -> None:
    """The entry's file was committed broken by accident (not UTF-8, not YAML), then the entry
    was cleaned out by hand: restore finds it in the last readable version."""
    _, second, _ = _three(cli)
    facts = support.grimoire(store, "fact")
    original = _block(facts.read_text(encoding="utf-8"), second)
    facts.write_bytes(facts.read_bytes() + damage)
    git(store, "commit", "-qam", "broken by accident")
    facts.write_text(facts.read_text(encoding="utf-8", errors="replace").split(
        f"- id: {second}")[0], encoding="utf-8")
    git(store, "commit", "-qam", "cleaned by hand")

    cli.ok("restore", second)

    assert _block(facts.read_text(encoding="utf-8"), second) == original
    assert cli.ok("validate", "--json").json()["problems"] == []


def test_restore_of_an_active_entry_is_nothing_to_do(cli: Cli, store: Path) -> None:
    first, _, _ = _three(cli)
    commits = support.commit_count(store)
    outcome = cli("restore", first)

    assert outcome.code == 1
    assert "already active" in outcome.stderr
    assert support.commit_count(store) == commits


def test_restore_of_an_id_git_never_saw_is_not_found(cli: Cli) -> None:
    outcome = cli("restore", "MEM-20250101-001")

    assert outcome.code == 1
    assert "history" in outcome.stderr


def test_history_lists_every_commit_that_touched_the_entry(cli: Cli, store: Path) -> None:
    _, second, _ = _three(cli)
    shas = []
    cli.ok("feedback", second, "--success")
    shas.append(support.head(store))
    cli.ok("forget", second, "--reason", "wrong")
    shas.append(support.head(store))
    cli.ok("restore", second)
    shas.append(support.head(store))
    remembered = git(store, "log", "--format=%H", f"--grep=^Loa-Id: {second}$").split()[-1]

    commits = cli.ok("history", second, "--json").json()["commits"]
    assert [c["sha"] for c in commits] == [*reversed(shas), remembered]
    assert [c["subject"].split(":")[0] for c in commits] == [
        "loa-mem restore", "loa-mem forget", "loa-mem feedback", "loa-mem remember"]
    assert shas[-1][:10] in cli.ok("history", second).stdout


def test_history_of_an_unknown_id_is_not_found(cli: Cli) -> None:
    outcome = cli("history", "MEM-20250101-001")

    assert outcome.code == 1


def test_forgetting_a_superseded_entry_leaves_a_warning_not_an_error(cli: Cli) -> None:
    first = support.remember(cli, "The API uses REST.", "decision")
    second = cli.ok("supersede", first, "The API uses GraphQL.", "--json").json()["id"]
    cli.ok("forget", first, "--reason", "REST was never used")
    data = cli.ok("validate", "--json").json()

    assert data["ok"] is True
    [problem] = data["problems"]
    assert (problem["severity"], problem["rule"], problem["id"]) == ("warning", "chain", second)


def test_forget_an_archived_entry(cli: Cli, store: Path) -> None:
    first, _, _ = _three(cli)
    cli.ok("archive", first)
    cli.ok("forget", first, "--reason", "not needed even in the archive")

    assert support.entries(store, "fact", archive=True) == []
    assert support.changed_files(store) == [f"{support.ARCHIVE}/facts.yaml",
                                            f"{support.MEMORY}/events.jsonl"]
