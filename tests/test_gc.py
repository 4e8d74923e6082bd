"""gc (spec section 7): mark, summarize, update sidecars, update the working set, log; archive
expired, superseded and ineffective entries; budget pressure; --dry-run; the gc_report."""

from __future__ import annotations

from pathlib import Path

import pytest

from loa_mem.core import yamlio
from tests import support
from tests import ws_support as ws
from tests.conftest import FIXED_NOW, Cli, git


def _cold(cli: Cli, path: str, action: str = "delete_from_working_set",
          why: str = "done with it") -> None:
    postmortem = ("--postmortem", why) if action == "archive" else ()
    data = cli.ok("advise", "--cold", path, "--action", action, "--why", why, *postmortem,
                  "--json").json()
    assert ws.taken(data)[path][0] == "honored", data


def test_evicting_leaves_the_file_and_takes_it_out_of_the_working_set(cli: Cli,
                                                                     store: Path) -> None:
    ws.write(store, "tool/log-001.txt", "x" * 400)  # 400 bytes = 100 tokens
    ws.write(store, "src/parser.ts", "y" * 40)
    cli.ok("advise", "--hot", "src/parser.ts", "--why", "debugging")
    _cold(cli, "tool/log-001.txt")
    data = cli.ok("gc", "--json").json()

    report = data["gc_report"]
    assert report == {"triggered_by": "explicit", "timestamp": FIXED_NOW, "actions": [
        {"path": "tool/log-001.txt", "action": "evicted", "summary": None,
         "reason": "cold hint: done with it", "tokens": 100}],
        "tokens_freed": 100, "files_affected": 1}
    assert data["working_set"] == {"files_before": 2, "tokens_before": 110, "budget": None,
                                   "threshold": None, "files_after": 1, "tokens_after": 10}
    assert (store / "tool/log-001.txt").read_text(encoding="utf-8") == "x" * 400
    assert ws.cold_paths(store) == [] and ws.hot_paths(store) == ["src/parser.ts"]
    assert data["commit"] == support.head(store)


def test_the_gc_report_goes_to_the_events_log_as_yaml_and_the_commit_names_each_action(
        cli: Cli, store: Path) -> None:
    ws.write(store, "a.log", "x" * 40)
    _cold(cli, "a.log", why="old build log")
    data = cli.ok("gc", "--trigger", "session_end", "--json").json()

    event = support.events(store)[-1]
    assert event["op"] == "gc"
    assert event["reason"] == "trigger: session_end"
    assert yamlio.load(event["report_yaml"], "report") == {"gc_report": data["gc_report"]}
    message = support.message(store)
    assert message.startswith("loa-mem gc: 1 evicted file (session_end)\n")
    assert "- evicted: a.log: cold hint: old build log\n" in message


