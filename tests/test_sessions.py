"""`loa-mem session start | end | list` (spec section 8, the MDAN memory protocol): the briefing
injected at start, and every session-end rule, each at a fixed clock with the arithmetic worked
out beside the assertion. Decay and its floating-point edges are in test_session_decay.py."""

from __future__ import annotations

from pathlib import Path

from tests import support
from tests.agent_support import (
    EVENTS,
    STATE,
    T0,
    commits,
    end,
    memory,
    note,
    one_session,
    open_sessions,
    rel,
    session,
    sidecar,
    state,
    write_sidecar,
    write_text,
)
from tests.conftest import Cli, git

T1 = "2026-02-01T11:45:00Z"


# -- start ----------------------------------------------------------------------------------
def test_start_briefs_each_agent_for_injection(cli: Cli, store: Path) -> None:
    cli.ok("agent", "remember", "architect", "Prefers REST over GraphQL", "--type", "preference")
    cli.ok("agent", "remember", "architect", "Chose Postgres", "--type", "decision")
    cli.ok("agent", "relate", "architect", "qa", "--complement")
    before = (support.snapshot(store), commits(store))

    out = cli.ok("session", "start", "--agent", "architect", "--agent", "qa", "--session",
                 "s1")

    assert out.stdout == (
        "Agent memory for session s1 (agents: architect, qa)\n"
        "\n"
        "## architect\n"
        "Your memories from previous sessions:\n"
        "- [preference] Prefers REST over GraphQL (confidence: 0.8; id m1)\n"
        "- [decision] Chose Postgres (confidence: 1.0; id m2)\n"
        "Relationship notes:\n"
        "complements: qa\n"
        "\n"
        "## qa\n"
        "First session for this agent — no prior memories\n")
    # start writes only the sidecar of the agent that had none (qa), in one commit
    assert commits(store) == before[1] + 1
    assert support.changed_files(store) == sorted([rel("qa"), STATE, EVENTS])
    assert {k: v for k, v in support.snapshot(store).items()
            if k not in (rel("qa"), STATE, EVENTS)} == {
        k: v for k, v in before[0].items() if k not in (STATE, EVENTS)}
    assert list(open_sessions(store)) == ["s1.json"]


def test_start_json(cli: Cli, store: Path) -> None:
    cli.ok("agent", "remember", "architect", "Chose Postgres", "--type", "decision")

    out = session(cli, "s1", "architect", "qa")

    assert (out["session"], out["started"], out["joined"]) == ("s1", T0, ["architect", "qa"])
    assert out["agents"] == [
        {"agent": "architect", "first_session": False, "sessions_participated": 0,
         "memories": [{"id": "m1", "type": "decision", "content": "Chose Postgres",
                       "confidence": 1.0}],
         "relationships": {"agrees_with": [], "disagrees_with": [], "complements": []}},
        {"agent": "qa", "first_session": True, "sessions_participated": 0, "memories": [],
         "relationships": {"agrees_with": [], "disagrees_with": [], "complements": []}}]
    assert out["text"] == cli.ok("session", "start", "--agent", "qa", "--session", "s1").stdout


def test_an_agent_known_only_to_the_trust_memory_is_in_its_first_session(cli: Cli) -> None:
    cli.ok("trust", "dissent", "critic", "--text", "The plan ignores the REST users")

    out = session(cli, "s1", "critic")

    assert out["agents"][0]["first_session"] is True
    assert "First session for this agent" in out["text"]


def test_start_shows_the_last_ten_of_twelve_memories(cli: Cli, store: Path) -> None:
    write_sidecar(store, "qa", [note(n, 0.6 + n / 100) for n in range(1, 13)])

    out = session(cli, "s1", "qa")

    # 12 memories, the last 10 in the order they were added: m3 .. m12
    assert [m["id"] for m in out["agents"][0]["memories"]] == [f"m{n}" for n in range(3, 13)]
    assert "- [observation] Note 3 (confidence: 0.63; id m3)\n" in out["text"]
    assert "Note 2 " not in out["text"]


