"""`loa-mem remember` answered before typer is imported: the same entry, commit, output and exit
code as the Typer command.

Each command line runs as a real process twice, in two stores set up alike: once through the
process entry point (the fast path) and once through the Typer application. Ids are random and
shas differ with them, so both are replaced by placeholders before comparing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, git, run_loa_mem

_TYPER = "import sys; from loa_mem.cli.app import run; sys.exit(run(sys.argv[1:]))"
_ID = re.compile(r"MEM-\d{8}-[a-z2-7]{8}\b")
_SHA = re.compile(r"\b[0-9a-f]{7,40}\b")


def through_typer(root: Path, args: tuple[str, ...], stdin: str | None
                  ) -> subprocess.CompletedProcess[str]:
    """The same command line through the Typer application, never the fast path."""
    return subprocess.run([sys.executable, "-c", _TYPER, "remember", *args], cwd=root,
                          input=stdin, capture_output=True, text=True, check=False)


def _plain(text: str) -> str:
    return _SHA.sub("<sha>", _ID.sub("<id>", text))


def _made(root: Path) -> str:
    """What the last command left in the repository: HEAD's message and change, and any
    change not committed."""
    log = git(root, "log", "-1", "--format=%an <%ae>%n%B", "--stat", "-p")
    return _plain(log + git(root, "status", "--porcelain") + git(root, "diff"))


@pytest.fixture
def twins(store: Path, tmp_path: Path) -> tuple[Path, Path]:
    twin = tmp_path / "twin" / store.name
    twin.mkdir(parents=True)
    git(twin, "init", "-q")
    Cli(twin).ok("init")
    for root in (store, twin):
        Cli(root).ok("remember", "The staging database is refreshed every Sunday night.", "-c",
                     "fact", "-t", "database")
    return store, twin


INVOCATIONS: list[tuple[tuple[str, ...], str | None]] = [
    (("Use PostgreSQL for the database layer.", "-c", "decision"), None),
    (("Use PostgreSQL for the database layer.", "-c", "decision", "--json"), None),
    (("The CI runs on two cores; keep the suite under 15 minutes.", "--category=fact",
      "--tag=ci", "-t", "speed", "--summary", "CI budget", "--confidence", "85%", "--ttl", "30",
      "--session", "s-1", "--agent", "claude", "--phase", "build", "--file", "ci/run.sh",
      "--lines", "3-9"), None),
    (("Flaky tests came from a shared temp folder.", "-c", "error", "--no-commit", "--json"),
     None),
    (("Prefer small commits.", "-c", "preference", "--confidence=0.6", "--ttl=permanent"), None),
    # the same content again: the existing entry answers
    (("The staging database is refreshed every Sunday night.", "-c", "fact"), None),
    (("The staging database is refreshed every Sunday night.", "-c", "fact", "--json"), None),
    # refusals (exit 1), with and without --json
    (("The admin password is hunter2-Quartz", "-c", "fact"), None),
    (("Mail ana@example.com about it.", "-c", "fact", "--json"), None),
    (("A note.", "-c", "nonsense"), None),
    (("A decision made in a hurry.", "-c", "decision", "--confidence", "0.2"), None),
    (("A note.", "-c", "fact", "-t", "Not Kebab"), None),
    (("A note.", "-c", "fact", "--related", "MEM-20260101-abcdefgh", "--json"), None),
    (("A note.", "-c", "fact", "--ttl", "soon"), None),
    (("", "-c", "fact"), None),
    # for the Typer command: usage errors, help, stdin
    (("A note.", "-c", "fact", "--confidence", "high"), None),
    (("A note.",), None),
    (("A note.", "Another.", "-c", "fact"), None),
    (("A note.", "-c", "fact", "--bogus"), None),
    (("A note.", "-c", "fact", "--summary"), None),
    (("A note.", "-c", "fact", "-c", "error"), None),
    (("--help",), None),
    (("-", "-c", "learning", "--json"), "Read from stdin.\n"),
]


@pytest.mark.parametrize(("args", "stdin"), INVOCATIONS,
                         ids=lambda a: " ".join(a) if isinstance(a, tuple) else str(a))
def test_the_fast_path_does_what_the_typer_command_does(
        twins: tuple[Path, Path], args: tuple[str, ...], stdin: str | None) -> None:
    fast_root, typer_root = twins
    fast = run_loa_mem(fast_root, "remember", *args, stdin=stdin)
    slow = through_typer(typer_root, args, stdin)
    assert (fast.returncode, _plain(fast.stdout), _plain(fast.stderr)) == (
        slow.returncode, _plain(slow.stdout), _plain(slow.stderr))
    assert _made(fast_root) == _made(typer_root)


def test_a_session_from_the_environment_is_recorded_alike(twins: tuple[Path, Path]) -> None:
    fast_root, typer_root = twins
    env = {"LOA_MEM_SESSION": "from-env"}
    fast = run_loa_mem(fast_root, "remember", "Builds are cached per branch.", "-c", "fact",
                       env=env)
    slow = subprocess.run([sys.executable, "-c", _TYPER, "remember",
                           "Builds are cached per branch.", "-c", "fact"], cwd=typer_root,
                          env={**os.environ, **env}, capture_output=True,
                          text=True, check=False)
    assert (fast.returncode, _plain(fast.stdout)) == (slow.returncode, _plain(slow.stdout))
    assert "from-env" in git(fast_root, "show", "HEAD")
    assert _made(fast_root) == _made(typer_root)


def test_remember_imports_neither_typer_nor_rich(store: Path) -> None:
    done = run_loa_mem(store, "remember", "The cache lives in .git/loa-mem.", "-c", "fact",
                       env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.returncode == 0
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "loa_mem.cli.fast_remember" in imported
    assert not {name.split(".")[0] for name in imported} & {"typer", "click", "rich"}
