"""Auto-capture (`loa-mem capture`): the Decision Protocol file, compound-learning output and
the agent's failed commands become memories, deterministically, once each; each source obeys
its `memory_schema.auto_capture` key. Real git repositories, real hook JSON on stdin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import FIXED_NOW, Cli, clones_of, git, run_loa_mem
from tests.test_hooks import our_command, run_as_claude_code, settings_of

DECISIONS = """\
- id: DEC-001
  decision: Use PostgreSQL for the database layer.
  rationale: JSONB support and team expertise; SQLite rejected for multi-user concurrency.
  status: accepted
  confidence: 0.95
  tags: [database]
  source: {session_id: abc123, agent: designing-architecture, phase: architecture}
- id: DEC-002
  decision: Move the public API to GraphQL.
  status: proposed
- id: DEC-003
  content: Releases are cut from main every Tuesday.
"""


def _decisions(store: Path, text: str = DECISIONS) -> None:
    (store / "grimoires/loa/decisions.yaml").write_text(text, encoding="utf-8")


def failure(command: str = "npm test", *lines: str, exit_code: int = 1,
            session: str = "s-1") -> str:
    """Claude Code's PostToolUseFailure input for a Bash call."""
    error = "\n".join([f"Exit code {exit_code}", *(lines or ("npm ERR! Test failed.",))])
    return json.dumps({"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                       "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "run"},
                       "tool_use_id": "toolu_1", "error": error, "is_interrupt": False})


def success(command: str = "npm test", session: str = "s-2") -> str:
    """Claude Code's PostToolUse input for a Bash call that succeeded."""
    return json.dumps({"session_id": session, "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False,
                                         "isImage": False}})


def _switch(store: Path, old: str, new: str) -> None:
    path = store / ".loa.config.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _errors(store: Path) -> list[dict[str, Any]]:
    return support.entries(store, "error")


# -- decisions -----------------------------------------------------------------------------------
def test_accepted_decisions_become_decision_memories_linked_to_their_source(
        cli: Cli, store: Path) -> None:
    _decisions(store)
    out = cli.ok("capture", "decisions", "--json").json()

    assert len(out["added"]) == 2
    first, third = (support.entry(store, i) for i in out["added"])
    assert first["category"] == "decision" and first["confidence"] == 0.95
    assert first["content"].startswith("Use PostgreSQL for the database layer. Rationale: JSONB")
    assert first["source"] == {"session_id": "abc123", "timestamp": FIXED_NOW,
                               "agent": "designing-architecture", "phase": "architecture",
                               "file_path": "grimoires/loa/decisions.yaml", "line_range": "1-7"}
    assert first["capture"] == {"source": "decisions", "ref": "DEC-001"}
    assert third["capture"]["ref"] == "DEC-003" and third["ttl"] == "permanent"
    [event] = [e for e in support.events(store) if e["op"] == "capture"]
    assert (event["ids"], event["refs"], event["origin"]) == (
        out["added"], ["DEC-001", "DEC-003"], "grimoires/loa/decisions.yaml")
    assert support.changed_files(store) == ["grimoires/loa/memory/decisions.yaml",
                                            "grimoires/loa/memory/events.jsonl"]


def test_only_accepted_decisions_are_captured(cli: Cli, store: Path) -> None:
    _decisions(store)
    out = cli.ok("capture", "decisions", "--json").json()

    assert out["skipped"] == ["grimoires/loa/decisions.yaml:8 (status proposed)"]
    contents = [e["content"] for e in support.entries(store, "decision")]
    assert not any("GraphQL" in c for c in contents)


def test_capturing_decisions_again_adds_nothing(cli: Cli, store: Path) -> None:
    _decisions(store)
    cli.ok("capture", "decisions")
    commits, before = support.commit_count(store), support.snapshot(store)
    again = cli.ok("capture", "decisions", "--json").json()

    assert (again["added"], again["already_captured"]) == ([], 2)
    assert (support.commit_count(store), support.snapshot(store)) == (commits, before)