def test_start_without_an_id_names_the_session_after_the_clock(cli: Cli) -> None:
    first = cli.ok("session", "start", "--agent", "qa", "--json").json()
    second = cli.ok("session", "start", "--agent", "qa", "--json").json()

    assert (first["session"], second["session"]) == ("S-20260201T103000Z",
                                                     "S-20260201T103000Z-2")


def test_start_again_joins_the_open_session(cli: Cli) -> None:
    session(cli, "s1", "qa", now=T0)

    out = session(cli, "s1", "qa", "architect", now=T1)

    assert (out["started"], out["joined"]) == (T0, ["architect"])
    assert cli.ok("session", "list", "--json").json() == {"sessions": [
        {"session": "s1", "started": T0, "agents": ["qa", "architect"],
         "recorded": {"memory": 0, "reference": 0, "relation": 0}}]}


# -- end: one commit ------------------------------------------------------------------------
def test_end_is_one_commit_and_leaves_the_users_work_alone(cli: Cli, store: Path) -> None:
    write_text(store, "notes.md", "mine\n")
    (store / "notes.md").write_text("mine, edited\n", encoding="utf-8")
    (store / "staged.txt").write_text("staged\n", encoding="utf-8")
    git(store, "add", "staged.txt")
    (store / "untracked.txt").write_text("untracked\n", encoding="utf-8")
    status = support.porcelain(store)
    session(cli, "s1", "architect", "qa", now=T0)
    before = commits(store)
    cli.ok("agent", "remember", "qa", "Flaky CI", "--type", "observation", "--session", "s1")

    out = end(cli, "s1", now=T1)

    assert commits(store) == before + 1
    assert out["commit"] == support.head(store)
    assert support.changed_files(store) == sorted([rel("architect"), rel("qa"), STATE, EVENTS])
    assert support.porcelain(store) == status
    assert git(store, "diff", "--cached", "--name-only") == "staged.txt\n"
    assert (store / "notes.md").read_text(encoding="utf-8") == "mine, edited\n"
    assert support.message(store).startswith(
        "loa-mem session: end session s1 (architect, qa: 1 new memory, 0 pruned)")
    assert open_sessions(store) == {}
    assert cli.ok("session", "list", "--json").json() == {"sessions": []}


def test_end_counts_the_session_for_every_participant(cli: Cli, store: Path) -> None:
    write_sidecar(store, "architect", [note(1, 0.9)])  # sessions_participated: 7
    session(cli, "s1", "architect", "qa", now=T0)

    out = end(cli, "s1", now=T1)

    assert [(a["agent"], a["sessions"]) for a in out["agents"]] == [("architect", 8), ("qa", 1)]
    for agent, sessions in (("architect", 8), ("qa", 1)):
        data = sidecar(store, agent)
        assert (data["sessions_participated"], data["last_updated"]) == (sessions, T1)
    assert sidecar(store, "qa")["created"] == T0  # the new agent's sidecar: made at start
    assert state(store)["agent_sidecars"] == {
        "architect": {"path": rel("architect"), "last_updated": T1, "memory_count": 1,
                      "sessions": 8},
        "qa": {"path": rel("qa"), "last_updated": T1, "memory_count": 0, "sessions": 1}}
    assert (out["session"], out["started"], out["state_index"]) == ("s1", T0, STATE)


def test_the_state_index_keeps_what_else_it_holds(cli: Cli, store: Path) -> None:
    write_text(store, STATE, '{"phase": "build", "agent_sidecars": {"old": {"sessions": 3}}}')
    one_session(cli, "qa", "s1")

    assert state(store) == {"phase": "build", "agent_sidecars": {
        "old": {"sessions": 3},
        "qa": {"path": rel("qa"), "last_updated": T0, "memory_count": 0, "sessions": 1}}}


