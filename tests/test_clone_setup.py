"""A clone registers the merge drivers in its own git config on its first command: written as
`git config` would write them, never over another process's lock, and through `git config`
itself whenever the file is not plain (an old driver to replace, a symlink)."""

from __future__ import annotations

import os
from pathlib import Path

from loa_mem.core import clonesetup
from tests.conftest import Cli, git


def _clone(store: Path, where: Path, name: str) -> Path:
    git(where, "clone", "-q", str(store), name)
    return where / name


def _by_git(clone: Path) -> None:
    """The drivers registered the way `git config` does it, one key at a time."""
    for name, label in (("loa-mem", "loa-mem: merge memory files by entry id"),
                        ("loa-mem-log", "loa-mem: merge the events log (a union of lines)")):
        git(clone, "config", f"merge.{name}.name", label)
        git(clone, "config", f"merge.{name}.driver",
            clonesetup.driver_command(name == "loa-mem-log"))


def test_a_fresh_clone_config_matches_what_git_config_writes(tmp_path: Path,
                                                            store: Path) -> None:
    ours, theirs = _clone(store, tmp_path, "ours"), _clone(store, tmp_path, "theirs")
    os.chmod(ours / ".git/config", 0o640)
    Cli(ours).ok("recall", "anything")
    _by_git(theirs)

    assert (ours / ".git/config").read_text() == (theirs / ".git/config").read_text()
    assert (ours / ".git/config").stat().st_mode & 0o777 == 0o640
    assert not (ours / ".git/config.lock").exists()
    for name in ("loa-mem", "loa-mem-log"):
        assert git(ours, "config", "--get-all", f"merge.{name}.driver").rstrip("\n") == \
            clonesetup.driver_command(name == "loa-mem-log")


def test_a_config_without_a_final_newline_gets_its_sections_on_new_lines(
        tmp_path: Path, store: Path) -> None:
    clone = _clone(store, tmp_path, "clone")
    config = clone / ".git/config"
    config.write_text(config.read_text().rstrip("\n") + "\n[alias]\n\tst = status")
    Cli(clone).ok("recall", "anything")

    assert git(clone, "config", "--get", "alias.st").rstrip("\n") == "status"
    assert git(clone, "config", "--get", "merge.loa-mem.driver").rstrip("\n") == \
        clonesetup.driver_command(False)


def test_an_old_driver_is_replaced_in_place_not_added_twice(tmp_path: Path,
                                                           store: Path) -> None:
    clone = _clone(store, tmp_path, "clone")
    git(clone, "config", "merge.loa-mem.driver", "/old/venv/bin/loa-mem merge-driver %O %A %B")
    Cli(clone).ok("recall", "anything")

    assert git(clone, "config", "--get-all", "merge.loa-mem.driver").rstrip("\n") == \
        clonesetup.driver_command(False)
    assert (clone / ".git/config").read_text().count('[merge "loa-mem"]') == 1


def test_a_config_lock_held_by_git_is_left_alone_and_the_command_still_answers(
        tmp_path: Path, store: Path) -> None:
    clone = _clone(store, tmp_path, "clone")
    config, lock = clone / ".git/config", clone / ".git/config.lock"
    before = config.read_text()
    lock.write_text("another git process is writing\n")
    Cli(clone).ok("recall", "anything")

    assert lock.read_text() == "another git process is writing\n"
    assert config.read_text() == before
    lock.unlink()  # that process is done: the next command registers the drivers
    Cli(clone).ok("recall", "anything")
    assert git(clone, "config", "--get", "merge.loa-mem-log.driver").rstrip("\n") == \
        clonesetup.driver_command(True)


def test_a_symlinked_config_stays_a_symlink(tmp_path: Path, store: Path) -> None:
    clone = _clone(store, tmp_path, "clone")
    shared = tmp_path / "shared-config"
    (clone / ".git/config").rename(shared)
    (clone / ".git/config").symlink_to(shared)
    Cli(clone).ok("recall", "anything")

    assert (clone / ".git/config").is_symlink()
    assert '[merge "loa-mem"]' in shared.read_text()
