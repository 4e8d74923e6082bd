"""Failures: an unreadable store starts the session without preferences (logged, not shown); a
failed write is retried once after 2 seconds, then reported and logged, and nothing else is
lost. Also `loa-mem context` with the user's preferences."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from loa_mem.people import home as people
from loa_mem.people import writing as people_store
from tests.conftest import FIXED_NOW, Cli, git, run_loa_mem
from tests.people_support import ALICE, T0, PrefCli, make_pcli


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


def _break(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    (pcli.folder() / people.PREFS_FILE).write_text('{"format": 1, "preferences": {',
                                                   encoding="utf-8")


def test_an_unreadable_store_gives_a_session_without_preferences(pcli: PrefCli) -> None:
    _break(pcli)
    started = pcli.ok("pref", "context", now=T0)
    assert started.stdout == "" and started.stderr == ""  # the user is not told
    assert pcli.ok("pref", "session", "load", now=T0).stdout == "no live session records\n"
    errors = [e for e in pcli.access_log() if e.get("outcome") == "error"]
    assert [e["op"] for e in errors] == ["pref context", "pref session load"]
    assert "preferences.json:1:31: not JSON" in errors[0]["error"]


def test_asking_an_unreadable_store_directly_is_an_error(pcli: PrefCli) -> None:
    _break(pcli)
    failed = pcli("pref", "get", "vertical", now=T0)
    assert failed.code == 1 and "preferences.json:1:31: not JSON" in failed.stderr
    assert pcli("pref", "set", "tone", "terse", now=T0).code == 1  # nothing written over it
    assert (pcli.folder() / people.PREFS_FILE).read_text(encoding="utf-8").endswith("{")


def test_a_store_owned_by_another_account_is_refused_and_logged(pcli: PrefCli,
                                                                tmp_path: Path) -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another account")
    pcli.pref("set", "vertical", "Retail")
    os.chown(pcli.folder(), 4242, 4242)
    refused = pcli("pref", "show", now=T0)
    assert refused.code == 1 and "belongs to another account (uid 4242" in refused.stderr
    assert pcli("pref", "set", "tone", "terse", now=T0).code == 1
    assert pcli.ok("pref", "context", now=T0).stdout == ""
    fallback = Path(os.environ["HOME"]) / ".local/state/loa-mem/errors.log"
    logged = [json.loads(line) for line in fallback.read_text(encoding="utf-8").splitlines()]
    assert [e["op"] for e in logged] == ["pref show", "pref set", "pref context"]
    assert all("another account" in e["error"] for e in logged)


def test_a_failed_write_is_retried_once_after_2_seconds(pcli: PrefCli,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pcli.pref("set", "vertical", "Retail")
    busy = pcli.folder() / ".git" / "index.lock"
    busy.write_text("", encoding="utf-8")
    waited: list[float] = []

    def pause(seconds: float) -> None:  # the other git command ends while we wait
        waited.append(seconds)
        busy.unlink()

    monkeypatch.setattr(people_store, "pause", pause)
    assert pcli.pref("set", "tone", "terse")["commit"]
    assert waited == [2.0]
    ops = [(e["op"], e.get("outcome")) for e in pcli.access_log()]
    assert ops[-2:] == [("pref set (retrying)", "error"), ("pref set", "ok")]
    assert "tone" in git(pcli.folder(), "show", "HEAD")


def test_a_write_that_fails_twice_is_reported_logged_and_loses_nothing(pcli: PrefCli) -> None:
    """The one test that waits the real 2 seconds."""
    pcli.pref("set", "vertical", "Retail")
    folder = pcli.folder()
    before = (folder / people.PREFS_FILE).read_text(encoding="utf-8")
    (folder / ".git" / "index.lock").write_text("", encoding="utf-8")
    failed = run_loa_mem(pcli.root, "pref", "set", "tone", "terse", env={"LOA_MEM_NOW": T0})
    assert failed.returncode == 1
    assert "write-failed: could not save to your personal store" in failed.stderr
    assert "tried twice 2 s apart" in failed.stderr and "nothing was changed" in failed.stderr
    assert (folder / people.PREFS_FILE).read_text(encoding="utf-8") == before
    ops = [(e["op"], e.get("outcome")) for e in pcli.access_log()]
    assert ops[-2:] == [("pref set (retrying)", "error"), ("pref set", "error")]
    (folder / ".git" / "index.lock").unlink()
    assert pcli.pref("get", "vertical")["value"] == "Retail"
    assert pcli.pref("set", "tone", "terse")["commit"]  # the next write works as usual


# -- loa-mem context --------------------------------------------------------------------------
@pytest.fixture
def project(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Cli]:
    monkeypatch.setenv("LOA_MEM_HOME", str(tmp_path / "personal"))
    monkeypatch.setenv("LOA_MEM_USER", ALICE)
    cli = Cli(store)
    cli.ok("pref", "set", "vertical", "Retail", now=FIXED_NOW)
    for _ in range(2):
        cli.ok("pref", "observe", "channels", '["Paid Search", "CTV"]', now=FIXED_NOW)
    cli.ok("pref", "observe", "tone", "terse", now=FIXED_NOW)
    return store, cli


def test_context_shows_the_users_applied_preferences(project: tuple[Path, Cli]) -> None:
    store, _ = project
    commits = git(store, "rev-list", "--all", "--count")
    for _ in range(2):  # the second run may take the hook's fast path
        done = run_loa_mem(store, "context")
        assert done.returncode == 0 and done.stderr == ""
        assert "- vertical: Retail (confidence 100)" in done.stdout
        assert ('- channels: ["Paid Search", "CTV"] (to confirm: ask before applying; '
                'confidence 55)') in done.stdout
        assert "tone" not in done.stdout  # 40: mention only, not injected
    assert git(store, "rev-list", "--all", "--count") == commits  # reading never commits


def test_context_of_another_user_is_empty(project: tuple[Path, Cli]) -> None:
    store, _ = project
    done = run_loa_mem(store, "context", "--user", "carol@example.com")
    assert "vertical" not in done.stdout and "preferences" not in done.stdout.lower()


def test_context_without_a_readable_store_has_no_preferences_and_logs(
        project: tuple[Path, Cli], tmp_path: Path) -> None:
    store, _ = project
    folder = tmp_path / "personal" / people.slug(ALICE)
    (folder / people.PREFS_FILE).write_text("not json", encoding="utf-8")
    done = run_loa_mem(store, "context")
    assert done.returncode == 0 and done.stderr == ""
    assert "# Project memory (loa-mem)" in done.stdout and "vertical" not in done.stdout
    log = [json.loads(line) for line in
           (folder / people.ACCESS_LOG).read_text(encoding="utf-8").splitlines()]
    assert log[-1]["op"] == "pref context" and "not JSON" in log[-1]["error"]


def test_the_default_home_is_the_platforms_user_data_dir(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    import platformdirs

    for xdg in (str(tmp_path / "data"), ""):
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
        assert people.default_home() == platformdirs.user_data_dir("loa-mem", appauthor=False)
    monkeypatch.delenv("LOA_MEM_HOME", raising=False)
    assert people.home() == os.path.realpath(people.default_home())


def test_concurrent_writers_lose_nothing(pcli: PrefCli) -> None:
    import subprocess
    import sys

    env = {**os.environ, "LOA_MEM_NOW": T0}
    procs = [subprocess.Popen([sys.executable, "-m", "loa_mem", "pref", "observe", "kpis",
                               "ROAS"], cwd=pcli.root, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for _ in range(6)]
    assert [p.wait() for p in procs] == [0] * 6
    got = pcli.get("kpis")["preference"]
    assert (got["observation_count"], got["confidence"]) == (6, 85)
    assert git(pcli.folder(), "rev-list", "--count", "HEAD").strip() == "7"  # init + 6


@pytest.mark.parametrize("text", [
    '{"format": 1, "preferences": {"vertical": {"key": "vertical", "value": "Retail"}}}',
    '{"format": 1, "preferences": []}', '{"format": 7, "preferences": {}}', '[]'])
def test_a_hand_edited_file_that_lost_its_shape_is_refused(pcli: PrefCli, text: str) -> None:
    pcli.pref("set", "vertical", "Retail")
    (pcli.folder() / people.PREFS_FILE).write_text(text, encoding="utf-8")
    for args in (("show",), ("get", "vertical"), ("set", "tone", "terse")):
        failed = pcli("pref", *args, now=T0)
        assert failed.code == 1 and "invalid-file" in failed.stderr
    assert pcli.ok("pref", "context", now=T0).stdout == ""