def test_a_forgotten_captured_decision_is_not_captured_again(cli: Cli, store: Path) -> None:
    _decisions(store)
    added = cli.ok("capture", "decisions", "--json").json()["added"]
    cli.ok("forget", added[0], "--reason", "decided otherwise")

    assert cli.ok("capture", "decisions", "--json").json()["added"] == []
    assert [e["id"] for e in support.entries(store, "decision")] == added[1:]


def test_a_decision_already_remembered_by_hand_is_not_added_twice(cli: Cli, store: Path
                                                                  ) -> None:
    support.remember(cli, "Releases are cut from main every Tuesday.", "decision",
                     "--confidence", "0.95")
    _decisions(store)

    assert len(cli.ok("capture", "decisions", "--json").json()["added"]) == 1
    assert len(support.entries(store, "decision")) == 2


def test_a_bad_decision_is_refused_naming_its_line_and_nothing_is_written(
        cli: Cli, store: Path) -> None:
    _decisions(store, DECISIONS + "- id: DEC-004\n  decision: Ship it.\n  confidence: 0.5\n")
    before, commits = support.snapshot(store), support.commit_count(store)
    outcome = cli("capture", "decisions")

    assert outcome.code == 1
    [line] = outcome.stderr.strip().splitlines()
    assert line.startswith("loa-mem: refused: grimoires/loa/decisions.yaml:13: confidence 0.5 "
                           "is under the decision floor of 0.9")
    assert (support.snapshot(store), support.commit_count(store)) == (before, commits)


def test_without_a_decisions_file_capture_says_so_and_exits_0(cli: Cli) -> None:
    out = cli.ok("capture", "decisions")

    assert out.stdout == ("decisions: grimoires/loa/decisions.yaml does not exist: nothing to "
                          "capture\n")


def test_the_decisions_file_comes_from_the_config(cli: Cli, store: Path) -> None:
    (store / ".loa.config.yaml").write_text("capture: {decisions_file: docs/adr.yaml}\n",
                                            encoding="utf-8")
    (store / "docs").mkdir()
    (store / "docs/adr.yaml").write_text(DECISIONS, encoding="utf-8")

    [first, _] = cli.ok("capture", "decisions", "--json").json()["added"]
    assert support.entry(store, first)["source"]["file_path"] == "docs/adr.yaml"


# -- learnings -----------------------------------------------------------------------------------
def test_compound_learning_items_in_a_file_become_learning_memories(cli: Cli, store: Path
                                                                    ) -> None:
    (store / "compound.yaml").write_text(
        "learnings:\n"
        "  - id: L-1\n    pattern: Retry flaky network calls with backoff, not sleeps.\n"
        "    tags: [ci]\n"
        "  - Cache the index by file signature, not by time.\n", encoding="utf-8")
    out = cli.ok("capture", "learnings", str(store / "compound.yaml"), "--json").json()

    first, second = (support.entry(store, i) for i in out["added"])
    assert (first["category"], first["ttl"], first["tags"]) == ("learning", "90d", ["ci"])
    assert first["capture"] == {"source": "learnings", "ref": "L-1"}
    assert first["source"]["file_path"] == "compound.yaml"
    assert second["content"] == "Cache the index by file signature, not by time."
    assert second["capture"]["ref"].startswith("sha:")


def test_markdown_learnings_on_stdin_are_captured_once_each(cli: Cli, store: Path) -> None:
    text = ("## Learnings\n\nFrom the last sprint:\n"
            "- Run integration tests against a real git repository.\n"
            "- Cache the index by file signature,\n  not by time.\n")
    out = cli.ok("capture", "learnings", "-", "--json", stdin=text).json()

    assert [support.entry(store, i)["content"] for i in out["added"]] == [
        "Run integration tests against a real git repository.",
        "Cache the index by file signature, not by time."]
    again = cli.ok("capture", "learnings", "-", "--json", stdin=text).json()
    assert (again["added"], again["already_captured"]) == ([], 2)


