"""`loa-mem hooks`: Claude Code settings and the git pre-commit hook, installed beside the user's
own hooks and removed exactly; the installed commands run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import Cli, git, run_loa_mem

USER_SETTINGS: dict[str, Any] = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
    },
}


def path_env() -> dict[str, str]:
    """The environment of a shell where loa-mem is installed (the venv running the tests)."""
    return {**os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def settings_of(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / ".claude/settings.json").read_text("utf-8"))
    return data


def our_command(settings: dict[str, Any], event: str) -> str:
    commands = [h["command"] for g in settings["hooks"][event] for h in g["hooks"]
                if "loa-mem" in h["command"]]
    assert len(commands) == 1, commands
    return str(commands[0])


def run_as_claude_code(command: str, payload: dict[str, Any], cwd: Path,
                       **env: str) -> subprocess.CompletedProcess[str]:
    """Run a configured hook command as Claude Code does: through a shell, the event's JSON on
    stdin; it must succeed."""
    shell = subprocess.run(["bash", "-c", command], cwd=cwd, input=json.dumps(payload),
                           env={**path_env(), **env}, capture_output=True, text=True,
                           check=False)
    assert shell.returncode == 0, shell.stderr
    return shell


def test_session_start_hook_as_written_prints_the_block(cli: Cli, store: Path) -> None:
    decision = support.remember(cli, "Use PostgreSQL for the main store.", "decision",
                                "--confidence", "0.95")
    (store / ".claude").mkdir()
    (store / ".claude/settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    done = run_loa_mem(store, "hooks", "install", "--claude-code", env=path_env())
    assert done.returncode == 0, done.stderr
    settings = settings_of(store)
    groups = settings["hooks"]["SessionStart"]
    assert groups[0] == USER_SETTINGS["hooks"]["SessionStart"][0]
    ours = groups[1]
    for source in ("startup", "resume", "clear", "compact"):
        assert re.fullmatch(ours["matcher"], source)
    command = our_command(settings, "SessionStart")
    (store / "src").mkdir()
    payload = {"session_id": "s-1", "hook_event_name": "SessionStart", "source": "compact",
               "cwd": str(store / "src")}
    shell = run_as_claude_code(command, payload, store / "src", CLAUDE_PROJECT_DIR=str(store))
    assert shell.stdout.startswith("# Project memory (loa-mem)\n")
    assert f"\n### Decisions\n- {decision}: Use PostgreSQL for the main store. (0.95)\n" in (
        shell.stdout)


def test_session_end_hook_as_written_runs_gc(cli: Cli, store: Path) -> None:
    expired = support.remember(cli, "An error whose fix shipped.", "error",
                               now="2025-12-01T10:30:00Z")
    assert run_loa_mem(store, "hooks", "install", "--claude-code").returncode == 0
    command = our_command(settings_of(store), "SessionEnd")
    payload = {"session_id": "s-1", "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    shell = run_as_claude_code(command, payload, store)
    assert shell.stderr == ""  # s-1 was never opened with `session start`: gc alone, no error
    assert [e["id"] for e in support.entries(store, "error", archive=True)] == [expired]
    assert support.events(store)[-1]["op"] == "gc"


def test_session_end_hook_ends_the_agents_session_the_runner_opened(cli: Cli, store: Path
                                                                    ) -> None:
    cli.ok("session", "start", "--agent", "architect", "--session", "s-2")
    cli.ok("agent", "remember", "architect", "Deploys happen on Tuesdays", "--type", "context",
           "--session", "s-2")
    assert run_loa_mem(store, "hooks", "install", "--claude-code").returncode == 0
    command = our_command(settings_of(store), "SessionEnd")
    payload = {"session_id": "s-2", "hook_event_name": "SessionEnd", "reason": "logout"}
    run_as_claude_code(command, payload, store)
    sidecar = (store / "grimoires/loa/agents/architect.yaml").read_text(encoding="utf-8")
    assert "sessions_participated: 1" in sidecar and "Deploys happen on Tuesdays" in sidecar
    assert support.events(store)[-1]["op"] == "session-end"
    assert git(store, "log", "-1", "--format=%s").startswith("loa-mem session: end session s-2")
    assert "no open session" in cli("session", "end", "--session", "s-2").stderr


def test_claude_code_install_merges_and_uninstall_restores(store: Path) -> None:
    (store / ".claude").mkdir()
    (store / ".claude/settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    for _ in range(2):
        assert run_loa_mem(store, "hooks", "install", "--claude-code").returncode == 0
    settings = settings_of(store)
    assert settings["permissions"] == USER_SETTINGS["permissions"]
    assert settings["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert len(settings["hooks"]["SessionStart"]) == 2  # installing twice added nothing
    assert len(settings["hooks"]["SessionEnd"]) == 1
    done = run_loa_mem(store, "hooks", "uninstall", "--claude-code")
    assert done.returncode == 0, done.stderr
    assert settings_of(store) == USER_SETTINGS


def test_uninstall_removes_a_settings_file_it_created(store: Path) -> None:
    assert run_loa_mem(store, "hooks", "install", "--claude-code").returncode == 0
    assert run_loa_mem(store, "hooks", "uninstall").returncode == 0
    assert not (store / ".claude").exists()
    again = run_loa_mem(store, "hooks", "uninstall")
    assert again.returncode == 1 and "no loa-mem hooks are installed" in again.stderr


def test_settings_that_do_not_parse_are_left_alone(store: Path) -> None:
    (store / ".claude").mkdir()
    (store / ".claude/settings.json").write_text('{"hooks": {\n  "oops"\n', encoding="utf-8")
    done = run_loa_mem(store, "hooks", "install", "--claude-code")
    assert done.returncode == 1
    assert ".claude/settings.json:3:1" in done.stderr
    assert (store / ".claude/settings.json").read_text("utf-8") == '{"hooks": {\n  "oops"\n'


def test_install_needs_a_target(store: Path) -> None:
    done = run_loa_mem(store, "hooks", "install")
    assert done.returncode == 1 and "--claude-code" in done.stderr


def bad_entry(root: Path) -> None:
    with open(support.grimoire(root, "fact"), "a", encoding="utf-8") as handle:
        handle.write("- id: not-an-id\n")


def test_git_pre_commit_hook_blocks_invalid_memory_files(store: Path) -> None:
    done = run_loa_mem(store, "hooks", "install", "--git", env=path_env())
    assert done.returncode == 0, done.stderr
    hook = store / ".git/hooks/pre-commit"
    assert os.access(hook, os.X_OK)
    bad_entry(store)
    git(store, "add", "-A")
    blocked = subprocess.run(["git", "commit", "-qm", "bad memory"], cwd=store, env=path_env(),
                             capture_output=True, text=True, check=False)
    assert blocked.returncode != 0
    assert "not-an-id" in blocked.stdout + blocked.stderr
    git(store, "reset", "-q", "--hard")
    assert run_loa_mem(store, "hooks", "uninstall", "--git").returncode == 0
    assert not hook.exists()


def test_an_existing_git_hook_keeps_its_lines(store: Path) -> None:
    hook = store / ".git/hooks/pre-commit"
    original = "#!/bin/bash\necho user hook ran\nexit 0\n"
    hook.write_text(original, encoding="utf-8")
    assert run_loa_mem(store, "hooks", "install", "--git").returncode == 0
    text = hook.read_text("utf-8")
    assert text.startswith("#!/bin/bash\n# >>> loa-mem validate")
    assert text.endswith("# <<< loa-mem validate <<<\necho user hook ran\nexit 0\n")
    assert run_loa_mem(store, "hooks", "uninstall", "--git").returncode == 0
    assert hook.read_text("utf-8") == original


def test_git_hook_goes_where_core_hooks_path_says(store: Path) -> None:
    git(store, "config", "core.hooksPath", ".githooks")
    assert run_loa_mem(store, "hooks", "install", "--git").returncode == 0
    assert (store / ".githooks/pre-commit").exists()
    assert not (store / ".git/hooks/pre-commit").exists()


def test_a_hook_in_another_language_is_refused(store: Path) -> None:
    hook = store / ".git/hooks/pre-commit"
    hook.write_text("#!/usr/bin/env python3\nprint('hi')\n", encoding="utf-8")
    done = run_loa_mem(store, "hooks", "install", "--git")
    assert done.returncode == 1 and "not a shell script" in done.stderr
    assert hook.read_text("utf-8") == "#!/usr/bin/env python3\nprint('hi')\n"


@pytest.mark.parametrize("as_json", [False, True])
def test_print_shows_the_lines_for_any_runner(cli: Cli, as_json: bool) -> None:
    if as_json:
        assert cli.ok("hooks", "print", "--json").json() == {
            "session_start": ["loa-mem context"],
            "session_end": ['loa-mem session end --session "$SESSION_ID"',
                            "loa-mem capture decisions --if-enabled",
                            "loa-mem gc --trigger session_end --time-budget 1"],
            "after_tool": ["loa-mem capture tool-result --if-enabled"],
            "pre_commit": ["loa-mem validate --staged"]}
    else:
        out = cli.ok("hooks", "print").stdout.splitlines()
        assert [line for line in out if not line.startswith("#")] == [
            "loa-mem context", 'loa-mem session end --session "$SESSION_ID"',
            "loa-mem capture decisions --if-enabled",
            "loa-mem gc --trigger session_end --time-budget 1",
            "loa-mem capture tool-result --if-enabled", "loa-mem validate --staged"]
