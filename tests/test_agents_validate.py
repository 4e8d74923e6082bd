"""`loa-mem validate` over agent sidecars and the state index (issue 4 part 1): clean on what the
commands write, the trust feature's block included; a hand-broken sidecar is reported with file
and line and exit 1, and the agent commands refuse to build on it (nothing written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent_support import (
    STATE,
    end,
    note,
    refused,
    rel,
    session,
    sidecar,
    write_sidecar,
    write_text,
)
from tests.conftest import Cli

GOOD = """\
agent: qa
memories:
- id: m1
  type: observation
  content: Note 1
  confidence: 0.6
  source_session: '2026-01-01'
- id: m2
  type: context
  content: Note 2
  confidence: 0.8
  source_session: '2026-01-01'
"""
# each breakage: (line, replacement), the rule validate names, and where it points
BROKEN = {
    "confidence": ((11, "  confidence: 1.5"), "schema", 11),
    "duplicate-id": ((8, "- id: m1"), "duplicate-id", 8),
    "agent-name": ((1, "agent: qb"), "agent-name", 1),
    "yaml": ((9, "  type: context: x"), "yaml", 9),
}


def broken(kind: str) -> str:
    (line, text), _, _ = BROKEN[kind]
    lines = GOOD.splitlines()
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


def problems(cli: Cli) -> tuple[int, list[dict[str, Any]]]:
    outcome = cli("validate", "--json")
    found: list[dict[str, Any]] = outcome.json()["problems"]
    return outcome.code, found


def test_what_the_commands_write_validates_trust_block_included(cli: Cli, store: Path) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "The plan ignores the REST users", "--cite",
           "Accuracy", "--round", "r1")
    cli.ok("agent", "remember", "critic", "Prefers small PRs", "--type", "preference")
    cli.ok("agent", "relate", "critic", "architect", "--complement")
    session(cli, "s1", "critic", "architect")
    cli.ok("agent", "remember", "critic", "Chose trunk-based flow", "--type", "decision",
           "--session", "s1")
    cli.ok("agent", "reinforce", "critic", "m1", "--session", "s1")
    trust = sidecar(store, "critic")["trust"]
    end(cli, "s1")
    cli.ok("trust", "dissent", "critic", "--text", "Still no rollback plan", "--round", "r2")

    assert problems(cli) == (0, [])
    data = sidecar(store, "critic")
    assert [m["id"] for m in data["memories"]] == ["m1", "m2"]
    assert data["sessions_participated"] == 1
    assert data["trust"]["dissent_history"][0] == trust["dissent_history"][0]
    assert len(data["trust"]["dissent_history"]) == 2
    assert cli.ok("validate").stdout.startswith("ok:")


def test_a_good_hand_written_sidecar_validates(cli: Cli, store: Path) -> None:
    write_text(store, rel("qa"), GOOD)

    assert problems(cli) == (0, [])


def test_the_summary_counts_the_sidecars_it_checked(cli: Cli, store: Path) -> None:
    write_text(store, rel("qa"), GOOD)
    assert cli.ok("validate").stdout.splitlines()[-1] == (
        "ok: 0 entries, 1 agent sidecar, 0 error(s), 0 warning(s)")
    write_text(store, rel("dev"), GOOD.replace("agent: qa", "agent: dev"))

    assert cli.ok("validate", "--json").json()["checked"]["agent_sidecars"] == 2
    assert cli.ok("validate", "--format", "github").stdout.splitlines()[-1] == (
        "loa-mem validate: ok, 0 problem(s) in 0 entries, 2 agent sidecars")
    assert cli.ok("validate", rel("qa")).stdout.splitlines()[-1] == (
        "ok: 0 entries, 1 agent sidecar, 0 error(s), 0 warning(s)")


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_hand_broken_sidecar_is_reported_with_file_and_line(cli: Cli, store: Path,
                                                              kind: str) -> None:
    write_text(store, rel("qa"), broken(kind))
    _, rule, line = BROKEN[kind]

    code, found = problems(cli)

    assert code == 1
    assert [(p["path"], p["line"], p["rule"], p["severity"]) for p in found] == [
        (rel("qa"), line, rule, "error")]
    text = cli("validate")
    assert text.code == 1
    assert f"{rel('qa')}:{line}: error: [{rule}]" in text.stdout


def test_the_messages_say_what_is_wrong(cli: Cli, store: Path) -> None:
    for kind, expected in (("confidence", "memories.1.confidence: must be at most 1"),
                           ("duplicate-id", "memory id m1 is used twice"),
                           ("agent-name", "agent is 'qb' but the file is named qa.yaml")):
        write_text(store, rel("qa"), broken(kind))
        assert expected in problems(cli)[1][0]["message"]


def test_every_problem_of_a_sidecar_is_reported(cli: Cli, store: Path) -> None:
    text = broken("confidence").replace("agent: qa", "agent: qb").replace("- id: m2",
                                                                          "- id: m1")
    write_text(store, rel("qa"), text)

    assert sorted((p["line"], p["rule"]) for p in problems(cli)[1]) == [
        (1, "agent-name"), (8, "duplicate-id"), (11, "schema")]


def test_a_broken_state_index_is_reported(cli: Cli, store: Path) -> None:
    write_text(store, STATE, '{"agent_sidecars": {\n')

    code, found = problems(cli)

    assert code == 1
    assert [(p["path"], p["rule"]) for p in found] == [(STATE, "json")]


@pytest.mark.parametrize("kind", list(BROKEN))
@pytest.mark.parametrize("args", [
    ["agent", "remember", "qa", "New note", "--type", "context"],
    ["agent", "reinforce", "qa", "m2"],
    ["agent", "relate", "qa", "architect", "--complement"],
], ids=["remember", "reinforce", "relate"])
def test_the_agent_commands_refuse_a_broken_sidecar(cli: Cli, store: Path, kind: str,
                                                    args: list[str]) -> None:
    write_text(store, rel("qa"), broken(kind))
    _, rule, line = BROKEN[kind]

    message = refused(cli, *args)

    assert message.startswith(f"loa-mem: invalid-file: {rel('qa')}:{line}:")
    if kind != "yaml":
        assert f"[{rule}]" in message


def test_a_sidecar_under_the_floor_is_still_valid(cli: Cli, store: Path) -> None:
    # decay takes confidence under 0.5 (to 0.3, kept): the schema allows 0-1, not 0.5-1
    write_sidecar(store, "qa", [note(1, 0.3), note(2, 0.4)])

    assert problems(cli) == (0, [])
