"""Git (spec section 5): one commit per mutating command with exactly the files it changed and
the trailers of the spec; the user's own work is left exactly as it was; the GIT_* variables of
an enclosing hook never redirect loa-mem; --no-commit, then commit."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git, run_loa_mem

M = support.MEMORY
A = support.ARCHIVE
# Placeholders for the ids a test mints (ids are random): the fact the setup remembers (or, for
# remember itself, the one it mints) and the one supersede mints.
OLD, NEW = "<old>", "<new>"
EVENTS = f"{M}/events.jsonl"


def _one(cli: Cli) -> str:
    return support.remember(cli, "The service is written in Go.", "fact")


def _one_error(cli: Cli) -> str:
    return support.remember(cli, "Flaky: clear the cache.", "error")


def _archived(cli: Cli) -> str:
    memory_id = _one(cli)
    cli.ok("archive", memory_id)
    return memory_id


def _forgotten(cli: Cli) -> str:
    memory_id = _one(cli)
    cli.ok("forget", memory_id, "--reason", "wrong")
    return memory_id


def _nothing(cli: Cli) -> str:
    return OLD


def _fill(text: str, old: str, new: str) -> str:
    return text.replace(OLD, old).replace(NEW, new)


# setup, command, expected subject start, files in the commit, Loa-Id trailers
CASES: dict[str, tuple[Callable[[Cli], str], tuple[str, ...], str, list[str], list[str]]] = {
    "remember": (_nothing, ("remember", "The service is written in Go.", "-c", "fact", "--json"),
                 f"loa-mem remember: {OLD} ", [EVENTS, f"{M}/facts.yaml"], [OLD]),
    "supersede": (_one, ("supersede", OLD, "The service is written in Go 1.22.", "--json"),
                  f"loa-mem supersede: {NEW} supersedes {OLD}", [EVENTS, f"{M}/facts.yaml"],
                  [NEW, OLD]),
    "archive": (_one, ("archive", OLD), "loa-mem archive: ",
                [f"{A}/facts.yaml", EVENTS, f"{M}/facts.yaml"], [OLD]),
    "archive-expired": (
        _one_error, ("archive", "--expired"), "loa-mem archive: ",
        [f"{A}/errors.yaml", EVENTS, f"{M}/errors.yaml"], [OLD]),
    "restore-archived": (_archived, ("restore", OLD), f"loa-mem restore: {OLD}",
                         [f"{A}/facts.yaml", EVENTS, f"{M}/facts.yaml"], [OLD]),
    "forget": (_one, ("forget", OLD, "--reason", "wrong"), f"loa-mem forget: {OLD} (wrong)",
               [EVENTS, f"{M}/facts.yaml"], [OLD]),
    "restore-forgotten": (_forgotten, ("restore", OLD), f"loa-mem restore: {OLD}",
                          [EVENTS, f"{M}/facts.yaml"], [OLD]),
    "feedback": (_one, ("feedback", OLD, "--success"), f"loa-mem feedback: {OLD} success",
                 [EVENTS, f"{M}/facts.yaml"], [OLD]),
    "track": (_one, ("recall", "--track"), "loa-mem track: ", [EVENTS, f"{M}/facts.yaml"], [OLD]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_one_commit_with_exactly_the_changed_files(cli: Cli, store: Path, name: str) -> None:
    setup, args, subject, files, ids = CASES[name]
    old = setup(cli)
    now = "2026-04-01T00:00:00Z" if name == "archive-expired" else None
    before = support.commit_count(store)
    outcome = cli.ok(*(_fill(a, old, NEW) for a in args), now=now)
    minted = support.assert_new_id(outcome.json()["id"]) if "--json" in args else NEW
    if name == "remember":
        old, new = minted, NEW
    else:
        new = minted

    assert support.commit_count(store) == before + 1
    assert support.changed_files(store) == sorted(files)
    message = support.message(store)
    assert message.startswith(_fill(subject, old, new)), message
    op = {"archive-expired": "archive", "restore-archived": "restore",
          "restore-forgotten": "restore"}.get(name, name)
    assert support.trailers(store) == [("Loa-Op", op),
                                       *(("Loa-Id", _fill(i, old, new)) for i in ids)]
    assert support.porcelain(store) == ""


def test_commits_carry_the_users_identity(cli: Cli, store: Path) -> None:
    _one(cli)

    assert git(store, "log", "-1", "--format=%an <%ae>").strip() == (
        "Test User <test@example.invalid>")


def _dirty(store: Path) -> None:
    """The user's own work in progress: staged, unstaged, partly staged, new and untracked."""
    (store / "README.md").write_text("# Project\n", encoding="utf-8")
    (store / "src").mkdir()
    (store / "src" / "app.py").write_text("print('v1')\n", encoding="utf-8")
    (store / "src" / "both.py").write_text("x = 1\n", encoding="utf-8")
    git(store, "add", "README.md", "src")
    git(store, "commit", "-q", "-m", "user work")
    (store / "README.md").write_text("# Project\n\nStaged change.\n", encoding="utf-8")
    git(store, "add", "README.md")
    (store / "src" / "app.py").write_text("print('v2, not staged')\n", encoding="utf-8")
    (store / "src" / "both.py").write_text("x = 2\n", encoding="utf-8")
    git(store, "add", "src/both.py")
    (store / "src" / "both.py").write_text("x = 3\n", encoding="utf-8")
    (store / "src" / "new.py").write_text("staged new file\n", encoding="utf-8")
    git(store, "add", "src/new.py")
    (store / "notes.txt").write_text("untracked\n", encoding="utf-8")


