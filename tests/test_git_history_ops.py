"""Whatever git does to memory commits (reset, revert, cherry-pick, an interactive rebase that
drops one, stash, a file checked out from an older commit, a merge that keeps one side), the
memory files stay valid, each entry is there once, and recall, context and validate answer as
an index rebuilt from scratch does.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git

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
