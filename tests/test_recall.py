"""Recall (spec section 4): candidates, filters, ranking by relevance, recency, confidence and
tier with --explain, ties by id, and read-only unless --track.

Without a query, score = 0.8 * confidence + 0.2 * recency + tier bonus (recency_weight 0.2,
recency halves every 30 days, bonus +0.1 high / -0.1 review / -0.2 ineffective)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loa_mem.memory import rules as model
from tests import support
from tests.conftest import Cli

DAYS_30_AGO, DAYS_60_AGO = "2026-01-02T10:30:00Z", "2025-12-03T10:30:00Z"


def ids(cli: Cli, *args: str, **kwargs: Any) -> list[str]:
    return [r["id"] for r in cli.ok("recall", *args, "--json", **kwargs).json()["results"]]


def results(cli: Cli, *args: str) -> list[dict[str, Any]]:
    return list(cli.ok("recall", *args, "--json").json()["results"])


def test_without_a_query_recency_and_confidence_rank(cli: Cli) -> None:
    old = support.remember(cli, "Old fact.", "fact", now=DAYS_30_AGO)
    new = support.remember(cli, "New fact.", "fact")
    sure = support.remember(cli, "A sure decision.", "decision", "--confidence", "0.95",
                            now=DAYS_60_AGO)
    hits = {r["id"]: r for r in results(cli, "--explain")}

    assert list(hits) == [new, sure, old]
    assert hits[new]["score"] == pytest.approx(0.84)   # .8*.8 + .2*1
    assert hits[sure]["score"] == pytest.approx(0.81)  # .8*.95 + .2*.25
    assert hits[old]["score"] == pytest.approx(0.74)   # .8*.8 + .2*.5
    assert hits[old]["explain"] == {"confidence": 0.8, "recency": 0.5, "tier": 0.0}
    assert hits[sure]["explain"] == {"confidence": 0.95, "recency": 0.25, "tier": 0.0}


def test_the_tier_moves_an_entry_and_ties_break_by_id(cli: Cli) -> None:
    old = support.remember(cli, "Old fact.", "fact", now=DAYS_30_AGO)
    new = support.remember(cli, "New fact.", "fact")
    cli.ok("feedback", old, "--success")  # high tier: .74 + .1 = .84, the same as `new`
    hits = results(cli, "--explain")

    assert [h["id"] for h in hits] == [old, new]  # the id of 2026-01-02 sorts first
    assert sorted([old, new], key=model.id_order) == [old, new]
    assert hits[0]["score"] == hits[1]["score"] == pytest.approx(0.84)
    assert hits[0]["explain"]["tier"] == 0.1
    assert hits[0]["tier"] == "high"


@pytest.mark.parametrize(("steps", "bonus"), [("f", -0.1), ("", 0.0), ("s", 0.1)])
def test_tier_bonus(cli: Cli, steps: str, bonus: float) -> None:
    memory_id = support.remember(cli, "A fact with a track record.", "fact")
    for step in steps:
        cli.ok("feedback", memory_id, "--success" if step == "s" else "--failure")
    [hit] = results(cli, "--explain")

    assert hit["explain"]["tier"] == bonus
    assert hit["score"] == pytest.approx(0.84 + bonus)


def test_an_ineffective_entry_sinks(cli: Cli) -> None:
    weak = support.remember(cli, "Weak learning.", "learning")
    for _ in range(3):
        cli.ok("recall", "weak", "--track")
    cli.ok("feedback", weak, "--failure")  # 0 of 3: ineffective
    other = support.remember(cli, "Other learning.", "learning", now=DAYS_60_AGO)
    hits = {h["id"]: h for h in results(cli, "--explain")}

    assert list(hits) == [other, weak]
    assert hits[weak]["explain"]["tier"] == -0.2
    assert hits[weak]["score"] == pytest.approx(0.64)  # .8*.8 + .2*1 - .2


def test_identical_entries_come_in_id_order_every_time(cli: Cli) -> None:
    made = [support.remember(cli, f"Fact {name}.", "fact") for name in ("one", "two", "three")]
    first = cli.ok("recall")
    second = cli.ok("recall")

    assert ids(cli) == sorted(made, key=model.id_order)
    assert first.stdout == second.stdout


def test_relevance_ranks_matches_of_content_summary_and_tags(cli: Cli) -> None:
    strong = support.remember(cli, "Postgres vacuum: run postgres VACUUM weekly on postgres.",
                              "fact")
    weak = support.remember(cli, "The analytics database is Postgres; reports run nightly "
                            "and the dashboards refresh every hour.", "fact")
    by_tag = support.remember(cli, "Put pgbouncer in front of the primary.", "fact",
                              "-t", "postgres")
    by_summary = support.remember(cli, "Pool connections in production.", "fact",
                                  "--summary", "Postgres pooling")
    support.remember(cli, "Redis caches the sessions.", "fact")
    hits = {h["id"]: h for h in results(cli, "postgres", "--explain")}

    assert set(hits) == {strong, weak, by_tag, by_summary}
    assert next(iter(hits)) == strong
    assert hits[strong]["explain"]["text"] == 1.0
    assert hits[weak]["explain"]["text"] < 1.0
    for hit in hits.values():
        parts = hit["explain"]
        expected = 0.8 * (0.7 * parts["text"] + 0.3 * parts["confidence"]) + 0.2 * parts[
            "recency"] + parts["tier"]
        assert hit["score"] == pytest.approx(expected, abs=1e-3)


def test_a_query_word_matches_as_a_prefix(cli: Cli) -> None:
    memory_id = support.remember(cli, "We chose PostgreSQL for the main database.", "decision")

    assert ids(cli, "postgres") == [memory_id]
    assert ids(cli, "mysql") == []
    assert ids(cli, "!!!") == []


def test_limit_and_the_configured_maximum(cli: Cli, store: Path) -> None:
    made = [support.remember(cli, f"Fact number {n}.", "fact") for n in range(12)]
    made.sort(key=model.id_order)  # they all score the same, so they come in id order

    assert ids(cli) == made[:10]  # retrieval.max_per_query
    assert ids(cli, "--limit", "3") == made[:3]
    assert ids(cli, "--limit", "50") == made
    config = store / ".loa.config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "max_per_query: 10", "max_per_query: 4"), encoding="utf-8")
    assert ids(cli) == made[:4]


def test_category_filter(cli: Cli) -> None:
    fact = support.remember(cli, "Builds use Bazel.", "fact")
    decision = support.remember(cli, "Builds moved to Bazel.", "decision")
    learning = support.remember(cli, "Bazel caches need a key.", "learning")

    assert ids(cli, "bazel", "-c", "fact") == [fact]
    assert sorted(ids(cli, "bazel", "-c", "decision", "-c", "learning")) == sorted(
        [decision, learning])
    outcome = cli("recall", "-c", "note")
    assert outcome.code == 1
    assert "category" in outcome.stderr


def test_tag_filter_matches_whole_tags_and_all_of_them(cli: Cli) -> None:
    both = support.remember(cli, "Index the foreign keys.", "fact", "-t", "db", "-t", "perf")
    only_db = support.remember(cli, "Back up nightly.", "fact", "-t", "db")
    support.remember(cli, "Migrations run in CI.", "fact", "-t", "db-migrations")

    assert ids(cli, "-t", "db") == sorted([both, only_db], key=model.id_order)  # a tie
    assert ids(cli, "-t", "db", "-t", "perf") == [both]
    assert ids(cli, "-t", "d") == []


def test_min_confidence(cli: Cli) -> None:
    weak = support.remember(cli, "Prefers dark mode.", "preference", "--confidence", "0.55")
    sure = support.remember(cli, "Prefers tabs.", "preference", "--confidence", "0.95")

    assert ids(cli) == [sure]  # retrieval.min_confidence is 0.6
    assert ids(cli, "--min-confidence", "0.5") == [sure, weak]
    assert ids(cli, "--min-confidence", "0.96") == []


def test_include_flags_bring_back_each_kind_of_retired_entry(cli: Cli) -> None:
    active = support.remember(cli, "Deploys go through Argo.", "fact")
    old = support.remember(cli, "Deploys go through Jenkins.", "fact")
    newer = cli.ok("supersede", old, "Deploys went through Jenkins until 2025.",
                   "--json").json()["id"]
    archived = support.remember(cli, "Deploys need a ticket.", "fact")
    cli.ok("archive", archived)
    expired = support.remember(cli, "Deploys failed on the 3rd: disk full.", "error",
                               now=DAYS_60_AGO)

    assert sorted(ids(cli, "deploys")) == sorted([active, newer])
    assert sorted(ids(cli, "deploys", "--include-superseded")) == sorted([active, newer, old])
    assert sorted(ids(cli, "deploys", "--include-archived")) == sorted([active, newer, archived])
    assert sorted(ids(cli, "deploys", "--include-expired")) == sorted([active, newer, expired])


def test_recall_is_read_only(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Deploys go through Argo.", "fact")
    before, commits = support.snapshot(store), support.commit_count(store)
    for args in (("recall",), ("recall", "argo", "--explain"), ("recall", "--json"),
                 ("show", memory_id), ("status",), ("history", memory_id), ("validate",)):
        cli.ok(*args)

    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits
    assert support.porcelain(store) == ""


def test_track_without_commit_leaves_the_change_pending(cli: Cli, store: Path) -> None:
    memory_id = support.remember(cli, "Deploys go through Argo.", "fact")
    commits = support.commit_count(store)
    data = cli.ok("recall", "argo", "--track", "--no-commit", "--json").json()

    assert data["tracked"] is True
    assert data["commit"] is None
    assert support.commit_count(store) == commits
    assert support.entry(store, memory_id)["effectiveness"]["applications"] == 1
    assert sorted(cli.ok("status", "--json").json()["pending"]) == [
        f"{support.MEMORY}/events.jsonl", f"{support.MEMORY}/facts.yaml"]


def test_explain_in_plain_text(cli: Cli) -> None:
    support.remember(cli, "Deploys go through Argo.", "fact")
    out = cli.ok("recall", "argo", "--explain").stdout

    header = out.splitlines()[0].split()
    assert header[:5] == ["ID", "CATEGORY", "SCORE", "CONFIDENCE", "SUMMARY"]
    assert {"TEXT", "RECENCY", "TIER"} <= set(header)
    assert "\x1b[" not in out  # no colour when not on a terminal