def test_a_learning_holding_a_secret_is_refused_and_nothing_is_written(cli: Cli, store: Path
                                                                       ) -> None:
    before = support.snapshot(store)
    outcome = cli("capture", "learnings", "-",
                  stdin="- Deploys need api_key=sk-live-1234567890abcdefghijkl set.\n")

    assert outcome.code == 1
    assert "stdin: learning 1: content looks like it contains" in outcome.stderr
    assert "sk-live" not in outcome.stderr
    assert support.snapshot(store) == before


# -- switches ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("source", "key", "args"), [
    ("decisions", "decisions", ()),
    ("learnings", "learnings", ("-",)),
    ("tool-result", "errors", ()),
])
def test_each_source_obeys_its_auto_capture_key(cli: Cli, store: Path, source: str, key: str,
                                                args: tuple[str, ...]) -> None:
    _decisions(store)
    _switch(store, f"{key}: true", f"{key}: false")
    stdin = failure() if source == "tool-result" else "- A learning.\n"
    before, commits = support.snapshot(store), support.commit_count(store)

    refused = cli("capture", source, *args, stdin=stdin)
    assert refused.code == 1
    assert refused.stderr.startswith(f"loa-mem: switched-off: capturing {key} is switched off "
                                     f"(.loa.config.yaml: memory_schema.auto_capture.{key}: "
                                     "false)")
    quiet = cli.ok("capture", source, *args, "--if-enabled", stdin=stdin)
    assert quiet.stdout == (f"{source}: not captured, switched off "
                            f"(memory_schema.auto_capture.{key}: false)\n")
    assert (support.snapshot(store), support.commit_count(store)) == (before, commits)


def test_capture_is_off_when_memory_is_switched_off(cli: Cli, store: Path) -> None:
    _switch(store, "enabled: true", "enabled: false")

    outcome = cli("capture", "tool-result", stdin=failure())
    assert outcome.code == 1 and "memory_schema.enabled: false" in outcome.stderr
    assert cli.ok("capture", "decisions", "--if-enabled").stdout == (
        "decisions: not captured, switched off (memory_schema.enabled: false)\n")


# -- tool results --------------------------------------------------------------------------------
def test_a_failed_command_becomes_an_error_memory_with_the_30_day_ttl(cli: Cli, store: Path
                                                                      ) -> None:
    out = cli.ok("capture", "tool-result", "--json",
                 stdin=failure("npm test", "> jest", "FAIL src/app.test.js",
                               "  expected 2, got 3")).json()

    [memory_id] = out["added"]
    entry = support.entry(store, memory_id)
    assert entry["content"] == ("`npm test` failed with exit code 1: FAIL src/app.test.js\n"
                                "> jest\n  expected 2, got 3")
    assert (entry["ttl"], entry["expires_at"]) == ("30d", "2026-03-03T10:30:00Z")
    assert entry["tags"] == ["auto-capture", "npm"]
    assert entry["source"]["session_id"] == "s-1"
    capture = entry["capture"]
    assert (capture["command"], capture["exit_code"], capture["occurrences"]) == (
        "npm test", 1, 1)


def test_a_failure_reported_by_post_tool_use_with_an_exit_code_is_captured(
        cli: Cli, store: Path) -> None:
    payload = json.dumps({"session_id": "s-1", "hook_event_name": "PostToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "make build"},
                          "tool_response": {"stdout": "", "stderr": "make: *** No rule to "
                                            "make target 'build'.  Stop.", "exit_code": 2}})
    [memory_id] = cli.ok("capture", "tool-result", "--json", stdin=payload).json()["added"]

    assert support.entry(store, memory_id)["content"].startswith(
        "`make build` failed with exit code 2: make: *** No rule to make target")


