"""What cannot be undone (`pref clear`, `--purge`) is asked about on a terminal; `--yes`
answers in advance; without a terminal and without --yes nothing is deleted."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.people_support import T0, PrefCli, make_pcli


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


@pytest.mark.parametrize("args", [("clear",), ("clear", "--flagged"),
                                  ("forget", "Retail", "--purge")])
def test_without_a_terminal_it_refuses_until_yes(pcli: PrefCli, args: tuple[str, ...]) -> None:
    pcli.pref("set", "vertical", "Retail")
    refused = pcli("pref", *args, "--json", now=T0)

    assert refused.code == 1
    assert "--yes" in refused.stderr and "nothing was deleted" in refused.stderr
    assert refused.json()["error"]["kind"] == "refused"
    assert pcli.get("vertical")  # still there


def test_forget_without_purge_asks_nothing(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    assert pcli("pref", "forget", "Retail", now=T0).code == 0


def _on_terminal(pcli: PrefCli, answer: str, *args: str) -> tuple[int, str]:
    leader, follower = pty.openpty()
    env = {**os.environ, "LOA_MEM_NOW": T0, "LOA_MEM_ROOT": str(pcli.root)}
    with subprocess.Popen([sys.executable, "-m", "loa_mem", "pref", *args], cwd=pcli.root,
                          env=env, stdin=follower, stdout=subprocess.PIPE,
                          stderr=follower) as process:
        os.close(follower)
        os.write(leader, answer.encode() + b"\n")
        out = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        code = process.wait()
    os.close(leader)
    return code, out.decode(errors="replace")


@pytest.mark.parametrize(("answer", "kept"), [("n", True), ("y", False)])
def test_on_a_terminal_it_asks(pcli: PrefCli, answer: str, kept: bool) -> None:
    pcli.pref("set", "vertical", "Retail")
    code, shown = _on_terminal(pcli, answer, "clear")

    assert "cannot be undone. Go ahead? [y/N]" in shown
    assert code == (1 if kept else 0)
    assert bool(pcli("pref", "show", "--json", now=T0).json()["preferences"]) is kept
