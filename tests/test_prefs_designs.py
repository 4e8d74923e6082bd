"""The preference document's rules that were missing or partial, one test per rule, at a fixed
clock, against a real personal store (its own git repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loa_mem.people import start
from loa_mem.people import writing as people_store
from tests.conftest import git
from tests.people_support import PrefCli, make_pcli


@pytest.fixture
def pcli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrefCli:
    return make_pcli(tmp_path, monkeypatch)


def day(n: int) -> str:
    return f"2026-03-{n:02d}T09:00:00Z"


def test_session_start_context_holds_the_last_five_live_session_records(pcli: PrefCli) -> None:
    pcli.pref("session", "record", "budget", "100000", "--session", "s1", "--persistent",
              now=day(1))
    pcli.pref("session", "record", "region", "EU", "--session", "s2", "--ttl", "1", now=day(2))
    for n in range(3, 9):
        pcli.pref("session", "record", "step", str(n), "--session", f"s{n}", now=day(n))
    data = pcli.pref("context", now=day(9))
    # s2 expired (1 day); s1 is persistent but older than the last 5 sessions, s4..s8
    assert [r["session"] for r in data["sessions"]] == ["s8", "s7", "s6", "s5", "s4"]
    said = pcli.ok("pref", "context", now=day(9)).stdout.splitlines()
    assert said[0] == "- step: 8 (session s8; confidence 80)"


def test_a_persistent_session_record_stays_in_the_session_start_context(pcli: PrefCli) -> None:
    pcli.pref("session", "record", "budget", "100000", "--session", "s1", "--persistent",
              now=day(1))
    data = pcli.pref("context", now="2027-03-01T09:00:00Z")
    assert [(r["key"], r["persistent"]) for r in data["sessions"]] == [("budget", True)]


def test_a_session_record_is_confirmed_in_place(pcli: PrefCli) -> None:
    pcli.pref("session", "record", "budget", "500000", "--session", "s1", now=day(1))
    done = pcli.pref("session", "confirm", "budget", now=day(2))
    assert (done["record"]["persistent"], done["record"]["confidence"],
            done["record"]["expires_at"]) == (True, 100, None)
    records = pcli.pref("show", now=day(2))["sessions"]
    assert [(r["key"], r["session"], r["persistent"]) for r in records] == [
        ("budget", "s1", True)]  # one record, not two
    again = pcli("pref", "session", "confirm", "budget", now=day(3))
    assert (again.code, "already persistent" in again.stderr) == (1, True)


def test_a_failed_session_save_is_kept_and_stored_at_the_next_session_start(
        pcli: PrefCli, monkeypatch: pytest.MonkeyPatch) -> None:
    pcli.pref("set", "vertical", "Retail", now=day(1))
    monkeypatch.setattr(people_store, "pause", lambda seconds: None)
    busy = pcli.folder() / ".git" / "index.lock"
    busy.write_text("", encoding="utf-8")
    said = pcli.ok("pref", "session", "record", "budget", "500000", "--session", "s1",
                   now=day(1)).stdout
    assert "not stored yet" in said and "stored at the next session start" in said
    assert [r["key"] for r in start.read_pending(str(pcli.folder()))] == ["budget"]
    busy.unlink()
    loaded = pcli.pref("session", "load", now=day(2))
    assert [(r["key"], r["session"]) for r in loaded["records"]] == [("budget", "s1")]
    assert not (pcli.folder() / start.PENDING_FILE).exists()
    assert "budget" in git(pcli.folder(), "show", "HEAD")


def test_forget_removes_a_pending_session_record_too(
        pcli: PrefCli, monkeypatch: pytest.MonkeyPatch) -> None:
    pcli.pref("set", "vertical", "Retail", now=day(1))
    monkeypatch.setattr(people_store, "pause", lambda seconds: None)
    busy = pcli.folder() / ".git" / "index.lock"
    busy.write_text("", encoding="utf-8")
    pcli.ok("pref", "session", "record", "budget", "500000", "--session", "s1", now=day(1))
    busy.unlink()
    gone = pcli.pref("forget", "budget", now=day(2))
    assert [r["key"] for r in gone["sessions"]] == ["budget"]
    assert start.read_pending(str(pcli.folder())) == []
