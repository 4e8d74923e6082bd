"""Under --json every failure is one JSON object on stdout, `{"error": {"kind", "message",
"hint"}}`, with the same exit code and the same one line on stderr as without --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import terminal_support
from tests.conftest import Cli, run_loa_mem

WITH_JSON = [(path, command) for path, command in terminal_support.commands()
             if "--json" in terminal_support.options(command)]
IDS = [" ".join(path) for path, _ in WITH_JSON]


def error_of(stdout: str) -> dict[str, str]:
    data = json.loads(stdout)
    assert list(data) == ["error"]
    assert set(data["error"]) == {"kind", "message", "hint"}
    return dict(data["error"])


def test_most_commands_take_json() -> None:
    assert len(WITH_JSON) > 40
    assert {"recall", "remember", "status", "history", "advise", "gc", "pref set"} <= set(IDS)


@pytest.mark.parametrize(("path", "command"), WITH_JSON, ids=IDS)
def test_a_usage_mistake_under_json_is_one_error_object(tmp_path: Path, path: list[str],
                                                        command: object) -> None:
    outcome = Cli(tmp_path)(*path, "--json", "--no-such-option")

    assert outcome.code == 2
    error = error_of(outcome.stdout)
    assert error["kind"] == "usage" and "--no-such-option" in error["message"]
    assert error["hint"] == f"see 'loa-mem {' '.join(path)} --help'"
    assert outcome.stderr == f"loa-mem: usage: {error['message']}; {error['hint']}\n"


STORE_COMMANDS = [(path, command) for path, command in WITH_JSON
                  if "--root" in terminal_support.options(command) and path != ["init"]]


@pytest.mark.parametrize(("path", "command"), STORE_COMMANDS,
                         ids=[" ".join(p) for p, _ in STORE_COMMANDS])
def test_a_failure_under_json_is_one_error_object(tmp_path: Path, path: list[str],
                                                  command: object) -> None:
    """Outside any repository (or with a flag missing that the command asks for)."""
    args = [*path, *terminal_support.required_args(command), "--root", str(tmp_path), "--json"]
    outcome = Cli(tmp_path)(*args)

    assert outcome.code in (1, 2), outcome.stderr
    error = error_of(outcome.stdout)
    assert outcome.stderr == (f"loa-mem: {error['kind']}: {error['message']}"
                              + (f"; {error['hint']}" if error["hint"] else "") + "\n")
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_refusal_under_json_names_its_kind_and_what_to_do(cli: Cli) -> None:
    outcome = cli("remember", "The team prefers small pull requests.", "-c", "decision",
                  "--confidence", "0.7", "--json")

    assert outcome.code == 1
    error = error_of(outcome.stdout)
    assert error["kind"] == "refused"
    assert "decision floor" in error["message"] and "raise it" in error["hint"]


def test_a_preference_failure_under_json_is_one_error_object(cli: Cli) -> None:
    outcome = cli("pref", "get", "no-such-key", "--json")

    if outcome.code == 0:
        pytest.skip("pref get answers an unknown key with an empty result")
    assert outcome.code == 1
    assert error_of(outcome.stdout)["kind"]


def test_the_real_process_prints_the_same_object(tmp_path: Path) -> None:
    done = run_loa_mem(tmp_path, "status", "--json")

    assert done.returncode == 1
    assert error_of(done.stdout)["kind"] == "not-a-repo"
    assert done.stderr.startswith("loa-mem: not-a-repo: ")


def test_without_json_nothing_is_printed_on_stdout(tmp_path: Path) -> None:
    outcome = Cli(tmp_path)("status", "--root", str(tmp_path))

    assert outcome.code == 1 and outcome.stdout == ""
    assert outcome.stderr.startswith("loa-mem: not-a-repo: ")
