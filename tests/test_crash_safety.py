"""Crash safety (spec section 5): files are replaced atomically, so a failed or killed write
leaves every grimoire file either as it was or as it should be, and no temporary file behind."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, run_loa_mem


def _temporary_files(store: Path) -> list[str]:
    return sorted(p.name for p in (store / "grimoires").rglob("*") if p.name.endswith(".tmp"))


def test_no_temporary_file_is_left_after_writes(cli: Cli, store: Path) -> None:
    first = support.remember(cli, "The service is written in Go.", "fact")
    second = cli.ok("supersede", first, "The service is written in Go 1.22.", "--json").json()["id"]
    cli.ok("feedback", second, "--success")
    cli.ok("archive", second)
    cli.ok("restore", second)
    cli.ok("forget", first, "--reason", "old")

    assert _temporary_files(store) == []
    assert support.porcelain(store) == ""


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(
        cli: Cli, store: Path, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    first = support.remember(cli, "The service is written in Go.", "fact")
    before, commits = support.snapshot(store), support.commit_count(store)

    def disk_full(*_: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, failing, disk_full)
        outcome = cli("remember", "A fact that never lands.", "-c", "fact")

    assert outcome.code == 1
    assert outcome.stderr.strip().splitlines() == [
        "loa-mem: write-failed: could not write a store file: No space left on device; free disk "
        "space or fix the folder's permissions, then retry; nothing was changed"]
    assert _temporary_files(store) == []
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits
    # The store is still usable: the next remember lands with a fresh id of its own.
    landed = support.assert_new_id(support.remember(cli, "A fact that lands.", "fact"))
    assert sorted(support.all_ids(store)) == sorted([first, landed])
    assert support.entry(store, landed)["content"] == "A fact that lands."
    cli.ok("validate")


def test_a_move_between_two_files_that_fails_half_way_changes_neither(
        cli: Cli, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`archive` writes the facts file and the archive file: if the second write fails, the
    first must not be left replaced (the entry would be in neither file, or in both)."""
    fact = support.remember(cli, "The service is written in Go.", "fact")
    before, commits = support.snapshot(store), support.commit_count(store)
    real_fsync, written = os.fsync, []

    def full_after_one(fd: int) -> None:
        written.append(fd)
        if len(written) > 1:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", full_after_one)
        outcome = cli("archive", fact, "--reason", "manual")

    assert len(written) == 2  # the first file was written in full before the second failed
    assert outcome.code == 1 and "nothing was changed" in outcome.stderr
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits
    assert _temporary_files(store) == []
    cli.ok("archive", fact, "--reason", "manual")
    cli.ok("validate")


WRITER = """
import sys
from loa_mem.cli.app import run
for n in range(1000):
    if run(["remember", f"Entry {n} written while being killed.", "-c", "fact"]):
        sys.exit(1)
"""


@pytest.mark.parametrize("seed", range(3))
def test_a_killed_writer_leaves_parseable_files(store: Path, seed: int) -> None:
    writer = subprocess.Popen([sys.executable, "-c", WRITER], cwd=store,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    for _ in range(2 + seed):  # let it finish a few writes, then kill it somewhere in the next
        assert "remembered" in writer.stdout.readline()
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()

    result = run_loa_mem(store, "validate", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    ids = support.all_ids(store)
    assert len(ids) == len(set(ids)) >= 2 + seed
    # The lock died with the writer; the next writer neither waits nor reuses an id.
    after = run_loa_mem(store, "remember", "After the crash.", "-c", "fact", "--json",
                        env={"LOA_MEM_LOCK_TIMEOUT": "2"})
    assert after.returncode == 0, after.stderr
    assert len(set(support.all_ids(store))) == len(ids) + 1


def test_a_read_only_disk_outside_a_transaction_is_one_line_too(
        cli: Cli, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hooks install` writes its own files; a disk's refusal is for the user to fix, no crash."""

    def read_only(*_: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", read_only)
        outcome = cli("hooks", "install", "--git")

    assert outcome.code == 1
    assert outcome.stderr.startswith("loa-mem: io: ")
    assert outcome.stderr.strip().endswith(
        "Read-only file system; free disk space or fix the permissions, then retry")
    assert "unexpected error" not in outcome.stderr and len(outcome.stderr.splitlines()) == 1
    assert not (store / ".git/hooks/pre-commit").exists()
