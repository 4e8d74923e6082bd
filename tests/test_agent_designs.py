"""The MDAN protocol's rules that were missing or partial, one test per rule, at the fixed clock
(2026-02-01T10:30:00Z) against real repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.agents import mdan
from loa_mem.core import yamledit, yamlio
from tests import support
from tests.agent_support import AGENTS, STATE, rel, session, sidecar
from tests.conftest import Cli

WINSTON: dict[str, Any] = {
    "agent": "winston", "created": "2026-01-02T09:00:00Z", "last_updated": "2026-01-30T17:00:00Z",
    "sessions_participated": 3,
    "memories": [
        {"type": "decision", "content": "Use event sourcing for orders",
         "source_session": "2026-01-30", "confidence": 1.0},
        {"type": "observation", "content": "Users skim long pages",
         "source_session": "2026-01-12", "confidence": 0.6},
        {"type": "preference", "content": "Prefers diagrams", "source_session": "2026-01-12",
         "confidence": 0.5},
    ],
    "relationships": {"agrees_with": ["mary"], "disagrees_with": [], "complements": ["amelia"]},
    "relationship_counts": {"mary": {"agree": 2}, "amelia": {"complement": 1}},
    "decision_history": [{"date": "2026-01-30", "session": "S-1",
                          "decision": "Use event sourcing for orders", "confidence": 1.0,
                          "memory": None}],
}


def sidecar_file(tmp_path: Path, data: Any, name: str = "winston.sidecar.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


# -- sessions ---------------------------------------------------------------------------------
def test_agent_remember_records_into_the_agents_open_session(cli: Cli, store: Path) -> None:
    session(cli, "S1", "winston")
    commits = support.commit_count(store)
    said = [cli.ok("agent", "remember", "winston", f"Note {n}", "-T", "observation",
                   "--json").json() for n in range(6)]
    # no --session: each went into S1, nothing was committed, the 6th is told it is over 5
    assert [s["session"] for s in said] == ["S1"] * 6
    assert [s["recorded_this_session"] for s in said] == [1, 2, 3, 4, 5, 6]
    assert support.commit_count(store) == commits
    ended = cli.ok("session", "end", "--session", "S1", "--json").json()
    [winston] = ended["agents"]
    assert len(winston["added"]) == 5 and len(winston["dropped"]) == 1
    assert len(sidecar(store, "winston")["memories"]) == 5


def test_agent_remember_in_two_open_sessions_asks_which(cli: Cli, store: Path) -> None:
    session(cli, "S1", "winston")
    session(cli, "S2", "winston")
    before = support.snapshot(store)
    line = support.one_line_error(cli("agent", "remember", "winston", "Note", "-T", "context"))
    assert "winston is in 2 open sessions (S1, S2)" in line and "--session" in line
    assert support.snapshot(store) == before


def test_agent_remember_without_an_open_session_writes_at_once(cli: Cli, store: Path) -> None:
    done = cli.ok("agent", "remember", "winston", "Note", "-T", "context", "--json").json()
    assert (done["session"], done["pending"], done["id"]) == (None, False, "m1")


def test_agent_reinforce_and_relate_record_into_the_agents_open_session(cli: Cli,
                                                                        store: Path) -> None:
    cli.ok("agent", "remember", "winston", "Prefers diagrams", "-T", "preference")
    before = sidecar(store, "winston")["memories"][0]["confidence"]
    session(cli, "S1", "winston")
    commits = support.commit_count(store)
    reinforced = cli.ok("agent", "reinforce", "winston", "m1", "--json").json()
    related = cli.ok("agent", "relate", "winston", "mary", "--agree", "--json").json()

    assert [(s["session"], s["pending"]) for s in (reinforced, related)] == [("S1", True)] * 2
    assert support.commit_count(store) == commits
    cli.ok("session", "end", "--session", "S1")
    after = sidecar(store, "winston")
    assert after["memories"][0]["confidence"] > before
    assert after["relationship_counts"]["mary"]["agree"] == 1


def test_session_start_creates_a_missing_sidecar(cli: Cli, store: Path) -> None:
    commits = support.commit_count(store)
    started = session(cli, "S1", "winston")
    assert started["created_sidecars"] == ["winston"]
    assert support.commit_count(store) == commits + 1
    assert sorted(support.changed_files(store)) == sorted([
        rel("winston"), STATE, "grimoires/loa/memory/events.jsonl"])
    made = sidecar(store, "winston")
    assert (made["agent"], made["sessions_participated"], made["memories"]) == ("winston", 0, [])
    assert "First session for this agent" in started["text"]
    # joining again creates nothing and commits nothing
    again = session(cli, "S1", "winston")
    assert (again["created_sidecars"], again["commit"]) == ([], None)
    assert support.commit_count(store) == commits + 1
    assert cli("validate").code == 0


# -- MDAN's own sidecar format ----------------------------------------------------------------
def test_mdan_import_writes_the_agents_sidecar_with_mdan_confidences(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    done = cli.ok("import", sidecar_file(tmp_path, WINSTON), "--json").json()
    assert (done["agent"], done["path"], done["created_sidecar"], done["memories_added"]) == (
        "winston", rel("winston"), True, 3)
    made = sidecar(store, "winston")
    # 0.6 and 0.5 are MDAN's own observation and inference confidences: kept as they are
    assert [(m["id"], m["confidence"]) for m in made["memories"]] == [
        ("m1", 1.0), ("m2", 0.6), ("m3", 0.5)]
    assert made["relationships"] == WINSTON["relationships"]
    assert made["decision_history"] == WINSTON["decision_history"]
    assert made["sessions_participated"] == 3
    assert support.all_ids(store) == []  # no Loa entries
    state = json.loads((store / STATE).read_text(encoding="utf-8"))["agent_sidecars"]
    assert (state["winston"]["memory_count"], state["winston"]["sessions"]) == (3, 3)
    assert cli("validate").code == 0


def test_mdan_export_gives_back_the_imported_file(cli: Cli, tmp_path: Path) -> None:
    cli.ok("import", sidecar_file(tmp_path, WINSTON))
    back = json.loads(cli.ok("export", "-f", "mdan", "--by-agent", "winston").stdout)
    assert back == WINSTON


def test_mdan_export_requires_an_agent(cli: Cli) -> None:
    line = support.one_line_error(cli("export", "-f", "mdan"))
    assert "--by-agent NAME" in line


def test_mdan_import_refuses_what_is_out_of_format(cli: Cli, store: Path,
                                                   tmp_path: Path) -> None:
    before = support.snapshot(store)
    low = {**WINSTON, "memories": [{"type": "observation", "content": "x", "confidence": 0.4}]}
    line = support.one_line_error(cli("import", sidecar_file(tmp_path, low)))
    assert "memories[0].confidence must be a number from 0.5 to 1, not 0.4" in line
    odd = {**WINSTON, "mood": "happy"}
    line = support.one_line_error(cli("import", sidecar_file(tmp_path, odd)))
    assert "has unknown key 'mood'" in line
    assert support.snapshot(store) == before


def test_mdan_import_into_an_existing_sidecar_adds_what_it_lacks(
        cli: Cli, store: Path, tmp_path: Path) -> None:
    cli.ok("agent", "remember", "winston", "Prefers diagrams", "-T", "preference")
    done = cli.ok("import", sidecar_file(tmp_path, WINSTON), "--json").json()
    assert (done["created_sidecar"], done["memories_added"], done["memories_already_held"]) == (
        False, 2, 1)
    assert [m["id"] for m in sidecar(store, "winston")["memories"]] == ["m1", "m2", "m3"]
    again = cli("import", sidecar_file(tmp_path, WINSTON))
    assert (again.code, "already holds everything" in again.stderr) == (1, True)


names = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                max_size=100).filter(lambda t: t.strip() != "" and "\n" not in t)
stamps = st.sampled_from(["2026-01-30", "2026-01-30T17:00:00Z", "S-20260130T170000Z"])
memories = st.fixed_dictionaries({
    "type": st.sampled_from(["observation", "preference", "context", "decision"]),
    "content": texts, "source_session": stamps,
    "confidence": st.sampled_from([0.5, 0.6, 0.8, 1.0, 0.75])})
decisions = st.fixed_dictionaries({"date": stamps, "decision": texts},
                                  optional={"session": st.none() | names,
                                            "confidence": st.sampled_from([0.0, 0.5, 1.0]),
                                            "memory": st.none() | st.just("m1")})
files = st.fixed_dictionaries({
    "agent": names, "created": stamps, "last_updated": stamps,
    "sessions_participated": st.integers(0, 500),
    "memories": st.lists(memories, max_size=6),
    "relationships": st.fixed_dictionaries({k: st.lists(names, max_size=3, unique=True)
                                            for k in ("agrees_with", "disagrees_with",
                                                      "complements")}),
    "relationship_counts": st.dictionaries(names, st.fixed_dictionaries(
        {}, optional={k: st.integers(0, 50) for k in ("agree", "disagree", "complement")}),
        max_size=3),
    "decision_history": st.lists(decisions, max_size=3)})


@settings(max_examples=60, deadline=None)
@given(files)
def test_mdan_format_round_trips_through_a_stored_sidecar(data: dict[str, Any]) -> None:
    parsed = mdan.parse(json.dumps(data), "x.sidecar.json")
    stored = mdan.to_sidecar(parsed, data["agent"], "2026-02-01T10:30:00Z")
    # through the YAML file the sidecar is stored as, and back
    reloaded = yamlio.load(yamledit.round_trip_dump(stored), rel(data["agent"]))
    assert mdan.from_sidecar(reloaded) == data


def test_agents_dir_is_where_imports_go(cli: Cli, store: Path, tmp_path: Path) -> None:
    cli.ok("import", sidecar_file(tmp_path, {"memories": []}, "amelia.sidecar.json"))
    assert (store / AGENTS / "amelia.yaml").exists()
