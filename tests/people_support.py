"""Shared helpers of the `pref` tests: a CLI bound to a personal store in a temporary home."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loa_mem.people import home as people
from tests.conftest import Cli

T0 = "2026-03-01T09:00:00Z"
ALICE = "alice@example.com"
BOB = "bob@example.com"


def at(days: float) -> str:
    """T0 plus `days`, as LOA_MEM_NOW text."""
    from loa_mem.core import clock

    return clock.iso(clock.parse(T0) + clock.days(days))


class PrefCli(Cli):
    """`loa-mem pref ...` for one user, at T0 unless `now=` says otherwise."""

    def __init__(self, root: Path, home: Path) -> None:
        super().__init__(root)
        self.home = home

    def pref(self, *args: str, now: str = T0, **kwargs: Any) -> dict[str, Any]:
        outcome = self.ok("pref", *args, "--json", now=now, **kwargs)
        data: dict[str, Any] = json.loads(outcome.stdout)
        return data

    def get(self, key: str, now: str = T0) -> dict[str, Any]:
        return self.pref("get", key, now=now)

    def folder(self, user: str = ALICE) -> Path:
        return self.home / people.slug(user)

    def access_log(self, user: str = ALICE) -> list[dict[str, Any]]:
        path = self.folder(user) / people.ACCESS_LOG
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def make_pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    """Alice's CLI, with LOA_MEM_HOME in `tmp_path` and the cwd outside any repository."""
    home = tmp_path / "personal"
    monkeypatch.setenv("LOA_MEM_HOME", str(home))
    monkeypatch.setenv("LOA_MEM_USER", ALICE)
    work = tmp_path / "anywhere"
    work.mkdir()
    monkeypatch.chdir(work)
    return PrefCli(work, home)
