"""Whatever git does to memory commits (reset, revert, cherry-pick, an interactive rebase that
drops one, stash, a file checked out from an older commit, a merge that keeps one side, a merge
or a repair of a file committed with CRLF), the memory files stay valid, each entry is there
once, and recall, context and validate answer as an index rebuilt from scratch does.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, clones_of, git

FACTS = f"{support.MEMORY}/facts.yaml"


def _history(cli: Cli, store: Path) -> dict[str, str]:
    """Four memory commits on main: two facts, feedback on the first, a decision."""
    first = support.remember(cli, "Deploys go out on Tuesdays.")
    second = support.remember(cli, "Deploys need a green build.")
    cli.ok("feedback", first, "--success")
    decision = support.remember(cli, "Deploy with Argo CD: pull-based and audited.", "decision")
    return {"first": first, "second": second, "decision": decision}


def _reset(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    git(store, "reset", "-q", "--hard", "HEAD~1")
    return {ids["first"], ids["second"]}


def _revert_old(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    git(store, "revert", "--no-edit", "HEAD~2")  # the commit that remembered `second`
    return {ids["first"], ids["decision"]}


def _cherry_pick(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    git(store, "checkout", "-q", "-b", "release", "HEAD~3")
    mine = support.remember(cli, "Release branches are cut on Mondays.")
    git(store, "cherry-pick", "main")  # the decision
    return {ids["first"], ids["decision"], mine}


def _drop(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    dropped = git(store, "log", "-1", "--format=%h", "--grep", ids["second"]).strip()
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": f"sed -i /^pick.{dropped}/d"}
    subprocess.run(["git", "rebase", "-q", "-i", "HEAD~3"], cwd=store, env=env, check=True,
                   capture_output=True)
    return {ids["first"], ids["decision"]}


def _stash(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    facts = store / FACTS
    facts.write_text(facts.read_text().replace("on Tuesdays.", "on Tuesdays and Thursdays."))
    git(store, "stash", "-q")
    during = support.remember(cli, "Deploys are frozen in December.")
    git(store, "stash", "pop", "-q")
    assert "Tuesdays and Thursdays" in facts.read_text()
    return {*ids.values(), during}


def _old_file_staged(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    git(store, "checkout", "HEAD~3", "--", FACTS)  # facts.yaml before `second`, staged
    later = support.remember(cli, "Deploy windows are two hours.")
    assert ids["second"] in git(store, "show", f"HEAD:{FACTS}")
    staged = git(store, "show", f":{FACTS}")
    assert later in staged and ids["second"] not in staged
    git(store, "commit", "-qm", "take the facts back to before the second")
    return {ids["first"], ids["decision"], later}


def _merge_ours(cli: Cli, store: Path, ids: dict[str, str]) -> set[str]:
    git(store, "checkout", "-q", "-b", "experiment")
    support.remember(cli, "An experiment nobody keeps.")
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "-s", "ours", "--no-edit", "experiment")
    return set(ids.values())


OPERATIONS: dict[str, Callable[[Cli, Path, dict[str, str]], set[str]]] = {
    "reset --hard": _reset, "revert of an older commit": _revert_old,
    "cherry-pick onto another branch": _cherry_pick, "rebase -i dropping one": _drop,
    "stash, remember, pop": _stash, "an older file checked out and staged": _old_file_staged,
    "merge -s ours": _merge_ours,
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_the_store_follows_what_git_did(cli: Cli, store: Path, operation: str) -> None:
    ids = _history(cli, store)
    cli.ok("recall", "deploy")  # the index is up to date before git changes the files
    expected = OPERATIONS[operation](cli, store, ids)
    assert sorted(support.all_ids(store)) == sorted(expected)
    assert cli("validate").code == 0
    support.answers_as_rebuilt(cli, store, "deploy")


def test_a_merge_keeps_the_line_endings_a_file_was_committed_with(cli: Cli, store: Path) -> None:
    support.remember(cli, "Deploys go out on Tuesdays.")
    git(store, "branch", "side")
    paths = [store / FACTS, store / support.MEMORY / "events.jsonl"]
    for path in paths:  # saved on Windows, committed with CRLF (no autocrlf)
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    git(store, "commit", "-qam", "CRLF, as saved on Windows")
    ours = support.remember(cli, "Deploys need a green build.")
    git(store, "checkout", "-q", "side")
    theirs = support.remember(cli, "Deploys are announced in #releases.")
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "--no-edit", "side")
    for path in paths:
        data = path.read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n"), path
    changed = git(store, "diff", "--numstat", "HEAD^1", "HEAD", "--", FACTS).split()
    assert changed[1] == "0"  # lines added, none rewritten
    assert {ours, theirs} <= set(support.all_ids(store))
    support.answers_as_rebuilt(cli, store, "deploys")


def _agent_session(cli: Cli, session: str, words: str) -> None:
    cli.ok("session", "start", "--agent", "architect", "--session", session)
    cli.ok("agent", "remember", "architect", words, "-T", "preference", "--session", session)
    cli.ok("session", "end", "--session", session)


@pytest.mark.parametrize("how", ["committed with CRLF", "autocrlf"])
def test_a_merged_agent_sidecar_and_state_index_keep_crlf(cli: Cli, store: Path,
                                                          how: str) -> None:
    """Both branches ran a session with the same agent: its sidecar and the state index merge
    with the line endings the checkout has, so `git status` stays clean."""
    _agent_session(cli, "S-base", "reads the ADRs first")
    paths = [store / "grimoires/loa/agents/architect.yaml", store / "grimoires/loa/MDAN-STATE.json"]
    if how == "autocrlf":
        git(store, "config", "core.autocrlf", "true")
        for path in paths:
            path.unlink()
        git(store, "checkout", "--", ".")
    else:  # saved on Windows, committed with CRLF
        for path in paths:
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        git(store, "commit", "-qam", "CRLF, as saved on Windows")
    assert all(_crlf_only(path.read_bytes()) for path in paths)
    git(store, "branch", "side")
    _agent_session(cli, "S-main", "prefers small modules")
    git(store, "checkout", "-q", "side")
    _agent_session(cli, "S-side", "chose the queue")
    git(store, "checkout", "-q", "main")
    git(store, "merge", "-q", "--no-edit", "side")
    for path in paths:
        assert _crlf_only(path.read_bytes()), path
    assert support.porcelain(store) == ""
    memories = (store / "grimoires/loa/agents/architect.yaml").read_text(encoding="utf-8")
    assert "prefers small modules" in memories and "chose the queue" in memories
    assert cli("validate").code == 0


def _crlf_only(data: bytes) -> bool:
    return data.count(b"\n") > 0 and data.count(b"\n") == data.count(b"\r\n")


def test_a_repaired_conflict_keeps_crlf_line_endings(cli: Cli, store: Path) -> None:
    shared = support.remember(cli, "The queue is RabbitMQ.")
    facts = store / FACTS
    facts.write_bytes(facts.read_bytes().replace(b"\n", b"\r\n"))
    git(store, "commit", "-qam", "CRLF, as saved on Windows")
    git(store, "branch", "side")
    for branch, words in (("main", b"The queue is Kafka."), ("side", b"The queue is NATS.")):
        git(store, "checkout", "-q", branch)
        facts.write_bytes(facts.read_bytes().replace(b"The queue is RabbitMQ.", words))
        git(store, "commit", "-qam", f"{branch}: the queue")
    git(store, "checkout", "-q", "main")
    merged = subprocess.run(["git", "merge", "--no-edit", "side"], cwd=store,
                            capture_output=True, check=False)
    assert merged.returncode == 1
    cli.ok("repair")
    data = facts.read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") and b"Kafka" in data
    git(store, "commit", "-q", "--no-edit")
    assert support.entry(store, shared)["content"] == "The queue is Kafka."
    support.answers_as_rebuilt(cli, store, "queue")


@pytest.mark.parametrize("retire", ["forget", "archive"])
def test_pull_rebase_keeps_an_entry_retired_here_that_the_remote_changed(
        cli: Cli, store: Path, tmp_path: Path, retire: str) -> None:
    shared = support.remember(cli, "Deploys go out on Tuesdays.")
    ana, ben = clones_of(store, tmp_path, ("ana", "ben"))
    Cli(ana).ok("feedback", shared, "--success")
    git(ana, "push", "-q")
    Cli(ben).ok(retire, shared, "--reason", "we deploy continuously now")
    git(ben, "pull", "-q", "--rebase")
    assert support.porcelain(ben) == ""
    active = [e["id"] for e in support.entries(ben, "fact")]
    archived = [e["id"] for e in support.entries(ben, "fact", archive=True)]
    assert shared not in active and archived == ([shared] if retire == "archive" else [])
    assert Cli(ben)("validate").code == 0
    support.answers_as_rebuilt(Cli(ben), ben, "deploys")


@pytest.mark.parametrize("retire", ["forget", "archive"])
def test_a_lone_cherry_pick_of_a_forget_keeps_the_entry_retired_without_stopping(
        cli: Cli, store: Path, retire: str) -> None:
    """git names no commit to the driver of a lone cherry-pick: the driver finds the commit
    by what it did to the file, so the retirement holds as in a merge or a rebase."""
    shared = support.remember(cli, "Deploys go out on Tuesdays.")
    kept = support.remember(cli, "Deploys need a green build.")
    git(store, "branch", "release")
    cli.ok(retire, shared, "--reason", "we deploy continuously now")
    picked_commit = support.head(store)
    git(store, "checkout", "-q", "release")
    cli.ok("feedback", shared, "--success")
    picked = subprocess.run(["git", "cherry-pick", picked_commit], cwd=store,
                            capture_output=True, text=True, check=False)
    assert picked.returncode == 0, picked.stdout + picked.stderr
    assert support.porcelain(store) == ""
    assert [e["id"] for e in support.entries(store, "fact")] == [kept]
    archived = [e["id"] for e in support.entries(store, "fact", archive=True)]
    assert archived == ([shared] if retire == "archive" else [])
    assert cli("validate").code == 0
    support.answers_as_rebuilt(cli, store, "deploys")


@pytest.mark.parametrize("how", ["pull --rebase", "pull --no-rebase"])
@pytest.mark.parametrize("archiver", ["here", "teammate"])
def test_an_entry_archived_on_one_side_and_superseded_on_the_other_keeps_both_links(
        cli: Cli, store: Path, tmp_path: Path, how: str, archiver: str) -> None:
    """Both sides moved entries to the archive (so git merges that file too): the archived
    copy takes the other side's superseded_by, with no repair."""
    shared = support.remember(cli, "Deploys go out on Tuesdays.")
    other = support.remember(cli, "The cache lives ten minutes.")
    support.remember(cli, "Logs are kept a month.")
    ana, ben = clones_of(store, tmp_path, ("ana", "ben"))
    superseder, archiving = (Cli(ana), Cli(ben)) if archiver == "here" else (Cli(ben), Cli(ana))
    newer = superseder.ok("supersede", shared, "Deploys go out on Wednesdays.",
                          "--json").json()["id"]
    superseder.ok("archive", other, "--reason", "the cache is gone")
    archiving.ok("archive", shared, "--reason", "we deploy continuously now")
    first, second = (ana, ben) if archiver == "here" else (ben, ana)
    git(first, "push", "-q")
    git(second, "pull", "-q", *(["--rebase"] if how == "pull --rebase" else ["--no-rebase",
                                                                             "--no-edit"]))
    assert support.porcelain(second) == ""
    archived = {e["id"]: e for e in support.entries(second, "fact", archive=True)}
    assert set(archived) == {shared, other}
    assert archived[shared]["superseded_by"] == newer and archived[shared]["archived"] is True
    assert support.entry(second, newer)["supersedes"] == shared
    assert Cli(second)("validate").code == 0
    support.answers_as_rebuilt(Cli(second), second, "deploys")


