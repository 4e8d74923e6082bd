"""Session neighbours (`retrieval.neighbours`): recall also finds the entries written just
before and after its best matches in the same session, which share no word with the query;
the query's own matches keep their places at the top, and --explain says which part came from
where. On unless the setting is false; entries written outside a session are never
neighbours, so a plain word recall over a developer's notes lists exactly the entries
holding the word."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.memory import neighbours, rules
from tests import support
from tests.conftest import Cli, run_loa_mem
from tests.test_recall_fast import through_typer

QUESTION = "why does checkout time out in Brazil"


def switch(store: Path, on: bool) -> None:
    config = store / ".loa.config.yaml"
    text = config.read_text(encoding="utf-8").replace("\n    neighbours: false", "")
    if not on:
        text = text.replace("\n  retrieval:", "\n  retrieval:\n    neighbours: false")
    config.write_text(text, encoding="utf-8")


@pytest.fixture
def turns(cli: Cli) -> dict[str, str]:
    """A conversation kept turn by turn, another session at the same time, and the first
    session again hours later."""
    def say(text: str, session: str, at: str) -> str:
        return support.remember(cli, text, "fact", "--session", session,
                                now=f"2026-02-01T{at}:00Z")
    return {
        "before": say("Stripe webhooks sometimes arrive twice.", "s1", "08:58"),
        "timeout": say("The checkout page times out for customers in Brazil.", "s1", "09:00"),
        "cause": say("Traces show the payment call waits eight seconds on the fraud scorer.",
                     "s1", "09:01"),
        "other": say("Grafana dashboards are provisioned from the observability repository.",
                     "s2", "09:00"),
        "later": say("Refunds above 500 euros need a second approval.", "s1", "03:00"),
    }


def recalled(cli: Cli, *args: str) -> list[dict[str, Any]]:
    return list(cli.ok("recall", *args, "--json").json()["results"])


def test_off_a_question_finds_only_the_turn_sharing_its_words(
        cli: Cli, store: Path, turns: dict[str, str]) -> None:
    switch(store, False)

    assert [r["id"] for r in recalled(cli, QUESTION)] == [turns["timeout"]]


def test_by_default_the_turns_written_next_to_the_match_in_its_session_come_after_it(
        cli: Cli, turns: dict[str, str]) -> None:
    found = [r["id"] for r in recalled(cli, QUESTION)]

    # the turn that explains the timeout shares no word with the question
    assert found[0] == turns["timeout"]
    assert set(found[1:]) == {turns["cause"], turns["before"]}
    # another session at the same minute, and the same session hours away, are not neighbours
    assert turns["other"] not in found and turns["later"] not in found


def test_a_word_query_keeps_the_entry_with_its_word_first(
        cli: Cli, turns: dict[str, str]) -> None:
    for word, entry in (("fraud", "cause"), ("webhooks", "before"), ("checkout", "timeout")):
        assert recalled(cli, word)[0]["id"] == turns[entry]


def test_explain_shows_the_lexical_and_the_neighbour_part(
        cli: Cli, turns: dict[str, str]) -> None:
    parts = {r["id"]: r["explain"] for r in recalled(cli, QUESTION, "--explain")}
    assert parts[turns["timeout"]]["lexical"] == 1.0
    assert parts[turns["cause"]]["lexical"] == 0.0
    assert parts[turns["cause"]]["neighbour"] == 1.0  # written next to the best match
    header = cli.ok("recall", QUESTION, "--explain").stdout.splitlines()[0].split()
    assert {"TEXT", "LEXICAL", "NEIGHBOUR", "RECENCY"} <= set(header)


def test_the_fast_path_and_the_typer_command_agree(store: Path, turns: dict[str, str]) -> None:
    run_loa_mem(store, "recall")  # the index is fresh from here on

    fast = run_loa_mem(store, "recall", QUESTION, "--explain")
    typer = through_typer(store, QUESTION, "--explain")

    assert fast.returncode == 0 and (fast.stdout, fast.stderr) == (typer.stdout, typer.stderr)
    assert turns["cause"] in fast.stdout


def test_a_setting_that_is_not_true_or_false_is_refused(
        cli: Cli, store: Path, turns: dict[str, str]) -> None:
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "\n  retrieval:", "\n  retrieval:\n    neighbours: sometimes"), encoding="utf-8")

    outcome = cli("recall", QUESTION)

    assert outcome.code == 1
    assert "neighbours" in outcome.stderr and "Traceback" not in outcome.stderr


def test_the_session_start_context_ranks_its_query_the_same_way(
        cli: Cli, store: Path, turns: dict[str, str]) -> None:
    switch(store, False)
    assert turns["cause"] not in cli.ok("context", "--query", QUESTION).stdout
    switch(store, True)

    block = cli.ok("context", "--query", QUESTION).stdout

    assert turns["timeout"] in block and turns["cause"] in block
    assert turns["other"] not in block


def test_hybrid_recall_brings_the_turn_written_next_to_its_best_match_by_default(
        cli: Cli, store: Path, tmp_path: Path, turns: dict[str, str]) -> None:
    from tests.semantic_support import build_model
    from tests.test_semantic import configure

    configure(store, model=str(build_model(tmp_path)))

    found = {r["id"]: r["explain"] for r in recalled(cli, QUESTION, "--explain")}

    assert next(iter(found)) == turns["timeout"]
    # the cause shares no word with the question, and the tiny model knows none of its words
    assert found[turns["cause"]] == {**found[turns["cause"]], "lexical": 0.0,
                                     "semantic": 0.0, "neighbour": 1.0}
    assert turns["other"] not in found and turns["later"] not in found

    switch(store, False)
    plain = {r["id"]: r["explain"] for r in recalled(cli, QUESTION, "--explain")}
    assert next(iter(plain)) == turns["timeout"]
    assert turns["cause"] not in plain
    assert all("neighbour" not in parts for parts in plain.values())


def test_notes_written_outside_a_session_are_never_neighbours(cli: Cli) -> None:
    """`remember` without --session or LOA_MEM_SESSION: a developer's notes, one after
    another on any subject, each found by its own words only."""
    support.remember(cli, "Stripe webhooks sometimes arrive twice.", "fact",
                     now="2026-02-01T08:59:00Z")
    timeout = support.remember(cli, "The checkout page times out for customers in Brazil.",
                               "fact", now="2026-02-01T09:00:00Z")
    support.remember(cli, "Traces show the payment call waits on the fraud scorer.", "fact",
                     now="2026-02-01T09:01:00Z")

    assert [r["id"] for r in recalled(cli, QUESTION)] == [timeout]


def test_the_no_session_value_is_the_one_remember_records() -> None:
    assert rules.NO_SESSION in neighbours.NO_SESSIONS


def test_items_captured_without_a_session_are_not_neighbours(cli: Cli) -> None:
    """`capture` records the session `capture` when its source names none: two documents
    captured minutes apart are not one conversation."""
    cli.ok("capture", "learnings", "-", stdin="- Pin the CI image by digest.\n- Run the slow "
           "suite nightly.\n")

    found = [r["content"] for r in recalled(cli, "CI image")]

    assert found == ["Pin the CI image by digest."]


def _scanned(db: Any, sources: list[int], shares: dict[int, float]) -> dict[int, float]:
    """The neighbours as a scan of every entry finds them: for each source (with a session),
    the nearest entry of its session on each side, nearest first by (time, row), within the
    window."""
    rows = db.execute("SELECT rowid, created_ts, json_extract(data, '$.source.session_id') "
                      "FROM entries WHERE retired = 0").fetchall()
    times = {rowid: (ts, name) for rowid, ts, name in rows}
    found: dict[int, float] = {}
    for rowid in sources:
        ts, name = times[rowid]
        if name in rules.NO_SESSIONS:
            continue
        here = (ts, rowid)
        near = sorted((t, r) for r, (t, _) in times.items() if abs(t - ts) <= neighbours.WINDOW)
        for side in (reversed([n for n in near if n < here]), [n for n in near if n > here]):
            hit = next((r for _, r in side if times[r][1] == name), None)
            if hit is not None:
                found[hit] = max(found.get(hit, 0.0), shares[rowid])
    return found


@settings(max_examples=150, deadline=None)
@given(entries=st.lists(st.tuples(st.sampled_from([0.0, 0.0, 60.0, 1800.0, 1801.0, 5000.0]),
                                   st.sampled_from(["s1", "s2", "manual"]), st.booleans()),
                        min_size=1, max_size=40),
       picks=st.lists(st.integers(0, 39), min_size=1, max_size=3, unique=True))
def test_the_neighbours_are_those_a_scan_of_every_entry_finds(
        entries: list[tuple[float, str, bool]], picks: list[int]) -> None:
    """Many entries written at one time (a store filled in one go), sessions interleaved,
    archived ones among them: the nearest entry of the source's session on each side."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE entries(rowid INTEGER PRIMARY KEY, created_ts REAL, data TEXT, "
               "retired INTEGER)")
    db.execute("CREATE INDEX entries_time ON entries(created_ts)")
    db.executemany("INSERT INTO entries VALUES(?, ?, ?, ?)", [
        (n + 1, ts, json.dumps({"source": {"session_id": name}}), int(archived))
        for n, (ts, name, archived) in enumerate(entries)])
    sources = [n + 1 for n in picks if n < len(entries) and not entries[n][2]]
    shares = {rowid: 1.0 / (place + 1) for place, rowid in enumerate(sources)}
    found = neighbours._neighbours(db, ["e.retired = 0"], [], sources, shares)
    assert found == _scanned(db, sources, shares)