def _user_state(store: Path) -> tuple[str, str, str, dict[str, bytes]]:
    files = {k: v for k, v in support.snapshot(store).items() if not k.startswith("grimoires/")}
    return (git(store, "diff", "--cached", "--", ".", ":!grimoires"),
            git(store, "diff", "--", ".", ":!grimoires"),
            git(store, "status", "--porcelain", "--", ".", ":!grimoires"), files)


@pytest.mark.parametrize("args", [
    ("remember", "The service is written in Go.", "-c", "fact"),
    ("supersede", OLD, "The service is written in Go 1.22."),
    ("forget", OLD, "--reason", "wrong"),
    ("archive", OLD),
    ("feedback", OLD, "--failure"),
], ids=lambda a: a[0])
def test_a_dirty_working_tree_is_left_exactly_as_it_was(cli: Cli, store: Path,
                                                        args: tuple[str, ...]) -> None:
    if args[0] != "remember":
        old = _one(cli)
        args = tuple(_fill(a, old, NEW) for a in args)
    _dirty(store)
    before = _user_state(store)
    cli.ok(*args)

    assert _user_state(store) == before
    assert all(f.startswith("grimoires/") for f in support.changed_files(store))
    assert git(store, "status", "--porcelain", "--", "grimoires") == ""
    # The user's own commit still takes exactly what they staged.
    git(store, "commit", "-q", "-m", "user commit")
    assert support.changed_files(store) == ["README.md", "src/both.py", "src/new.py"]
    assert git(store, "show", "HEAD:src/both.py") == "x = 2\n"


def test_hook_variables_pointing_elsewhere_are_ignored(store: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "f.txt").write_text("other\n", encoding="utf-8")
    git(other, "add", "f.txt")
    git(other, "commit", "-q", "-m", "other")
    other_index = (other / ".git" / "index").read_bytes()
    other_head = support.head(other)
    env = {"GIT_DIR": str(other / ".git"), "GIT_INDEX_FILE": str(other / ".git" / "index"),
           "GIT_WORK_TREE": str(other), "GIT_PREFIX": "", "GIT_OBJECT_DIRECTORY":
           str(other / ".git" / "objects")}
    before = support.commit_count(store)
    result = run_loa_mem(store, "remember", "Hooks do not redirect loa-mem.", "-c", "fact",
                         env=env)

    assert result.returncode == 0, result.stderr
    assert support.commit_count(store) == before + 1
    assert support.changed_files(store) == [EVENTS, f"{M}/facts.yaml"]
    assert support.head(other) == other_head
    assert (other / ".git" / "index").read_bytes() == other_index
    assert git(other, "status", "--porcelain") == ""