def test_end_keeps_hand_written_comments(cli: Cli, store: Path) -> None:
    write_text(store, rel("qa"), (
        "# QA agent: reviewed by hand\n"
        "agent: qa\n"
        "memories:\n"
        "- id: m1  # keep this one\n"
        "  type: context\n"
        "  content: 'Staging is shared'\n"
        "  confidence: 0.9\n"
        "  source_session: 2026-01-01\n"))

    one_session(cli, "qa", "s1", ["remember", "qa", "New note", "--type", "observation"])

    text = (store / rel("qa")).read_text(encoding="utf-8")
    assert text.startswith("# QA agent: reviewed by hand\nagent: qa\n")
    assert "- id: m1  # keep this one\n" in text
    assert "content: 'Staging is shared'\n" in text
    assert [m["id"] for m in sidecar(store, "qa")["memories"]] == ["m1", "m2"]
    assert cli("validate").code == 0


# -- end: new memories ----------------------------------------------------------------------
def test_a_session_adds_its_memories(cli: Cli, store: Path) -> None:
    session(cli, "s1", "qa", now=T0)
    cli.ok("agent", "remember", "qa", "Staging is shared", "--type", "context", "--session",
           "s1")

    out = end(cli, "s1", now=T1)["agents"][0]

    assert out["added"] == [{"id": "m1", "type": "context", "content": "Staging is shared",
                             "confidence": 0.8}]
    assert memory(store, "qa", "m1") == {
        "id": "m1", "type": "context", "content": "Staging is shared", "confidence": 0.8,
        "source_session": T0, "session": "s1", "created": T1, "unreinforced_sessions": 0}


def test_at_most_five_new_memories_the_most_confident_kept(cli: Cli, store: Path) -> None:
    session(cli, "s1", "qa")
    recorded = [("observation", "0.6"), ("observation", "0.9"), ("observation", "0.6"),
                ("decision", "1.0"), ("observation", "0.6"), ("context", "0.8"),
                ("decision", "0.6")]
    outputs = [cli.ok("agent", "remember", "qa", f"Point {n}", "--type", kind, "--confidence",
                      value, "--session", "s1").stdout for n, (kind, value) in
               enumerate(recorded)]
    assert "session end keeps" not in outputs[4]
    assert "6 memories recorded for qa in session s1; session end keeps at most 5 new " \
           "ones, the most confident (the earliest on a tie)" in outputs[5]

    out = end(cli, "s1")["agents"][0]

    # by confidence, the earliest first on a tie: 1.0 (3), .9 (1), .8 (5), .6 (0), .6 (2);
    # points 4 and 6 (.6, recorded later) are not kept. Kept ones keep their recorded order.
    assert [(a["id"], a["content"]) for a in out["added"]] == [
        ("m1", "Point 0"), ("m2", "Point 1"), ("m3", "Point 2"), ("m4", "Point 3"),
        ("m5", "Point 5")]
    assert out["dropped"] == [{"type": "observation", "content": "Point 4", "confidence": 0.6},
                              {"type": "decision", "content": "Point 6", "confidence": 0.6}]
    # every decision reached goes into the history, a dropped one without a memory id
    assert [(d["decision"], d["memory"], d["session"], d["date"])
            for d in sidecar(store, "qa")["decision_history"]] == [
        ("Point 3", "m4", "s1", T0), ("Point 6", None, "s1", T0)]
    assert out["decisions"] == 2


def test_a_repeat_in_the_session_is_one_memory_at_its_highest_confidence(cli: Cli,
                                                                         store: Path) -> None:
    out = one_session(cli, "qa", "s1",
                      ["remember", "qa", "Flaky CI", "--type", "observation"],
                      ["remember", "qa", "flaky ci", "--type", "observation",
                       "--confidence", "0.7"])

    assert [(a["content"], a["confidence"]) for a in out["added"]] == [("Flaky CI", 0.7)]