def test_a_repeated_failure_counts_occurrences_instead_of_adding(cli: Cli, store: Path) -> None:
    [memory_id] = cli.ok("capture", "tool-result", "--json",
                         stdin=failure("pytest -x", "FAILED test_a.py - took 0.51s")
                         ).json()["added"]
    later = "2026-02-03T08:00:00Z"
    again = cli.ok("capture", "tool-result", "--json", now=later,
                   stdin=failure("pytest   -x", "FAILED test_a.py - took 0.73s")).json()

    assert (again["added"], again["updated"]) == ([], [memory_id])
    [entry] = _errors(store)
    assert (entry["capture"]["occurrences"], entry["capture"]["last_seen"]) == (2, later)
    other = cli.ok("capture", "tool-result", "--json",
                   stdin=failure("pytest -x", "ImportError: no module named foo")).json()
    assert len(other["added"]) == 1


def test_stderr_lines_holding_secrets_are_withheld_line_by_line(cli: Cli, store: Path) -> None:
    secret = "sk-live-1234567890abcdefghijkl"
    [memory_id] = cli.ok("capture", "tool-result", "--json", stdin=failure(
        "./deploy.sh", "Error: upload rejected (403)", f"using api_key={secret}",
        "contact ops@example.com")).json()["added"]

    content = support.entry(store, memory_id)["content"]
    assert content.splitlines() == [
        "`./deploy.sh` failed with exit code 1: Error: upload rejected (403)",
        "[line withheld: it looks like it contains an API key]",
        "[line withheld: it looks like it contains an e-mail address]"]
    assert secret not in (store / support.MEMORY / "errors.yaml").read_text(encoding="utf-8")


def test_stderr_lines_kept_follow_the_config(cli: Cli, store: Path) -> None:
    (store / ".loa.config.yaml").write_text("capture: {stderr_lines: 2}\n", encoding="utf-8")
    [memory_id] = cli.ok("capture", "tool-result", "--json", stdin=failure(
        "make", "error: one", "two", "three", "four")).json()["added"]

    assert support.entry(store, memory_id)["content"].splitlines() == [
        "`make` failed with exit code 1: error: one", "two"]


def test_the_next_success_records_the_fix_on_the_open_error(cli: Cli, store: Path) -> None:
    [memory_id] = cli.ok("capture", "tool-result", "--json", stdin=failure()).json()["added"]
    fixed_at = "2026-02-01T11:00:00Z"
    out = cli.ok("capture", "tool-result", "--json", stdin=success(), now=fixed_at).json()

    assert out["fixed"] == [memory_id]
    capture = support.entry(store, memory_id)["capture"]
    assert (capture["fixed_at"], capture["fixed_session"]) == (fixed_at, "s-2")
    assert cli.ok("capture", "tool-result", "--json", stdin=success()).json()["fixed"] == []


def test_a_failure_after_the_fix_reopens_the_error(cli: Cli, store: Path) -> None:
    [memory_id] = cli.ok("capture", "tool-result", "--json", stdin=failure()).json()["added"]
    cli.ok("capture", "tool-result", stdin=success())
    again = cli.ok("capture", "tool-result", "--json", stdin=failure()).json()

    assert again["updated"] == [memory_id]
    capture = support.entry(store, memory_id)["capture"]
    assert capture["occurrences"] == 2 and "fixed_at" not in capture


def test_a_success_of_another_command_fixes_nothing(cli: Cli, store: Path) -> None:
    [memory_id] = cli.ok("capture", "tool-result", "--json", stdin=failure()).json()["added"]
    cli.ok("capture", "tool-result", stdin=success("npm run lint"))

    assert "fixed_at" not in support.entry(store, memory_id)["capture"]


