"""Claude Code hooks as a user lives with them: reinstalling keeps the user's edits and order,
a settings file of the wrong shape is refused in one line, a program path with spaces works,
and a teammate without loa-mem gets a skipped hook, not a failing one."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.integrations import hooks
from tests.conftest import run_loa_mem
from tests.test_hooks import our_command, path_env, run_as_claude_code, settings_of

MARK = "# loa-mem:hook"


def _write(root: Path, settings: dict[str, Any]) -> None:
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude/settings.json").write_text(json.dumps(settings, indent=2), "utf-8")


def _install(root: Path, *args: str, env: dict[str, str] | None = None) -> None:
    done = run_loa_mem(root, "hooks", "install", "--claude-code", *args, env=env)
    assert done.returncode == 0, done.stderr


def _ours(settings: dict[str, Any], event: str) -> dict[str, Any]:
    found = [h for g in settings["hooks"][event] for h in g["hooks"]
             if h["command"].endswith(MARK)]
    assert len(found) == 1, found
    return dict(found[0])


def test_reinstall_keeps_the_users_edits_and_the_order_of_groups(store: Path) -> None:
    _install(store)
    settings = settings_of(store)
    _ours(settings, "SessionStart")  # one of ours
    settings["hooks"]["SessionStart"][0]["hooks"][0]["timeout"] = 15
    settings["hooks"]["SessionStart"][0]["hooks"][0]["statusMessage"] = "loading memory"
    settings["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] = 90
    settings["hooks"]["SessionStart"].append(
        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]})
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = f"loa-mem context {MARK}"
    _write(store, settings)
    _install(store)

    again = settings_of(store)
    start = again["hooks"]["SessionStart"]
    assert [g["hooks"][0]["command"].endswith(MARK) for g in start] == [True, False]
    assert start[1] == {"matcher": "startup",
                        "hooks": [{"type": "command", "command": "echo mine"}]}
    assert _ours(again, "SessionStart")["timeout"] == 15
    assert _ours(again, "SessionStart")["statusMessage"] == "loading memory"
    assert _ours(again, "SessionStart")["command"].startswith("command -v loa-mem")
    assert _ours(again, "SessionEnd")["timeout"] == 90
    assert list(again["hooks"]) == list(hooks.claude_handlers("loa-mem"))


def test_a_handler_the_user_added_to_our_group_survives_uninstall(store: Path) -> None:
    _install(store)
    settings = settings_of(store)
    settings["hooks"]["SessionEnd"][0]["hooks"].append({"type": "command", "command": "echo bye"})
    _write(store, settings)
    _install(store)
    assert len(settings_of(store)["hooks"]["SessionEnd"][0]["hooks"]) == 2

    done = run_loa_mem(store, "hooks", "uninstall", "--claude-code")
    assert done.returncode == 0, done.stderr
    assert settings_of(store) == {"hooks": {"SessionEnd": [
        {"hooks": [{"type": "command", "command": "echo bye"}]}]}}


def test_an_event_that_is_an_object_is_refused_in_one_line(store: Path) -> None:
    text = '{\n  "hooks": {\n    "SessionStart": {"matcher": "startup"}\n  }\n}\n'
    (store / ".claude").mkdir()
    (store / ".claude/settings.json").write_text(text, "utf-8")
    done = run_loa_mem(store, "hooks", "install", "--claude-code")

    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert ".claude/settings.json:3:1: hooks.SessionStart is not a list" in done.stderr
    assert (store / ".claude/settings.json").read_text("utf-8") == text


def _program_in(folder: Path) -> Path:
    """A loa-mem executable in a folder whose path has a space."""
    folder.mkdir(parents=True)
    program = folder / "loa-mem"
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m loa_mem "$@"\n', "utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


def test_a_command_path_with_spaces_is_quoted_and_runs(store: Path, tmp_path: Path) -> None:
    program = _program_in(tmp_path / "my tools")
    _install(store, "--command", str(program))
    command = our_command(settings_of(store), "SessionStart")

    assert f"'{program}' context {MARK}" in command
    shell = run_as_claude_code(command, {"hook_event_name": "SessionStart", "source": "startup"},
                               store)
    assert shell.stdout.startswith("# Project memory (loa-mem)\n")


def test_without_loa_mem_the_hooks_are_skipped_with_one_line(store: Path, tmp_path: Path
                                                            ) -> None:
    _install(store)
    settings = settings_of(store)
    bash = shutil.which("bash")
    assert bash
    (tmp_path / "empty").mkdir()
    bare = {**os.environ, "PATH": str(tmp_path / "empty")}
    for event in ("SessionStart", "SessionEnd"):
        shell = subprocess.run([bash, "-c", our_command(settings, event)], cwd=store,
                               input="{}", env=bare, capture_output=True, text=True, check=False)
        assert (shell.returncode, shell.stdout) == (0, "")
        assert shell.stderr == "loa-mem not installed; memory hook skipped\n"


def test_the_guarded_hook_still_runs_where_loa_mem_is_installed(store: Path) -> None:
    _install(store, env=path_env())
    shell = run_as_claude_code(our_command(settings_of(store), "SessionStart"),
                               {"hook_event_name": "SessionStart", "source": "resume"}, store)
    assert "# Project memory (loa-mem)" in shell.stdout and shell.stderr == ""


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_HANDLER = st.fixed_dictionaries(
    {"type": st.just("command"), "command": _TEXT.map(lambda t: f"echo {t!r}")},
    optional={"timeout": st.integers(1, 600), "statusMessage": _TEXT})
_GROUP = st.fixed_dictionaries({"hooks": st.lists(_HANDLER, min_size=1, max_size=2)},
                               optional={"matcher": _TEXT})
_SETTINGS = st.fixed_dictionaries(
    {"hooks": st.dictionaries(st.sampled_from(["SessionStart", "SessionEnd", "PostToolUse",
                                               "Stop", "UserPromptSubmit"]),
                              st.lists(_GROUP, min_size=1, max_size=3), min_size=1)},
    optional={"permissions": st.fixed_dictionaries({"allow": st.lists(_TEXT, max_size=2)}),
              "model": _TEXT})


@settings(max_examples=60, deadline=None)
@given(_SETTINGS, st.dictionaries(st.sampled_from(["timeout", "statusMessage", "x-note"]),
                                  st.integers(1, 99), max_size=2))
def test_install_and_uninstall_round_trip_any_users_settings(
        users: dict[str, Any], edits: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        top = Path(folder)
        _write(top, users)
        hooks.install_claude(top, "loa-mem")
        installed = settings_of(top)
        for event, groups in users["hooks"].items():
            assert installed["hooks"][event][:len(groups)] == groups  # theirs first, unchanged
        for event in installed["hooks"]:
            for group in installed["hooks"][event]:
                for handler in group["hooks"]:
                    if handler["command"].endswith(MARK):
                        handler.update(edits)
        _write(top, installed)
        assert hooks.install_claude(top, "loa-mem")["changed"] is False  # edits are kept
        assert settings_of(top) == installed
        hooks.uninstall_claude(top)
        assert settings_of(top) == users