def test_loa_mem_inside_another_repositorys_pre_commit_hook(store: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    hook = other / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec {sys.executable} -m loa_mem remember "
                    f"'Remembered from a hook.' -c fact --root {store}\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    (other / "f.txt").write_text("other\n", encoding="utf-8")
    git(other, "add", "f.txt")
    before = support.commit_count(store)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.environ["GIT_CONFIG_GLOBAL"], GIT_CONFIG_NOSYSTEM="1")
    import subprocess

    subprocess.run(["git", "commit", "-q", "-a", "-m", "with hook"], cwd=other, env=env,
                   check=True, capture_output=True)

    assert support.commit_count(store) == before + 1
    assert support.changed_files(store) == [EVENTS, f"{M}/facts.yaml"]
    assert support.changed_files(other) == ["f.txt"]
    assert git(other, "status", "--porcelain") == ""


def test_no_commit_then_commit(cli: Cli, store: Path) -> None:
    before = support.commit_count(store)
    first = support.remember(cli, "The service is written in Go.", "fact", "--no-commit")
    second = support.remember(cli, "Retries back off.", "learning", "--no-commit")
    cli.ok("feedback", first, "--success", "--no-commit")

    assert support.commit_count(store) == before
    pending = cli.ok("status", "--json").json()["pending"]
    assert sorted(pending) == [EVENTS, f"{M}/facts.yaml", f"{M}/learnings.yaml"]
    data = cli.ok("commit", "--json").json()

    assert support.commit_count(store) == before + 1
    assert support.changed_files(store) == [EVENTS, f"{M}/facts.yaml", f"{M}/learnings.yaml"]
    assert support.message(store).startswith("loa-mem commit: ")
    assert ("Loa-Op", "commit") in support.trailers(store)
    assert {v for k, v in support.trailers(store) if k == "Loa-Id"} == {first, second}
    assert data["ops"] == ["remember", "feedback"]
    assert cli.ok("status", "--json").json()["pending"] == []
    assert cli("commit").code == 1


def test_commit_leaves_the_users_other_work_alone(cli: Cli, store: Path) -> None:
    support.remember(cli, "The service is written in Go.", "fact", "--no-commit")
    _dirty(store)
    before = _user_state(store)
    cli.ok("commit")

    assert _user_state(store) == before
    assert support.changed_files(store) == [EVENTS, f"{M}/facts.yaml"]


def test_auto_commit_false_in_the_config(cli: Cli, store: Path) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "git:\n  auto_commit: false\n",
                      encoding="utf-8")
    git(store, "commit", "-q", "-m", "config", "--", ".loa.config.yaml")
    before = support.commit_count(store)
    data = cli.ok("remember", "The service is written in Go.", "-c", "fact", "--json").json()

    assert data["commit"] is None
    assert support.commit_count(store) == before
    cli.ok("commit")
    assert support.commit_count(store) == before + 1


def test_a_subdirectory_uses_the_top_level_store(store: Path) -> None:
    sub = store / "src" / "deep"
    sub.mkdir(parents=True)
    result = run_loa_mem(sub, "remember", "Found from a subdirectory.", "-c", "fact", "--json")

    assert result.returncode == 0, result.stderr
    assert support.entries(store, "fact")[0]["content"] == "Found from a subdirectory."
    assert not (sub / "grimoires").exists()


def test_commit_names_only_the_pending_operation_when_later_commands_committed(
        cli: Cli, store: Path) -> None:
    """A --no-commit line sits in the events log before the lines of the commands committed
    after it: the commit of what is pending names that operation and entry alone, so `history`
    of every other entry does not list it."""
    committed = support.remember(cli, "The service is written in Go.", "fact")
    pending = support.remember(cli, "Retries back off.", "learning", "--no-commit")
    later = support.remember(cli, "The cache lives ten minutes.", "fact")
    cli.ok("feedback", committed, "--success")
    data = cli.ok("commit", "--json").json()

    assert support.message(store).startswith("loa-mem commit: 1 pending operation(s): remember")
    assert {v for k, v in support.trailers(store) if k == "Loa-Id"} == {pending}
    assert data["ops"] == ["remember"]
    history = cli.ok("history", later, "--json").json()
    assert all("pending operation" not in c["subject"] for c in history["commits"])