def test_restating_a_stored_memory_reinforces_it(cli: Cli, store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.6)])

    out = one_session(cli, "qa", "s1", ["remember", "qa", "note 1", "--type", "observation"])

    # 0.6 + 0.1 = 0.7; nothing new is added
    assert (out["added"], out["restated"], out["reinforced"]) == (
        [], ["m1"], [{"id": "m1", "confidence": 0.7}])


# -- end: the cap of 50 ---------------------------------------------------------------------
def test_over_fifty_the_lowest_confidence_goes_the_oldest_first_on_a_tie(cli: Cli,
                                                                        store: Path) -> None:
    low = {10, 20, 30}
    write_sidecar(store, "qa", [note(n, 0.6 if n in low else 0.9) for n in range(1, 51)])

    out = one_session(cli, "qa", "s1",
                      ["remember", "qa", "New A", "--type", "observation"],
                      ["remember", "qa", "New B", "--type", "observation"])

    # 50 + 2 new = 52 > 50: drop 2 of the lowest (0.6: m10, m20, m30, m51, m52); on the tie
    # the oldest go first: m10 and m20
    assert [(p["id"], p["reason"]) for p in out["pruned"]] == [
        ("m20", "over the cap of 50"), ("m10", "over the cap of 50")]
    ids = [m["id"] for m in sidecar(store, "qa")["memories"]]
    assert len(ids) == 50
    assert {"m10", "m20"}.isdisjoint(ids) and {"m30", "m51", "m52"} <= set(ids)
    assert state(store)["agent_sidecars"]["qa"]["memory_count"] == 50


def test_a_new_memory_less_confident_than_fifty_stored_ones_does_not_stay(cli: Cli,
                                                                        store: Path) -> None:
    write_sidecar(store, "qa", [note(n, 0.9) for n in range(1, 51)])

    out = one_session(cli, "qa", "s1", ["remember", "qa", "Guess", "--type", "observation",
                                        "--confidence", "0.5"])

    # 51 > 50 and the new one is the only one at 0.5: it is added, then pruned
    assert [a["id"] for a in out["added"]] == ["m51"]
    assert [p["id"] for p in out["pruned"]] == ["m51"]
    assert len(sidecar(store, "qa")["memories"]) == 50


# -- end: relationships ---------------------------------------------------------------------
def test_relationships_need_two_agreements_in_or_across_sessions(cli: Cli,
                                                                 store: Path) -> None:
    session(cli, "s1", "architect", "qa")
    cli.ok("agent", "relate", "architect", "qa", "--agree", "--session", "s1")
    cli.ok("agent", "relate", "architect", "qa", "--disagree", "--session", "s1")
    cli.ok("agent", "relate", "qa", "architect", "--disagree", "--session", "s1")
    cli.ok("agent", "relate", "qa", "architect", "--disagree", "--session", "s1")
    cli.ok("agent", "relate", "qa", "architect", "--complement", "--session", "s1")
    out = end(cli, "s1")["agents"]

    # architect: 1 agreement, 1 disagreement -> nothing yet; qa: 2 disagreements -> listed,
    # 1 complement -> listed at once
    assert out[0]["relationships"] == []
    assert out[1]["relationships"] == [{"list": "disagrees_with", "agent": "architect"},
                                       {"list": "complements", "agent": "architect"}]
    assert sidecar(store, "qa")["relationships"] == {
        "agrees_with": [], "disagrees_with": ["architect"], "complements": ["architect"]}

    session(cli, "s2", "architect", "qa")
    cli.ok("agent", "relate", "architect", "qa", "--agree", "--session", "s2")
    out = end(cli, "s2")["agents"]

    # counts carry over: 1 agreement in s1 + 1 in s2 = 2 -> listed
    assert out[0]["relationships"] == [{"list": "agrees_with", "agent": "qa"}]
    assert sidecar(store, "architect")["relationship_counts"]["qa"] == {
        "agree": 2, "disagree": 1, "complement": 0}