@pytest.mark.parametrize("payload", [
    {"tool_name": "Edit", "tool_input": {"file_path": "a.py"}, "hook_event_name": "PostToolUse"},
    {"tool_name": "Bash", "tool_input": {"command": "sleep 100"}, "is_interrupt": True,
     "hook_event_name": "PostToolUseFailure", "error": "Interrupted by user"},
])
def test_other_tools_and_interrupted_commands_capture_nothing(cli: Cli, store: Path,
                                                             payload: dict[str, Any]) -> None:
    commits = support.commit_count(store)
    out = cli.ok("capture", "tool-result", stdin=json.dumps(payload))

    assert out.stdout == "tool-result: not a finished Bash call: nothing to capture\n"
    assert support.commit_count(store) == commits


def test_hook_input_that_is_not_json_is_refused_in_one_line(cli: Cli, store: Path) -> None:
    before = support.snapshot(store)
    outcome = cli("capture", "tool-result", stdin="npm test failed")

    assert outcome.code == 1
    assert outcome.stderr.startswith("loa-mem: refused: stdin is not JSON")
    assert len(outcome.stderr.strip().splitlines()) == 1
    assert support.snapshot(store) == before


def test_a_success_with_no_open_error_exits_before_the_store_is_imported(
        cli: Cli, store: Path) -> None:
    cli.ok("capture", "tool-result", stdin=failure("make"))  # writes open-errors.json
    done = run_loa_mem(store, "capture", "tool-result", "--if-enabled", stdin=success(),
                       env={"PYTHONPROFILEIMPORTTIME": "1"})

    assert (done.returncode, done.stdout) == (0, "")
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not imported & {"typer", "yaml", "ruamel.yaml", "git", "loa_mem.memory.store"}
    fix = run_loa_mem(store, "capture", "tool-result", "--if-enabled", stdin=success("make"))
    assert fix.returncode == 0 and "fixed: " in fix.stdout


def test_an_open_error_pulled_from_a_teammate_is_fixed_by_the_next_success(
        store: Path, tmp_path: Path) -> None:
    ana, ben = clones_of(store, tmp_path, ("ana", "ben"))
    Cli(ben).ok("capture", "tool-result", stdin=success("npm run lint"))  # ben's shortcut file
    [memory_id] = Cli(ana).ok("capture", "tool-result", "--json",
                              stdin=failure("make")).json()["added"]
    git(ana, "push", "-q")
    git(ben, "pull", "-q", "--rebase")

    done = run_loa_mem(ben, "capture", "tool-result", "--if-enabled", stdin=success("make"))

    assert done.returncode == 0 and f"fixed: {memory_id}" in done.stdout
    assert support.entry(ben, memory_id)["capture"]["fixed_session"] == "s-2"


# -- hooks ---------------------------------------------------------------------------------------
def test_hooks_install_runs_capture_after_each_bash_call(cli: Cli, store: Path) -> None:
    assert run_loa_mem(store, "hooks", "install", "--claude-code").returncode == 0
    settings = settings_of(store)
    for event in ("PostToolUse", "PostToolUseFailure"):
        [group] = settings["hooks"][event]
        assert group["matcher"] == "Bash"
    command = our_command(settings, "PostToolUseFailure")
    run_as_claude_code(command, json.loads(failure("cargo build", "error[E0425]: cannot find "
                                                   "value `x`")), store)
    [entry] = _errors(store)
    assert entry["summary"] == "`cargo build` fails: error[E0425]: cannot find value `x`"
    run_as_claude_code(our_command(settings, "PostToolUse"), json.loads(success("cargo build")),
                       store)
    assert "fixed_at" in _errors(store)[0]["capture"]


def test_the_session_end_hook_captures_decisions(cli: Cli, store: Path) -> None:
    _decisions(store)
    assert run_loa_mem(store, "hooks", "install", "--claude-code").returncode == 0
    command = our_command(settings_of(store), "SessionEnd")
    run_as_claude_code(command, {"session_id": "s-9", "hook_event_name": "SessionEnd"}, store)

    assert [e["capture"]["ref"] for e in support.entries(store, "decision")] == [
        "DEC-001", "DEC-003"]
