"""Privacy: show, defaults, clear, forget (and --purge from git history), the access log, modes."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from loa_mem.people import home as people
from tests.conftest import git
from tests.people_support import ALICE, T0, PrefCli, at, make_pcli


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


def _remember_some(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    pcli.pref("observe", "channels", '["Paid Search", "CTV"]', "--context", "often picked")
    pcli.pref("observe", "channels", '["Paid Search", "CTV"]')
    pcli.pref("observe", "tone", "terse")
    pcli.pref("session", "record", "--session", "s1", "budget", "500000")
    pcli.pref("session", "record", "--session", "s1", "constraint", "no Retail media TikTok")


def test_show_is_what_is_remembered_about_me(pcli: PrefCli) -> None:
    _remember_some(pcli)
    shown = pcli.pref("show")
    assert shown["user"] == ALICE and shown["store"] == str(pcli.folder())
    assert [(p["key"], p["confidence"], p["band"]) for p in shown["preferences"]] == [
        ("vertical", 100, "apply"), ("channels", 55, "suggest"), ("tone", 40, "mention")]
    assert [(r["key"], r["live"]) for r in shown["sessions"]] == [
        ("budget", True), ("constraint", True)]
    table = pcli.ok("pref", "show", now=T0).stdout
    assert "What loa-mem remembers about alice@example.com" in table
    assert "channels  Paid Search, CTV" in table.replace('["Paid Search", "CTV"]',
                                                          "Paid Search, CTV")


def test_defaults_are_what_a_session_applies_and_asks(pcli: PrefCli) -> None:
    _remember_some(pcli)
    shown = pcli.pref("defaults")
    assert [p["key"] for p in shown["applied"]] == ["vertical"]
    assert [p["key"] for p in shown["to_confirm"]] == ["channels"]
    text = pcli.ok("pref", "defaults", now=T0).stdout
    assert "Applied without asking (80-100)" in text and "tone" not in text


def test_context_lines_mark_what_to_confirm(pcli: PrefCli) -> None:
    _remember_some(pcli)
    assert pcli.ok("pref", "context", now=T0).stdout.splitlines() == [
        "- vertical: Retail (confidence 100)",
        '- channels: ["Paid Search", "CTV"] (to confirm: ask before applying; confidence 55)',
        "- budget: 500000 (session s1; confidence 80)",
        "- constraint: no Retail media TikTok (session s1; confidence 80)"]


def test_clear_deletes_every_preference_at_once(pcli: PrefCli) -> None:
    _remember_some(pcli)
    cleared = pcli.pref("clear", "--yes")
    assert sorted(p["key"] for p in cleared["preferences"]) == ["channels", "tone", "vertical"]
    assert cleared["sessions"] == []
    shown = pcli.pref("show")
    assert shown["preferences"] == [] and len(shown["sessions"]) == 2
    assert pcli.pref("clear", "--sessions", "--yes")["preferences"] == []
    assert pcli.pref("show")["sessions"] == []
    assert pcli("pref", "clear", "--yes", now=T0).code == 1  # nothing left to clear


def test_forget_finds_shows_and_deletes_what_matches(pcli: PrefCli) -> None:
    _remember_some(pcli)
    out = pcli.ok("pref", "forget", "retail", now=T0).stdout
    assert "Deleted preferences" in out and "Deleted session records" in out
    assert "git history still holds them; add --purge" in out
    shown = pcli.pref("show")
    assert [p["key"] for p in shown["preferences"]] == ["channels", "tone"]
    assert [r["key"] for r in shown["sessions"]] == ["budget"]
    assert "Retail" in git(pcli.folder(), "log", "-p", "--all")  # not purged: history keeps it
    missing = pcli("pref", "forget", "nothing-like-this", now=T0)
    assert missing.code == 1 and "nothing in your personal memory matches" in missing.stderr


def _everything_in_git(folder: Path) -> str:
    """Every trace git keeps: history of every ref, reflogs, and every object, reachable or not."""
    parts = [git(folder, "log", "-p", "--all"), git(folder, "reflog", "--all")]
    parts.append(subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"],
                                cwd=folder, capture_output=True, check=True).stdout.decode(
                                    "utf-8", "replace"))
    return "\n".join(parts)


def test_forget_purge_leaves_no_trace_in_git(pcli: PrefCli) -> None:
    _remember_some(pcli)
    pcli.pref("set", "vertical", "Finance", now=at(1))  # an old version holds Retail
    pcli.pref("contradict", "tone", "Retail-ish", now=at(2))
    folder = pcli.folder()
    assert "Retail" in _everything_in_git(folder)
    done = pcli.ok("pref", "forget", "Retail", "--purge", "--yes", now=at(3))
    assert "the data is gone from git too" in done.stdout
    assert "retail" not in _everything_in_git(folder).casefold()
    assert git(folder, "fsck", "--unreachable", "--no-reflogs").strip() == ""
    assert git(folder, "status", "--porcelain") == ""
    left = pcli.pref("show", now=at(3))
    # vertical's current value (Finance) does not match: it stays, its old versions went
    assert [(p["key"], p["value"]) for p in left["preferences"]] == [
        ("vertical", "Finance"), ("channels", ["Paid Search", "CTV"])]
    assert [r["key"] for r in left["sessions"]] == ["budget"]
    assert pcli.pref("get", "channels", now=at(3))["confidence"] == 55
    assert "retail" not in (folder / people.ACCESS_LOG).read_text(encoding="utf-8").casefold()


def test_purge_after_a_plain_forget_cleans_history(pcli: PrefCli) -> None:
    _remember_some(pcli)
    pcli.pref("forget", "Retail")
    again = pcli.pref("forget", "Retail", "--purge", "--yes")
    assert again["preferences"] == [] and again["purged"]["commits_rewritten"] == 8
    assert "retail" not in _everything_in_git(pcli.folder()).casefold()


def test_clear_purge_removes_every_preference_from_history(pcli: PrefCli) -> None:
    _remember_some(pcli)
    pcli.pref("clear", "--purge", "--yes")
    history = _everything_in_git(pcli.folder())
    assert "terse" not in history and "Paid Search" not in history
    assert "500000" in history  # session records were not asked for


def test_every_read_and_write_is_in_the_access_log(pcli: PrefCli) -> None:
    pcli.pref("set", "vertical", "Retail")
    pcli.pref("get", "vertical")
    pcli.pref("show")
    pcli.pref("defaults")
    pcli.pref("context")
    pcli.pref("session", "record", "--session", "s1", "budget", "5")
    pcli.pref("session", "load")
    pcli("pref", "use", "missing", now=T0)
    log = pcli.access_log()
    assert [(e["op"], e.get("outcome")) for e in log] == [
        ("pref set", "ok"), ("pref get", "ok"), ("pref show", "ok"), ("pref defaults", "ok"),
        ("pref context", "ok"), ("pref session record", "ok"), ("pref session load", "ok"),
        ("pref use", "error")]
    assert log[0]["keys"] == ["vertical"] and "Retail" not in str(log)
    assert all(e["at"] == T0 for e in log)


def test_files_and_folders_are_private_to_their_owner(pcli: PrefCli) -> None:
    _remember_some(pcli)
    pcli.pref("forget", "terse", "--purge", "--yes")
    modes = {path: stat.S_IMODE(path.stat().st_mode) for path in
             [pcli.home, *pcli.home.rglob("*")] if not path.is_symlink()}
    loose = {str(p): oct(m) for p, m in modes.items() if m & 0o077}
    assert loose == {}
    assert modes[pcli.folder()] == 0o700 and modes[pcli.folder() / "preferences.json"] == 0o600


def test_commit_messages_never_hold_keys_or_values(pcli: PrefCli) -> None:
    _remember_some(pcli)
    subjects = git(pcli.folder(), "log", "--format=%B")
    assert "vertical" not in subjects and "Retail" not in subjects
    assert "loa-mem pref set: 1 preference" in subjects


def test_pref_commands_never_touch_the_project_repository(store: Path, pcli: PrefCli,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.chdir(store)
    before = git(store, "rev-parse", "HEAD")
    index = (store / ".git" / "index").read_bytes()
    monkeypatch.setenv("GIT_DIR", str(store / ".git"))  # as inside the project's git hook
    monkeypatch.setenv("GIT_INDEX_FILE", str(store / ".git" / "index"))
    _remember_some(pcli)
    pcli.pref("forget", "Retail", "--purge", "--yes")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert (store / ".git" / "index").read_bytes() == index
    assert git(store, "rev-parse", "HEAD") == before
    assert git(store, "status", "--porcelain") == ""


def test_the_user_is_the_option_else_the_variable_else_git(pcli: PrefCli,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    assert pcli.pref("show")["user"] == ALICE
    assert pcli.pref("show", "--user", " Bob@Example.com ")["user"] == "bob@example.com"
    monkeypatch.delenv("LOA_MEM_USER")
    monkeypatch.setenv("GIT_DIR", "/nonexistent/hook/repo")  # an enclosing hook's variable
    assert pcli.pref("show")["user"] == "test@example.invalid"  # git config user.email
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    refused = pcli("pref", "show", now=T0)
    assert refused.code == 1 and "no user" in refused.stderr
