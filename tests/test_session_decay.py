"""Session end, continued: decay after 5 unreinforced sessions, pruning under 0.3, reinforcement
(+0.1, at most 1.0) of the memories referenced in the session, and the refusals of the session
commands (exit 1, one line, nothing written, the session left as it was)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.agent_support import (
    commits,
    end,
    idle_sessions,
    memory,
    note,
    one_session,
    open_sessions,
    refused,
    rel,
    session,
    sidecar,
    write_sidecar,
    write_text,
)
from tests.conftest import Cli


# -- decay ----------------------------------------------------------------------------------
def test_decay_comes_after_the_fifth_unreinforced_session_not_the_fourth(cli: Cli,
                                                                        store: Path) -> None:
    cli.ok("agent", "remember", "qa", "Staging is shared", "--type", "observation")  # 0.6

    outcomes = idle_sessions(cli, "qa", 4)
    after_four = memory(store, "qa", "m1")
    assert after_four is not None
    assert (after_four["confidence"], after_four["unreinforced_sessions"]) == (0.6, 4)
    assert all(o["decayed"] == [] for o in outcomes)

    fifth = idle_sessions(cli, "qa", 1, "fifth")[0]

    # 5 sessions without reinforcement: 0.6 - 0.1 = 0.5, and the count starts again
    assert fifth["decayed"] == [{"id": "m1", "confidence": 0.5}]
    after_five = memory(store, "qa", "m1")
    assert after_five is not None
    assert (after_five["confidence"], after_five["unreinforced_sessions"]) == (0.5, 0)


def test_the_session_a_memory_is_made_in_does_not_count_against_it(cli: Cli,
                                                                   store: Path) -> None:
    one_session(cli, "qa", "s0", ["remember", "qa", "Staging is shared", "--type",
                                  "observation"])

    idle_sessions(cli, "qa", 4)
    assert confidence(store, "m1") == 0.6  # 4 sessions after the one it was made in
    idle_sessions(cli, "qa", 1, "fifth")
    assert confidence(store, "m1") == 0.5  # the 5th after it: 0.6 - 0.1


def test_only_the_participants_memories_age(cli: Cli, store: Path) -> None:
    write_sidecar(store, "architect", [note(1, 0.9, unreinforced_sessions=4)])

    idle_sessions(cli, "qa", 3)

    assert memory(store, "architect", "m1") == {**note(1, 0.9), "id": "m1",
                                                "source_session": "2026-01-01T00:00:00Z",
                                                "unreinforced_sessions": 4}


def confidence(root: Path, memory_id: str, agent: str = "qa") -> float | None:
    found = memory(root, agent, memory_id)
    return None if found is None else float(found["confidence"])


def test_three_decays_from_0_6_is_exactly_0_3_and_stays_a_fourth_prunes(cli: Cli,
                                                                      store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.6), note(2, 0.9)])

    idle_sessions(cli, "qa", 15)

    # sessions 5, 10, 15: 0.6 -> 0.5 -> 0.4 -> 0.3 (in floats 0.6 - 0.1 - 0.1 - 0.1 is
    # 0.29999999999999993: stored rounded to 0.3); "pruned under 0.3" keeps 0.3
    assert confidence(store, "m1") == 0.3
    assert "confidence: 0.3\n" in (store / rel("qa")).read_text(encoding="utf-8")
    # m2: 0.9 -> 0.8 -> 0.7 -> 0.6
    assert confidence(store, "m2") == 0.6

    outcomes = idle_sessions(cli, "qa", 5, "later")

    # session 20: 0.3 - 0.1 = 0.2 < 0.3: pruned in the same session end
    assert outcomes[-1]["decayed"] == [{"id": "m1", "confidence": 0.2},
                                       {"id": "m2", "confidence": 0.5}]
    assert outcomes[-1]["pruned"] == [{"id": "m1", "content": "Note 1", "confidence": 0.2,
                                       "reason": "confidence under 0.3"}]
    assert confidence(store, "m1") is None
    assert confidence(store, "m2") == 0.5


def test_a_hand_written_confidence_under_0_3_is_pruned_at_the_next_end(cli: Cli,
                                                                       store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.29), note(2, 0.3)])

    out = one_session(cli, "qa", "s1")

    assert [(p["id"], p["confidence"]) for p in out["pruned"]] == [("m1", 0.29)]
    assert [m["id"] for m in sidecar(store, "qa")["memories"]] == ["m2"]


# -- reinforcement in a session -------------------------------------------------------------
def test_a_referenced_memory_gains_a_tenth_once_and_does_not_decay(cli: Cli,
                                                                   store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.6, unreinforced_sessions=4), note(2, 0.95),
                                note(3, 0.6, unreinforced_sessions=4)])
    session(cli, "s1", "qa")
    for memory_id in ("m1", "m1", "m2"):
        out = cli.ok("agent", "reinforce", "qa", memory_id, "--session", "s1", "--json").json()
        assert (out["pending"], out["id"]) == (True, memory_id)
    assert confidence(store, "m1") == 0.6  # recorded only: the sidecar changes at end

    outcome = end(cli, "s1")["agents"][0]

    # m1: referenced (twice, counted once) 0.6 + 0.1 = 0.7, instead of its 5th-session decay;
    # m2: 0.95 + 0.1 capped at 1.0; m3: not referenced, 5th session: 0.6 - 0.1 = 0.5
    assert outcome["reinforced"] == [{"id": "m1", "confidence": 0.7},
                                     {"id": "m2", "confidence": 1.0}]
    assert outcome["decayed"] == [{"id": "m3", "confidence": 0.5}]
    m1 = memory(store, "qa", "m1")
    assert m1 is not None
    assert (m1["confidence"], m1["unreinforced_sessions"]) == (0.7, 0)

    idle_sessions(cli, "qa", 4)
    assert confidence(store, "m1") == 0.7  # the count started again at the reference
    idle_sessions(cli, "qa", 1, "fifth")
    assert confidence(store, "m1") == 0.6  # 5 unreinforced sessions after it: 0.7 - 0.1


# -- refusals -------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["session", "end", "--session", "nope"],
    ["session", "end", "--session", "../s1"],
    ["agent", "remember", "qa", "Note", "--type", "context", "--session", "nope"],
    ["agent", "reinforce", "qa", "m1", "--session", "nope"],
    ["agent", "relate", "qa", "architect", "--agree", "--session", "nope"],
    ["agent", "remember", "architect", "Note", "--type", "context", "--session", "s1"],
    ["agent", "reinforce", "qa", "m9", "--session", "s1"],
    ["agent", "remember", "qa", "y" * 101, "--type", "context", "--session", "s1"],
    ["agent", "remember", "qa", "Note", "--type", "context", "--confidence", "1.1",
     "--session", "s1"],
    ["agent", "relate", "qa", "qa", "--agree", "--session", "s1"],
    ["session", "start", "--agent", "qa", "--agent", "../x", "--session", "s2"],
    ["session", "start", "--agent", "qa", "--session", "a/b"],
], ids=["end-unknown", "end-unsafe-id", "remember-not-open", "reinforce-not-open",
        "relate-not-open", "not-a-participant", "reinforce-unknown-id", "remember-101",
        "remember-conf-1.1", "relate-self", "start-unsafe-agent", "start-unsafe-id"])
def test_session_refusals_write_nothing(cli: Cli, store: Path, args: list[str]) -> None:
    write_sidecar(store, "qa", [note(1, 0.6)])
    session(cli, "s1", "qa")
    cli.ok("agent", "remember", "qa", "Recorded", "--type", "context", "--session", "s1")

    refused(cli, *args)

    assert list(open_sessions(store)) == ["s1.json"]


def test_refusal_messages_of_sessions(cli: Cli, store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.6)])
    session(cli, "s1", "qa")

    assert "no open session with that id" in refused(cli, "session", "end", "--session", "nope")
    assert "architect is not in session s1" in refused(
        cli, "agent", "remember", "architect", "Note", "--type", "context", "--session", "s1")
    assert "qa has no memory m9" in refused(cli, "agent", "reinforce", "qa", "m9", "--session",
                                            "s1")


BROKEN = {"yaml": "agent: qa\nmemories: [\n",
          "schema": "agent: qa\nmemories:\n- id: m1\n  type: observation\n  content: Note 1\n"
                    "  confidence: high\n  source_session: '2026-01-01'\n"}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_sidecar_stops_the_session_end_and_the_session_stays_open(
        cli: Cli, store: Path, kind: str) -> None:
    session(cli, "s1", "qa", "architect")
    cli.ok("agent", "remember", "architect", "Note", "--type", "context", "--session", "s1")
    write_text(store, rel("qa"), BROKEN[kind])
    before = commits(store)

    message = refused(cli, "session", "end", "--session", "s1")

    assert f"{rel('qa')}:" in message
    assert commits(store) == before
    assert sidecar(store, "architect")["memories"] == []  # as session start made it
    assert list(open_sessions(store)) == ["s1.json"]
    write_sidecar(store, "qa", [note(1, 0.6)])
    assert [a["agent"] for a in end(cli, "s1")["agents"]] == ["qa", "architect"]
    assert rel("architect") in support.changed_files(store)


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_sidecar_stops_the_session_start(cli: Cli, store: Path, kind: str) -> None:
    write_text(store, rel("qa"), BROKEN[kind])

    message = refused(cli, "session", "start", "--agent", "qa", "--session", "s1")

    assert message.startswith(f"loa-mem: invalid-file: {rel('qa')}:")
    assert open_sessions(store) == {}