def test_an_entry_forgotten_and_restored_here_keeps_its_id_through_pull_rebase(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    """Replaying a restore, the driver took an id the other side's files and events log name
    but the base file lacks (it was forgotten there) for one both branches created, and
    renumbered the restored entry: the links to it then pointed at no entry."""
    older = support.remember(cli, "Deploys go out on Mondays.")
    shared = cli.ok("supersede", older, "Deploys go out on Tuesdays.", "--json").json()["id"]
    ana, ben = clones_of(store, tmp_path, ("ana", "ben"))
    Cli(ana).ok("feedback", shared, "--success")
    support.remember(Cli(ana), "Logs are kept a month.")  # the file changed on both sides
    git(ana, "push", "-q")
    Cli(ben).ok("forget", shared, "--reason", "by mistake")
    Cli(ben).ok("restore", shared)
    newer = Cli(ben).ok("supersede", shared, "Deploys go out on Wednesdays.",
                        "--json").json()["id"]
    pulled = subprocess.run(["git", "pull", "-q", "--rebase"], cwd=ben, capture_output=True,
                            text=True, check=False)
    assert pulled.returncode == 0 and "renumbered" not in pulled.stderr, pulled.stderr
    assert support.porcelain(ben) == ""
    assert support.entry(ben, shared)["superseded_by"] == newer
    assert support.entry(ben, newer)["supersedes"] == shared
    assert Cli(ben)("validate").code == 0
    support.answers_as_rebuilt(Cli(ben), ben, "deploys")


def test_a_reverted_forget_leaves_no_forget_in_the_log_and_a_later_forget_holds_on_rebase(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    """`git revert` of a forget brings the entry back and takes its forget event out of the
    events log too (the log's merge driver used to keep every line, so the log still said
    forgotten); forgetting it again here while the remote supersedes it then rebases cleanly."""
    events = store / support.MEMORY / "events.jsonl"
    shared = support.remember(cli, "Deploys go out on Tuesdays.")
    before = events.read_text(encoding="utf-8")
    cli.ok("forget", shared, "--reason", "by mistake")
    support.remember(cli, "The cache lives ten minutes.")
    git(store, "revert", "--no-edit", "HEAD~1")

    assert shared in [e["id"] for e in support.entries(store, "fact")]
    log = events.read_text(encoding="utf-8")
    assert log.startswith(before) and '"op": "forget"' not in log
    ana, ben = clones_of(store, tmp_path, ("ana", "ben"))
    Cli(ana).ok("supersede", shared, "Deploys go out on Wednesdays.")
    git(ana, "push", "-q")
    Cli(ben).ok("forget", shared, "--reason", "we deploy continuously now")
    git(ben, "pull", "-q", "--rebase")
    assert support.porcelain(ben) == ""
    assert shared not in [e["id"] for e in support.entries(ben, "fact")]
    assert Cli(ben)("validate").code == 0
