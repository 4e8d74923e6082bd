"""`loa-mem agent list | show | remember | reinforce | relate` outside a session (spec section 8,
the MDAN memory protocol): each change is one commit of the sidecar, the state index and the
events log. Expected numbers are worked out beside each assertion; the clock is the conftest's
LOA_MEM_NOW (T0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.agent_support import (
    AGENTS,
    EVENTS,
    STATE,
    T0,
    commits,
    memory,
    note,
    refused,
    rel,
    sidecar,
    state,
    write_sidecar,
)
from tests.conftest import Cli


# -- remember -------------------------------------------------------------------------------
def test_remember_creates_the_sidecar_in_one_commit(cli: Cli, store: Path) -> None:
    before = commits(store)
    out = cli.ok("agent", "remember", "architect", "Prefers REST over GraphQL", "--type",
                 "preference", "--json").json()

    assert out == {"action": "remember", "agent": "architect", "session": None,
                   "pending": False, "type": "preference", "content": "Prefers REST over GraphQL",
                   "confidence": 0.8, "created_sidecar": True, "id": "m1", "created": True,
                   "pruned": [], "commit": support.head(store)}
    assert commits(store) == before + 1
    assert support.changed_files(store) == sorted([rel("architect"), STATE, EVENTS])
    assert "loa-mem agent: architect remembers m1 (preference)" in support.message(store)
    data = sidecar(store, "architect")
    assert data["memories"] == [{"id": "m1", "type": "preference",
                                 "content": "Prefers REST over GraphQL", "confidence": 0.8,
                                 "source_session": T0, "session": None, "created": T0,
                                 "unreinforced_sessions": 0}]
    assert (data["agent"], data["sessions_participated"], data["last_updated"]) == (
        "architect", 0, T0)
    assert state(store)["agent_sidecars"]["architect"] == {
        "path": rel("architect"), "last_updated": T0, "memory_count": 1, "sessions": 0}
    assert support.porcelain(store) == ""


@pytest.mark.parametrize(("kind", "expected"), [
    ("decision", 1.0), ("context", 0.8), ("preference", 0.8), ("observation", 0.6)])
def test_default_confidence_follows_the_protocols_scale(cli: Cli, kind: str,
                                                        expected: float) -> None:
    out = cli.ok("agent", "remember", "qa", "Something seen", "--type", kind, "--json").json()

    assert out["confidence"] == expected


def test_the_limits_themselves_are_accepted(cli: Cli, store: Path) -> None:
    cli.ok("agent", "remember", "qa", "x" * 100, "--type", "context", "--confidence", "0.5")
    cli.ok("agent", "remember", "qa", "  two\n  lines ", "--type", "context", "--confidence",
           "1.0")

    assert [(m["content"], m["confidence"]) for m in sidecar(store, "qa")["memories"]] == [
        ("x" * 100, 0.5), ("two lines", 1.0)]


def test_remembering_the_same_thing_again_writes_nothing(cli: Cli, store: Path) -> None:
    cli.ok("agent", "remember", "qa", "Flaky CI on Mondays", "--type", "observation")
    before = commits(store)

    out = cli.ok("agent", "remember", "qa", "flaky  ci on mondays", "--type", "observation",
                 "--json").json()

    assert (out["id"], out["created"], out["commit"]) == ("m1", False, None)
    assert commits(store) == before
    assert len(sidecar(store, "qa")["memories"]) == 1


def test_a_decision_goes_into_the_decision_history(cli: Cli, store: Path) -> None:
    cli.ok("agent", "remember", "pm", "Ship the CLI before the GUI", "--type", "decision")

    assert sidecar(store, "pm")["decision_history"] == [
        {"date": T0, "session": None, "decision": "Ship the CLI before the GUI",
         "confidence": 1.0, "memory": "m1"}]


def test_ids_are_never_reused_after_a_prune(cli: Cli, store: Path) -> None:
    write_sidecar(store, "qa", [note(n, 0.9) for n in range(1, 51)])
    # 50 stored at 0.9 + 1 new at 0.5 = 51 > 50: the new one is the lowest and goes at once
    out = cli.ok("agent", "remember", "qa", "Guess", "--type", "observation", "--confidence",
                 "0.5", "--json").json()
    assert (out["id"], [p["id"] for p in out["pruned"]]) == ("m51", ["m51"])
    out = cli.ok("agent", "remember", "qa", "Known", "--type", "context", "--json").json()
    # memory_seq is 51 although m51 is gone: the next is m52, not m51 again; 51 > 50 and all
    # are at 0.9 but the new 0.8: it goes too
    assert (out["id"], [p["id"] for p in out["pruned"]]) == ("m52", ["m52"])
    assert sidecar(store, "qa")["memory_seq"] == 52
    shown = cli.ok("agent", "remember", "qa", "Known too", "--type", "context").stdout
    assert shown == "qa: remembered m53 [context] (0.8)\npruned m53 (0.8): over the cap of 50\n"


LONG = "y" * 101


@pytest.mark.parametrize("args", [
    ["qa", LONG, "--type", "context"],
    ["qa", "", "--type", "context"],
    ["qa", "  \n ", "--type", "context"],
    ["qa", "ok", "--type", "context", "--confidence", "0.4"],
    ["qa", "ok", "--type", "context", "--confidence", "1.1"],
    ["qa", "ok", "--type", "fact"],
    ["../x", "ok", "--type", "context"],
    ["a/b", "ok", "--type", "context"],
    [".hidden", "ok", "--type", "context"],
    ["qa", "key AKIAQ7ZK2M4N6P8R3T5V", "--type", "context"],
], ids=["101-chars", "empty", "blank", "conf-0.4", "conf-1.1", "bad-type", "dotdot", "slash",
        "dotfile", "secret"])
def test_remember_refusals_write_nothing(cli: Cli, store: Path, args: list[str]) -> None:
    cli.ok("agent", "remember", "qa", "Existing memory", "--type", "context")

    message = refused(cli, "agent", "remember", *args)

    assert message.startswith("loa-mem: ")
    assert "AKIA" not in message
    assert not (store / AGENTS / "x.yaml").exists()
    assert not (store / "grimoires/loa/x.yaml").exists()


def test_refusal_messages_say_what_is_wrong(cli: Cli) -> None:
    assert "101 characters" in refused(cli, "agent", "remember", "qa", LONG, "--type",
                                       "context")
    assert "outside 0.5-1" in refused(cli, "agent", "remember", "qa", "ok", "--type",
                                      "context", "--confidence", "0.4")
    assert "observation, preference, context, decision" in refused(
        cli, "agent", "remember", "qa", "ok", "--type", "fact")
    assert "the agent name is not allowed" in refused(cli, "agent", "show", "../x")


# -- reinforce ------------------------------------------------------------------------------
def test_reinforce_adds_a_tenth_and_restarts_the_decay_count(cli: Cli, store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.7, unreinforced_sessions=3)])

    out = cli.ok("agent", "reinforce", "qa", "m1", "--json").json()

    # 0.7 + 0.1 = 0.8 (in floats 0.7999999999999999: stored rounded to 2 places)
    assert out == {"action": "reinforce", "agent": "qa", "session": None, "pending": False,
                   "id": "m1", "confidence_before": 0.7, "confidence": 0.8,
                   "commit": support.head(store)}
    after = memory(store, "qa", "m1")
    assert after is not None
    assert (after["confidence"], after["unreinforced_sessions"], after["last_reinforced"]) == (
        0.8, 0, T0)
    assert support.changed_files(store) == sorted([rel("qa"), STATE, EVENTS])


@pytest.mark.parametrize(("start", "expected"), [(0.95, 1.0), (1.0, 1.0), (0.9, 1.0)])
def test_reinforce_stops_at_one(cli: Cli, store: Path, start: float, expected: float) -> None:
    write_sidecar(store, "qa", [note(1, start)])

    out = cli.ok("agent", "reinforce", "qa", "m1", "--json").json()

    # min(1.0, start + 0.1): 0.95 -> 1.0, 1.0 -> 1.0, 0.9 -> 1.0 (not 0.9999999999999999)
    assert out["confidence"] == expected


def test_reinforce_refusals(cli: Cli, store: Path) -> None:
    write_sidecar(store, "qa", [note(1, 0.6)])

    assert "qa has no memory m9" in refused(cli, "agent", "reinforce", "qa", "m9")
    assert "no such agent (no sidecar" in refused(cli, "agent", "reinforce", "ghost", "m1")
    refused(cli, "agent", "reinforce", "../qa", "m1")


# -- relate ---------------------------------------------------------------------------------
def relate(cli: Cli, how: str, agent: str = "architect", other: str = "qa") -> dict[str, object]:
    out: dict[str, object] = cli.ok("agent", "relate", agent, other, f"--{how}",
                                    "--json").json()
    return out


def relationships(root: Path, agent: str = "architect") -> dict[str, list[str]]:
    found: dict[str, list[str]] = sidecar(root, agent)["relationships"]
    return found


def test_one_agreement_is_counted_but_not_listed(cli: Cli, store: Path) -> None:
    out = relate(cli, "agree")

    assert out == {"action": "relate", "agent": "architect", "session": None, "pending": False,
                   "other": "qa", "relation": "agree", "count": 1, "listed": None,
                   "commit": support.head(store)}
    assert relationships(store) == {"agrees_with": [], "disagrees_with": [], "complements": []}
    assert sidecar(store, "architect")["relationship_counts"] == {
        "qa": {"agree": 1, "disagree": 0, "complement": 0}}


@pytest.mark.parametrize(("how", "listed"), [("agree", "agrees_with"),
                                             ("disagree", "disagrees_with")])
def test_the_second_agreement_or_disagreement_lists_the_other(cli: Cli, store: Path, how: str,
                                                              listed: str) -> None:
    relate(cli, how)
    out = relate(cli, how)
    third = relate(cli, how)

    assert (out["count"], out["listed"]) == (2, listed)
    assert (third["count"], third["listed"]) == (3, None)  # listed once, not again
    assert relationships(store)[listed] == ["qa"]


def test_a_complement_is_listed_at_once_on_the_agent_that_records_it(cli: Cli,
                                                                     store: Path) -> None:
    out = relate(cli, "complement")

    assert (out["count"], out["listed"]) == (1, "complements")
    assert relationships(store)["complements"] == ["qa"]
    assert not (store / rel("qa")).exists()  # A's view of B: B's sidecar is not written


def test_agree_then_disagree_counts_each_on_its_own(cli: Cli, store: Path) -> None:
    relate(cli, "agree")
    relate(cli, "disagree")
    # 1 agreement + 1 disagreement: neither reaches 2, and they do not cancel or add up
    assert relationships(store) == {"agrees_with": [], "disagrees_with": [], "complements": []}
    relate(cli, "agree")
    relate(cli, "disagree")
    # 2 + 2: both are true of this pair, so qa is in both lists (counts are never reset)
    assert relationships(store) == {"agrees_with": ["qa"], "disagrees_with": ["qa"],
                                    "complements": []}
    assert sidecar(store, "architect")["relationship_counts"]["qa"] == {
        "agree": 2, "disagree": 2, "complement": 0}


@pytest.mark.parametrize("args", [
    ["architect", "architect", "--agree"],
    ["architect", "qa"],
    ["architect", "qa", "--agree", "--disagree"],
    ["architect", "../qa", "--agree"],
], ids=["self", "no-flag", "two-flags", "unsafe-other"])
def test_relate_refusals(cli: Cli, store: Path, args: list[str]) -> None:
    message = refused(cli, "agent", "relate", *args)

    if args[1] == "architect":
        assert "architect cannot relate to itself" in message


# -- list and show --------------------------------------------------------------------------
def test_list_and_show(cli: Cli, store: Path) -> None:
    assert cli.ok("agent", "list", "--json").json() == {"agents": []}
    assert "no agents yet" in cli.ok("agent", "list").stdout
    cli.ok("agent", "remember", "qa", "Flaky CI on Mondays", "--type", "observation")
    relate(cli, "complement", "qa", "architect")

    assert cli.ok("agent", "list", "--json").json() == {"agents": [
        {"agent": "qa", "sessions": 0, "memories": 1, "last_updated": T0,
         "relationships": {"agrees_with": [], "disagrees_with": [], "complements": ["architect"]},
         "path": rel("qa")}]}
    shown = cli.ok("agent", "show", "qa", "--json").json()
    assert (shown["agent"], shown["path"]) == ("qa", rel("qa"))
    assert shown["sidecar"] == sidecar(store, "qa")
    text = cli.ok("agent", "show", "qa").stdout
    assert "complements: architect" in text
    assert "m1" in text and "Flaky CI on Mondays" in text


def test_show_of_an_unknown_agent(cli: Cli) -> None:
    assert "no such agent (no sidecar" in refused(cli, "agent", "show", "ghost")


def test_relate_says_in_words_what_was_counted(cli: Cli, store: Path) -> None:
    said = [cli.ok("agent", "relate", "architect", "qa", f"--{how}").stdout.strip()
            for how in ("agree", "disagree", "complement")]

    assert said == ["architect: agreed with qa counted (1)",
                    "architect: disagreed with qa counted (1)",
                    "architect: complemented qa counted (1); now in complements"]
