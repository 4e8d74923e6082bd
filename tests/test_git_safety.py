"""The user's own work is never swallowed, and every git state gets a clear answer.

A command commits its own change and nothing else: a hand edit in the same grimoire file stays
uncommitted and in place, partial staging is kept, another command's `--no-commit` leftovers
are not swept in, and a failed commit puts the files back.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git

FACTS = f"{support.MEMORY}/facts.yaml"
HAND_ENTRY = ("- id: MEM-20260101-001\n  category: fact\n  content: Written by hand.\n"
              "  confidence: 0.9\n  source: {session_id: s, timestamp: '2026-01-01T00:00:00Z'}\n"
              "  ttl: permanent\n  expires_at:\n  tags: []\n")


def _remember(cli: Cli, text: str, *extra: str) -> str:
    return str(cli.ok("remember", text, "-c", "fact", *extra, "--json").json()["id"])


def _unchanged(cli: Cli, store: Path, *args: str) -> str:
    """Run a command that must be refused: exit 1, one line, no file and no commit changed."""
    before = (support.snapshot(store), support.head(store))
    outcome = cli(*args)
    assert outcome.code == 1, outcome.stdout
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert (support.snapshot(store), support.head(store)) == before
    return outcome.stderr


def test_a_hand_edit_in_the_same_file_stays_uncommitted(cli: Cli, store: Path) -> None:
    facts = store / FACTS
    facts.write_text(facts.read_text() + HAND_ENTRY)
    memory_id = _remember(cli, "The service is written in Go.")

    committed = git(store, "show", f"HEAD:{FACTS}")
    assert memory_id in committed and "Written by hand." not in committed
    on_disk = facts.read_text()
    assert memory_id in on_disk and "Written by hand." in on_disk
    assert "Written by hand." in git(store, "diff", "--", FACTS)
    assert git(store, "diff", "--cached") == ""


def test_partial_staging_is_kept(cli: Cli, store: Path) -> None:
    facts = store / FACTS
    facts.write_text("# staged comment\n" + facts.read_text())
    git(store, "add", FACTS)
    facts.write_text(facts.read_text() + "# unstaged comment\n")
    first = _remember(cli, "The service is written in Go.")
    staged = git(store, "diff", "--cached", "--", FACTS)
    unstaged = git(store, "diff", "--", FACTS)

    assert "+# staged comment" in staged and f"+- id: {first}" not in staged
    assert "unstaged" not in staged
    assert "+# unstaged comment" in unstaged and "+# staged comment" not in unstaged
    assert "staged comment" not in git(store, "show", f"HEAD:{FACTS}")
    git(store, "commit", "-q", "-m", "the user's own commit")
    assert git(store, "show", f"HEAD:{FACTS}").startswith("# staged comment\n")


def test_a_hand_edit_of_the_same_entry_stays_apart_from_the_feedback(cli: Cli,
                                                                     store: Path) -> None:
    memory_id = _remember(cli, "The service is written in Go.")
    facts = store / FACTS
    facts.write_text(facts.read_text().replace("written in Go.", "written in Go 1.22."))
    cli.ok("feedback", memory_id, "--success")

    committed = support.entry_in(git(store, "show", f"HEAD:{FACTS}"), memory_id)
    assert committed["effectiveness"]["successes"] == 1
    assert committed["content"] == "The service is written in Go."
    assert support.entry(store, memory_id)["content"] == "The service is written in Go 1.22."


def test_an_edit_on_the_very_lines_a_command_changes_is_refused(cli: Cli, store: Path) -> None:
    memory_id = _remember(cli, "The service is written in Go.")
    facts = store / FACTS
    facts.write_text(facts.read_text().replace("  tags: []\n", "  tags: [golang]\n"))
    stderr = _unchanged(cli, store, "feedback", memory_id, "--success")

    assert "commit or stash" in stderr and FACTS in stderr


def test_no_commit_leftovers_are_not_swept_into_a_later_commit(cli: Cli, store: Path) -> None:
    pending = _remember(cli, "Left pending on purpose.", "--no-commit")
    later = _remember(cli, "Committed right away.")

    committed = git(store, "show", "HEAD", "--", FACTS)
    assert later in committed and pending not in committed
    assert pending in git(store, "diff", "--", FACTS)
    cli.ok("commit")
    assert git(store, "status", "--porcelain") == ""
    assert pending in git(store, "show", f"HEAD:{FACTS}")


def test_a_failed_commit_puts_the_files_back(cli: Cli, store: Path) -> None:
    _remember(cli, "The service is written in Go.")
    lock = store / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text("")  # another git process is moving the branch
    stderr = _unchanged(cli, store, "remember", "Retries back off.", "-c", "fact")
    lock.unlink()

    assert "git" in stderr
    assert not [p for p in (store / support.MEMORY).rglob("*.tmp")]
    cli.ok("remember", "Retries back off.", "-c", "fact")
    assert git(store, "status", "--porcelain") == ""


@pytest.mark.parametrize("operation", ["merge", "rebase", "cherry-pick"])
def test_a_write_during_a_stopped_git_operation_is_refused(cli: Cli, store: Path,
                                                           operation: str) -> None:
    (store / "notes.txt").write_text("base\n")
    git(store, "add", "notes.txt")
    git(store, "commit", "-qm", "notes")
    git(store, "checkout", "-qb", "other")
    (store / "notes.txt").write_text("other\n")
    git(store, "commit", "-qam", "other notes")
    git(store, "checkout", "-q", "main")
    (store / "notes.txt").write_text("main\n")
    git(store, "commit", "-qam", "main notes")
    args = {"merge": ["merge", "other"], "rebase": ["rebase", "other"],
            "cherry-pick": ["cherry-pick", "other"]}[operation]
    stopped = subprocess.run(["git", *args], cwd=store, capture_output=True, check=False)
    assert stopped.returncode != 0
    stderr = _unchanged(cli, store, "remember", "During a conflict.", "-c", "fact")

    assert "in progress" in stderr and "--no-commit" in stderr
    written = cli.ok("remember", "During a conflict.", "-c", "fact", "--no-commit")
    assert "not committed" in written.stdout


def test_detached_head_is_refused_and_no_commit_still_writes(cli: Cli, store: Path) -> None:
    _remember(cli, "The service is written in Go.")
    git(store, "checkout", "-q", "--detach")
    stderr = _unchanged(cli, store, "remember", "Detached.", "-c", "fact")

    assert "detached" in stderr and "git switch" in stderr
    cli.ok("remember", "Detached.", "-c", "fact", "--no-commit")
    assert "Detached." in (store / FACTS).read_text()


def test_inside_a_git_hook_the_change_is_written_but_head_never_moves(cli: Cli,
                                                                      store: Path) -> None:
    head = support.head(store)
    (store / ".git" / "index.lock").write_text("")  # what an outer `git commit` holds
    outcome = cli.ok("remember", "Remembered inside a hook.", "-c", "fact")
    (store / ".git" / "index.lock").unlink()

    assert support.head(store) == head
    assert "not committed" in outcome.stdout and "loa-mem commit" in outcome.stderr
    assert "Remembered inside a hook." in (store / FACTS).read_text()
    cli.ok("commit")
    assert "Remembered inside a hook." in git(store, "show", f"HEAD:{FACTS}")


def test_a_bare_repository_is_refused_clearly(tmp_path: Path, store: Path) -> None:
    bare = tmp_path / "shared.git"
    git(tmp_path, "clone", "-q", "--bare", str(store), str(bare))
    for args in (("recall",), ("init",)):
        outcome = Cli(bare)(*args)
        assert outcome.code == 1
        assert "bare repository" in outcome.stderr and "git clone" in outcome.stderr
    assert not (bare / ".git").exists() and not (bare / ".loa.config.yaml").exists()


def test_a_grimoire_that_links_outside_the_repository_is_never_written(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-facts.yaml"
    facts = store / FACTS
    outside.write_text(facts.read_text())
    facts.unlink()
    os.symlink(outside, facts)
    git(store, "add", FACTS)
    git(store, "commit", "-qm", "facts live elsewhere")
    stderr = _unchanged(cli, store, "remember", "Through a link.", "-c", "fact")

    assert "symbolic link" in stderr and "outside the repository" in stderr
    assert facts.is_symlink()


def test_history_finds_every_commit_that_touched_the_entry(cli: Cli, store: Path) -> None:
    memory_id = _remember(cli, "The service is written in Go.")
    cli.ok("feedback", memory_id, "--success")
    facts = store / FACTS
    facts.write_text(facts.read_text().replace("confidence: 0.8", "confidence: 0.85"))
    git(store, "commit", "-qam", "hand edit, no trailer")
    other = _remember(cli, "Another entry, not this one.")
    cli.ok("archive", memory_id)

    subjects = [c["subject"] for c in cli.ok("history", memory_id, "--json").json()["commits"]]
    # newest first, like git log
    assert subjects[-1].startswith("loa-mem remember:")
    assert any(s.startswith("loa-mem feedback:") for s in subjects)
    assert "hand edit, no trailer" in subjects
    assert subjects[0].startswith("loa-mem archive:")
    assert not any(other in s for s in subjects)


def test_what_a_killed_writer_left_is_never_committed(cli: Cli, store: Path) -> None:
    facts = store / FACTS
    (facts.parent / ".facts.yaml.4242.tmp").write_text("half written\n")
    (facts.parent / ".facts.yaml.4242.old").write_text("an old copy\n")
    _remember(cli, "Pending on purpose.", "--no-commit")
    cli.ok("commit")

    committed = git(store, "show", "--name-only", "--format=", "HEAD").split()
    assert FACTS in committed
    assert not [p for p in committed if p.endswith((".tmp", ".old"))]
