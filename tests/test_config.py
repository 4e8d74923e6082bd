"""`.loa.config.yaml` (spec section 3): Loa's memory_schema drives every rule; an unknown key,
a wrong type or a bad value is an error that names the key, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import support
from tests.conftest import Cli, git

CONFIG = ".loa.config.yaml"


def _edit(store: Path, old: str, new: str) -> None:
    path = store / CONFIG
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.mark.parametrize(("old", "new", "named"), [
    ("max_per_query: 10", "max_per_querry: 10", "memory_schema.retrieval.max_per_querry"),
    ("max_per_query: 10", "max_per_query: ten", "memory_schema.retrieval.max_per_query"),
    ("confidence_required: 0.7,", "confidence_required: 1.5,",
     "memory_schema.categories.learning.confidence_required"),
    ("ttl: 90d,", "ttl: 90 days,", "memory_schema.categories.learning.ttl"),
    ("recency_weight: 0.2", "recency_weight: -1", "memory_schema.retrieval.recency_weight"),
    ("warn_before_archive_days: 7", "warn_before_archive_days: -3",
     "memory_schema.lifecycle.warn_before_archive_days"),
    ("memory_schema:", "memory_schemas:", "memory_schemas"),
    ("enabled: true", "enabled: yes please", "memory_schema.enabled"),
    ("storage_file: facts.yaml", "storage_file: decisions.yaml", "memory_schema.categories"),
])
def test_a_bad_config_is_an_error_naming_the_key(cli: Cli, store: Path, old: str, new: str,
                                                 named: str) -> None:
    _edit(store, old, new)
    before, commits = support.snapshot(store), support.commit_count(store)
    for args in (("remember", "A fact.", "-c", "fact"), ("recall",), ("status",)):
        outcome = cli(*args)
        assert outcome.code == 1, args
        assert len(outcome.stderr.strip().splitlines()) == 1
        assert f"{CONFIG}: {named}" in outcome.stderr
    assert support.snapshot(store) == before
    assert support.commit_count(store) == commits


def test_a_config_that_does_not_parse_names_line_and_column(cli: Cli, store: Path) -> None:
    (store / CONFIG).write_text("memory_schema:\n  retrieval: {max_per_query: 3\n",
                                encoding="utf-8")
    outcome = cli("remember", "A fact.", "-c", "fact")

    assert outcome.code == 1
    assert f"{CONFIG}:3:1" in outcome.stderr


def test_a_config_that_is_not_a_mapping(cli: Cli, store: Path) -> None:
    (store / CONFIG).write_text("- a\n", encoding="utf-8")
    outcome = cli("status")

    assert outcome.code == 1
    assert "mapping" in outcome.stderr


def test_category_rules_come_from_the_config(cli: Cli, store: Path) -> None:
    _edit(store, "learning:   {ttl: 90d,       confidence_required: 0.7,",
          "learning:   {ttl: 10d,       confidence_required: 0.75,")
    memory_id = support.remember(cli, "A learning with local rules.", "learning")
    written = support.entry(store, memory_id)

    assert (written["ttl"], written["expires_at"]) == ("10d", "2026-02-11T10:30:00Z")
    assert written["confidence"] == 0.8
    outcome = cli("remember", "Under the local floor.", "-c", "learning", "--confidence", "0.74")
    assert outcome.code == 1
    assert "floor of 0.75" in outcome.stderr


def test_a_partial_config_takes_the_defaults_for_the_rest(cli: Cli, store: Path) -> None:
    (store / CONFIG).write_text("# only what differs\nmemory_schema:\n"
                                "  retrieval: {min_confidence: 0.85}\n", encoding="utf-8")
    sure = support.remember(cli, "A sure fact.", "fact", "--confidence", "0.9")
    support.remember(cli, "A plain fact.", "fact")

    assert [r["id"] for r in cli.ok("recall", "--json").json()["results"]] == [sure]
    assert support.entry(store, sure)["ttl"] == "permanent"


def test_without_a_config_file_the_defaults_apply(cli: Cli, store: Path) -> None:
    (store / CONFIG).unlink()
    memory_id = support.remember(cli, "An error and its fix.", "error")

    assert support.entry(store, memory_id)["expires_at"] == "2026-03-03T10:30:00Z"


def test_storage_paths_come_from_the_config(repo: Path) -> None:
    (repo / CONFIG).write_text(
        "memory_schema:\n  storage_dir: memory\n"
        "  categories:\n    fact: {storage_file: knowledge.yaml}\n"
        "  lifecycle: {archive_dir: memory/old}\n", encoding="utf-8")
    cli = Cli(repo)
    created = cli.ok("init", "--json").json()["created"]

    assert "memory/knowledge.yaml" in created
    assert "memory/decisions.yaml" in created
    memory_id = support.remember(cli, "Facts go to the knowledge file.", "fact")
    assert memory_id in (repo / "memory" / "knowledge.yaml").read_text(encoding="utf-8")
    cli.ok("archive", memory_id)
    assert memory_id in (repo / "memory" / "old" / "knowledge.yaml").read_text(encoding="utf-8")
    assert git(repo, "status", "--porcelain", "--", "memory") == ""
    cli.ok("validate")


def test_recency_weight_from_the_config(cli: Cli, store: Path) -> None:
    _edit(store, "recency_weight: 0.2", "recency_weight: 0")
    support.remember(cli, "An old fact.", "fact", "--confidence", "0.9", now="2025-02-01T00:00:00Z")
    [hit] = cli.ok("recall", "--json").json()["results"]

    assert hit["score"] == pytest.approx(0.9)


def test_a_changed_config_takes_effect_at_once(cli: Cli, store: Path) -> None:
    for n in range(5):
        support.remember(cli, f"Fact number {n}.", "fact")
    assert len(cli.ok("recall", "--json").json()["results"]) == 5
    _edit(store, "max_per_query: 10", "max_per_query: 3")

    assert len(cli.ok("recall", "--json").json()["results"]) == 3
    _edit(store, "max_per_query: 3", "max_per_query: 4")  # same size, new contents
    assert len(cli.ok("recall", "--json").json()["results"]) == 4