def test_summarize_then_evict_puts_the_summary_in_the_files_place(cli: Cli, store: Path) -> None:
    ws.write(store, "tool/python/output-large.json", '{"rows": 5}\n' + " " * 3988)
    _cold(cli, "tool/python/output-large.json", "summarize_then_evict", "raw data extracted")
    report = cli.ok("gc", "--json").json()["gc_report"]

    summary = f"{ws.SUMMARIES}/tool-python-output-large.md"
    [action] = report["actions"]
    assert (action["action"], action["summary"]) == ("summarized", summary)
    text = (store / summary).read_text(encoding="utf-8")
    assert "method: extractive" in text
    assert action["tokens"] == 1000 - -(-len(text) // 4)
    assert report["files_affected"] == 2  # the source and its summary
    assert ws.hot_paths(store) == [summary]
    sidecar = ws.sidecar(store, "tool/python/output-large.json")
    assert (sidecar["summarized_in"], sidecar["summary_date"]) == (summary, FIXED_NOW)
    assert cli("validate").code == 0


def test_advise_gc_restore_round_trip_is_byte_for_byte(cli: Cli, store: Path) -> None:
    original = b"header\r\nbinary \xff\xfe\x00 tail\n" * 20
    ws.write(store, "drafts/attempt-1.bin", original)
    _cold(cli, "drafts/attempt-1.bin", "archive", "failed approach")
    report = cli.ok("gc", "--json").json()["gc_report"]

    archived = f"{ws.ARCHIVE}/drafts/attempt-1.bin"
    assert report["actions"][0]["to"] == archived
    assert not (store / "drafts/attempt-1.bin").exists()
    assert (store / archived).read_bytes() == original
    assert git(store, "ls-files", "drafts/attempt-1.bin") == ""
    assert ws.sidecar(store, "drafts/attempt-1.bin")["archived_in"] == archived
    assert support.porcelain(store) == ""

    data = cli.ok("restore", "drafts/attempt-1.bin", "--json").json()
    assert data["action"] == "restored"
    assert (store / "drafts/attempt-1.bin").read_bytes() == original
    assert not (store / archived).exists()
    assert "archived_in" not in ws.sidecar(store, "drafts/attempt-1.bin")
    assert ws.hot_paths(store) == ["drafts/attempt-1.bin"]
    assert support.porcelain(store) == ""


def test_an_uncommitted_file_is_archived_and_restored_too(cli: Cli, store: Path) -> None:
    ws.write(store, "scratch.txt", "never committed\n", commit=False)
    _cold(cli, "scratch.txt", "archive")
    cli.ok("gc")

    assert not (store / "scratch.txt").exists()
    cli.ok("restore", "scratch.txt")
    assert (store / "scratch.txt").read_text(encoding="utf-8") == "never committed\n"


def test_compress_shrinks_a_log_and_restore_brings_the_original_back(cli: Cli,
                                                                    store: Path) -> None:
    log = "".join(f"step {n} ok\n" for n in range(200)) + "ERROR: disk full\n"
    ws.write(store, "logs/old.log", log)
    _cold(cli, "logs/old.log", "compress", "old log")
    report = cli.ok("gc", "--json").json()["gc_report"]

    [action] = report["actions"]
    compressed = (store / "logs/old.log").read_text(encoding="utf-8")
    assert action["action"] == "compressed"
    assert "ERROR: disk full" in compressed
    assert "[... 191 line(s) left out by loa-mem gc ...]" in compressed
    assert action["tokens"] == -(-len(log) // 4) - -(-len(compressed) // 4)
    cli.ok("restore", "logs/old.log")
    assert (store / "logs/old.log").read_text(encoding="utf-8") == log


@pytest.mark.parametrize(("turns", "marked"), [(9, False), (10, True)])
def test_a_hot_file_untouched_for_n_turns_is_evicted(cli: Cli, store: Path, turns: int,
                                                     marked: bool) -> None:
    ws.write(store, "old.md", "x\n")
    ws.write(store, "busy.md", "y\n")
    cli.ok("advise", "--hot", "old.md", "--why", "reading")
    for _ in range(turns):
        cli.ok("advise", "--hot", "busy.md", "--why", "working")
    report = cli.ok("gc", "--json").json()["gc_report"]

    actions = [(a["path"], a["action"], a["reason"]) for a in report["actions"]]
    expected = [("old.md", "evicted", "untouched for 10 turns (limit 10)")] if marked else []
    assert actions == expected


@pytest.mark.parametrize(("now", "marked"), [("2026-02-01T12:29:00Z", False),
                                             ("2026-02-01T12:30:00Z", True)])
def test_a_hot_file_untouched_for_m_minutes_is_evicted(cli: Cli, store: Path, now: str,
                                                       marked: bool) -> None:
    ws.write(store, "old.md", "x\n")
    cli.ok("advise", "--hot", "old.md", "--why", "reading")
    report = cli.ok("gc", "--trigger", "time", "--json", now=now).json()["gc_report"]

    assert [a["reason"] for a in report["actions"]] == (
        [f"untouched since {FIXED_NOW} (120 minutes, limit 120)"] if marked else [])


def test_a_long_untouched_file_is_summarized_first(cli: Cli, store: Path) -> None:
    ws.config(store, "summarize_over_lines: 5\nuntouched_turns: 1")
    ws.write(store, "long.txt", "".join(f"line {n}\n" for n in range(6)))
    ws.write(store, "short.txt", "one line\n")
    cli.ok("advise", "--hot", "long.txt", "--hot", "short.txt", "--why", "reading")
    ws.write(store, "other.txt", "z\n")
    cli.ok("advise", "--hot", "other.txt", "--why", "next task")
    report = cli.ok("gc", "--json").json()["gc_report"]

    assert {a["path"]: a["action"] for a in report["actions"]} == {
        "long.txt": "summarized", "short.txt": "evicted"}


def test_pinned_and_must_keep_files_are_never_forgotten(cli: Cli, store: Path) -> None:
    ws.write(store, "pinned.md", "x\n")
    ws.write(store, "docs/constitution.md", "rules\n")
    cli.ok("pin", "pinned.md")
    # A hand-edited cold list that asks for what must be kept.
    ws.write(store, f"{ws.WS}/cold.yml", "protocol: MEMORY-MGMT/0.1\nevict:\n"
             "- {path: pinned.md, suggested_action: archive}\n"
             "- {path: docs/constitution.md, suggested_action: archive}\n"
             "- {path: grimoires/loa/memory/decisions.yaml, suggested_action: compress}\n")
    before = {p: (store / p).read_bytes() for p in (
        "pinned.md", "docs/constitution.md", "grimoires/loa/memory/decisions.yaml")}
    report = cli.ok("gc", "--json").json()["gc_report"]

    assert [a["action"] for a in report["actions"]] == ["overridden"] * 3
    assert all((store / p).read_bytes() == data for p, data in before.items())
    assert ws.cold_paths(store) == []
    assert "pinned.md" in ws.hot_paths(store)


def test_gc_archives_expired_superseded_and_ineffective_entries(cli: Cli, store: Path) -> None:
    expired = support.remember(cli, "The build server was down.", "error",
                               now="2025-12-01T10:30:00Z")
    old = support.remember(cli, "We deploy with Helm.", "fact")
    cli.ok("supersede", old, "We deploy with Argo CD.")
    weak = support.remember(cli, "Retrying flaky tests fixes them.", "learning")
    for _ in range(3):
        cli.ok("feedback", weak, "--failure")
    commits = support.commit_count(store)
    report = cli.ok("gc", "--json").json()["gc_report"]

    assert [(a["id"], a["action"], a["reason"]) for a in report["actions"]] == [
        (expired, "archived", "expired"), (old, "archived", "superseded"),
        (weak, "archived", "ineffective")]
    assert support.commit_count(store) == commits + 1
    for memory_id, reason in ((expired, "expired"), (old, "superseded"), (weak, "ineffective")):
        entry = support.entry(store, memory_id)
        assert (entry["archived"], entry["archive_reason"]) == (True, reason)
    assert set(support.trailers(store)) >= {("Loa-Op", "gc"), ("Loa-Id", expired)}
    assert cli("validate").code == 0


def test_dry_run_reports_and_writes_nothing(cli: Cli, store: Path) -> None:
    ws.write(store, "a.log", "x" * 80)
    _cold(cli, "a.log", "archive")
    support.remember(cli, "Old error.", "error", now="2025-12-01T10:30:00Z")
    before, commits = support.snapshot(store), support.commit_count(store)
    data = cli.ok("gc", "--dry-run", "--json").json()

    assert data["dry_run"] is True
    assert [a["action"] for a in data["gc_report"]["actions"]] == ["archived", "archived"]
    assert data["gc_report"]["tokens_freed"] == 20
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_budget_pressure_acts_only_above_80_percent(cli: Cli, store: Path) -> None:
    for name, size in (("a.txt", 400), ("b.txt", 400), ("c.txt", 200)):  # 100, 100, 50 tokens
        ws.write(store, name, "x" * size)
    cli.ok("advise", "--hot", "a.txt", "--why", "w")
    cli.ok("advise", "--hot", "b.txt", "--hot", "c.txt", "--why", "w")
    commits = support.commit_count(store)

    calm = cli.ok("gc", "--budget", "313", "--json").json()  # 250 <= 80% of 313 (250)
    assert calm["gc_report"]["actions"] == []
    assert calm["note"].startswith("the working set is 250 tokens, within 80% of the budget")
    assert support.commit_count(store) == commits

    pressed = cli.ok("gc", "--budget", "250", "--json").json()  # threshold 200
    assert pressed["gc_report"]["triggered_by"] == "budget_pressure"
    assert [(a["path"], a["action"]) for a in pressed["gc_report"]["actions"]] == [
        ("a.txt", "evicted")]  # least hot: touched a turn earlier than b and c
    assert pressed["working_set"]["tokens_after"] == 150


def test_budget_pressure_uses_the_configured_budget_or_refuses(cli: Cli, store: Path) -> None:
    refused = cli("gc", "--trigger", "budget_pressure")
    assert refused.code == 1 and "pass --budget" in refused.stderr

    ws.config(store, "context_budget: 1000")
    data = cli.ok("gc", "--trigger", "budget_pressure", "--json").json()
    assert data["working_set"]["threshold"] == 800


def test_nothing_to_do_is_exit_0_and_no_commit(cli: Cli, store: Path) -> None:
    commits = support.commit_count(store)
    outcome = cli.ok("gc")

    assert "nothing to do" in outcome.stdout
    assert support.commit_count(store) == commits


def test_advise_trigger_gc_runs_gc_after_the_hints(cli: Cli, store: Path) -> None:
    ws.write(store, "a.log", "x\n")
    data = cli.ok("advise", "--cold", "a.log", "--why", "done", "--trigger-gc", "--json").json()

    assert data["gc"]["gc_report"]["actions"][0]["action"] == "evicted"
    assert support.message(store).startswith("loa-mem gc: ")
    assert support.message(store, "HEAD~1").startswith("loa-mem advise: ")


def test_unknown_trigger_is_refused(cli: Cli) -> None:
    outcome = cli("gc", "--trigger", "whenever")
    assert outcome.code == 1 and "unknown --trigger" in outcome.stderr
