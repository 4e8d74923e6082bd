"""`loa-mem context` finds the user (for their preferences) from git's user.email without
asking git at every session start, and never with a stale answer: a change to any config file
git reads it from, or to the environment naming them, is seen at the next session start."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, git, run_loa_mem
from tests.people_support import ALICE, BOB

CAROL = "carol@example.com"
VERTICAL = {ALICE: "Retail", BOB: "Banking", CAROL: "Travel"}


@pytest.fixture
def project(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store, and three people with a different preferred vertical each."""
    monkeypatch.setenv("LOA_MEM_HOME", str(tmp_path / "personal"))
    cli = Cli(store)
    for user, value in VERTICAL.items():
        cli.ok("pref", "set", "vertical", value, "--user", user)
    return store


def vertical(store: Path, *args: str, **env: str) -> str | None:
    """The preferred vertical the session starts with (None: no preferences)."""
    done = run_loa_mem(store, "context", *args, env=env)
    assert done.returncode == 0, done.stderr
    found = [line for line in done.stdout.splitlines() if line.startswith("- vertical: ")]
    return found[0].split()[2] if found else None


def no_git_on_path(tmp_path: Path) -> str:
    """A PATH holding python and nothing else (no git)."""
    folder = tmp_path / "bin-without-git"
    folder.mkdir(exist_ok=True)
    return f"{folder}{os.pathsep}{Path(sys.executable).parent}"


def global_config(email: str) -> None:
    Path(os.environ["GIT_CONFIG_GLOBAL"]).write_text(f"[user]\n\temail = {email}\n",
                                                     encoding="utf-8")


def test_the_repositorys_user_email_is_followed_at_every_session_start(project: Path) -> None:
    git(project, "config", "user.email", ALICE)
    assert vertical(project) == vertical(project) == "Retail"
    git(project, "config", "user.email", BOB)
    assert vertical(project) == "Banking"
    git(project, "config", "--unset", "user.email")
    global_config(CAROL)
    assert vertical(project) == "Travel"


def test_a_session_start_with_nothing_changed_does_not_ask_git(project: Path,
                                                               tmp_path: Path) -> None:
    git(project, "config", "user.email", ALICE)
    assert vertical(project) == "Retail"
    assert vertical(project, PATH=no_git_on_path(tmp_path)) == "Retail"
    git(project, "config", "user.email", BOB)
    # git's answer can no longer be vouched for, and git cannot be asked: no preferences
    assert vertical(project, PATH=no_git_on_path(tmp_path)) is None
    assert vertical(project) == "Banking"


def test_a_global_config_edited_or_named_elsewhere_is_seen(project: Path,
                                                           tmp_path: Path) -> None:
    global_config(CAROL)
    assert vertical(project) == vertical(project) == "Travel"
    global_config(ALICE)
    assert vertical(project) == "Retail"
    other = tmp_path / "other.gitconfig"
    other.write_text(f"[user]\n\temail = {BOB}\n", encoding="utf-8")
    assert vertical(project, GIT_CONFIG_GLOBAL=str(other)) == "Banking"
    assert vertical(project) == "Retail"


def test_an_included_config_file_is_read_by_git_every_time(project: Path,
                                                           tmp_path: Path) -> None:
    included = tmp_path / "identity.gitconfig"
    included.write_text(f"[user]\n\temail = {ALICE}\n", encoding="utf-8")
    Path(os.environ["GIT_CONFIG_GLOBAL"]).write_text(
        f'[includeIf "gitdir:{project}/"]\n\tpath = {included}\n', encoding="utf-8")
    assert vertical(project) == vertical(project) == "Retail"
    included.write_text(f"[user]\n\temail = {BOB}\n", encoding="utf-8")  # the include's only
    assert vertical(project) == "Banking"


def test_the_user_named_on_the_command_line_or_in_the_environment_comes_first(
        project: Path) -> None:
    git(project, "config", "user.email", ALICE)
    assert vertical(project) == "Retail"
    assert vertical(project, "--user", BOB) == "Banking"
    assert vertical(project, LOA_MEM_USER=CAROL) == "Travel"
    assert vertical(project) == "Retail"
