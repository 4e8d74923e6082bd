"""Shared fixtures: real git repositories in temporary folders, a fixed clock, and a CLI runner.

Every test runs with HOME pointing at an empty temporary folder and no global git config, so
nothing can read or write the developer's real home directory or identity.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from loa_mem.cli.app import register

FIXED_NOW = "2026-02-01T10:30:00Z"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
                   ) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    # no model is ever fetched: semantic tests build their own (tests/semantic_support.py)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    for key in list(os.environ):
        if key.startswith("LOA_MEM_") or key in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LOA_MEM_NOW", FIXED_NOW)
    monkeypatch.setenv("NO_COLOR", "1")
    # git finds the merge driver by name, as in a shell where this environment is active
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


class Cli:
    """Runs loa-mem commands in-process against one repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def __call__(self, *args: str, stdin: str | None = None, now: str | None = None,
                 env: dict[str, str] | None = None) -> Outcome:
        extra = dict(env or {})
        if now:
            extra["LOA_MEM_NOW"] = now
        extra.setdefault("LOA_MEM_ROOT", str(self.root))
        result = self.runner.invoke(register(), list(args), input=stdin, env=extra,
                                    catch_exceptions=False)
        return Outcome(result.exit_code, result.stdout, result.stderr)

    def ok(self, *args: str, **kwargs: Any) -> Outcome:
        outcome = self(*args, **kwargs)
        assert outcome.code == 0, f"loa-mem {' '.join(args)} -> {outcome.code}\n{outcome.stderr}"
        return outcome


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def clones_of(store: Path, where: Path, names: tuple[str, ...] = ("ana", "ben", "cy")
              ) -> list[Path]:
    """A bare remote of `store` in `where` and one clone of it per name: a team's set-up."""
    remote = where / "remote.git"
    git(where, "clone", "-q", "--bare", str(store), str(remote))
    for name in names:
        git(where, "clone", "-q", str(remote), name)
    return [where / name for name in names]


def run_loa_mem(root: Path, *args: str, env: dict[str, str] | None = None,
                stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run loa-mem as a real process (for concurrency, hooks and exit codes end to end)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "loa_mem", *args], cwd=root, env=full_env,
                          input=stdin, capture_output=True, text=True, check=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository (no loa-mem store yet)."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    return root


@pytest.fixture
def store(repo: Path) -> Path:
    """A git repository with an initialised loa-mem store."""
    Cli(repo).ok("init")
    return repo


@pytest.fixture
def cli(store: Path) -> Iterator[Cli]:
    yield Cli(store)
