"""Recall by meaning: the semantic and hybrid modes over a tiny model the test builds, the
vectors following the files, offline behaviour, and the lexical defaults (stop words)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import support
from tests.conftest import Cli
from tests.semantic_support import build_model
from tests.terminal_support import on_terminal_with_errors

POSTGRES = "Use PostgreSQL for the database layer: JSONB support."
FLAKY = "Flaky pytest suite in CI came from a mocked clock."
OFFICE = "The team is in the office on Monday."


def configure(root: Path, **retrieval: Any) -> None:
    config = root / ".loa.config.yaml"
    text = config.read_text(encoding="utf-8")
    extra = "".join(f"\n    {k}: {json.dumps(v)}" for k, v in retrieval.items())
    assert "\n  retrieval:" in text
    config.write_text(text.replace("\n  retrieval:", "\n  retrieval:" + extra), encoding="utf-8")


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    return build_model(tmp_path)


@pytest.fixture
def semantic_cli(cli: Cli, store: Path, tiny_model: Path) -> Cli:
    configure(store, model=str(tiny_model))
    return cli


def ids(cli: Cli, *args: str) -> list[str]:
    return [r["id"] for r in cli.ok("recall", *args, "--json").json()["results"]]


def test_a_paraphrase_sharing_no_word_is_found_by_meaning_only(semantic_cli: Cli) -> None:
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    support.remember(semantic_cli, FLAKY, "learning")

    assert ids(semantic_cli, "relational store", "--mode", "lexical") == []
    assert ids(semantic_cli, "relational store", "--mode", "semantic")[0] == postgres
    assert ids(semantic_cli, "relational store")[0] == postgres  # hybrid by default


def test_explain_shows_the_lexical_and_semantic_parts_of_hybrid(semantic_cli: Cli) -> None:
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    flaky = support.remember(semantic_cli, FLAKY, "learning")
    results = semantic_cli.ok("recall", "postgresql tests", "--explain", "--json").json()[
        "results"]
    parts = {r["id"]: r["explain"] for r in results}

    assert set(parts) == {postgres, flaky}
    assert parts[postgres]["lexical"] == 1.0 and parts[postgres]["semantic"] > 0.3
    assert parts[flaky]["semantic"] > 0.3
    table = semantic_cli.ok("recall", "postgresql tests", "--explain").stdout
    assert "LEXICAL" in table.upper() and "SEMANTIC" in table.upper()


def cosine(cli: Cli, query: str, memory_id: str) -> float:
    results = cli.ok("recall", query, "--mode", "semantic", "--explain", "--json").json()
    found = {r["id"]: r["explain"].get("semantic", 0.0) for r in results["results"]}
    return float(found.get(memory_id, 0.0))


def test_vectors_follow_new_entries_hand_edits_and_a_deleted_index(semantic_cli: Cli,
                                                                   store: Path) -> None:
    assert ids(semantic_cli, "relational store") == []
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    assert cosine(semantic_cli, "relational store", postgres) > 0.8

    path = support.grimoire(store, "decision")
    path.write_text(path.read_text(encoding="utf-8").replace(POSTGRES, "Ship every release "
                                                             "to production on Monday."),
                    encoding="utf-8")
    assert cosine(semantic_cli, "relational store", postgres) < 0.3
    assert cosine(semantic_cli, "kubernetes rollout", postgres) > 0.8

    store.joinpath(".git", "loa-mem", "index.sqlite3").unlink()
    assert cosine(semantic_cli, "kubernetes rollout", postgres) > 0.8


def test_the_encoder_matches_model2vec(tiny_model: Path) -> None:
    from model2vec import StaticModel

    from loa_mem.memory.semantic import model

    texts = [POSTGRES, "nothing known here", "", "relational store " * 400]
    ours = model.load(str(tiny_model), None).encode(texts)
    theirs = StaticModel.from_pretrained(tiny_model).encode(texts, normalize=True)
    assert ours.shape == theirs.shape
    assert float(abs(ours - theirs).max()) < 1e-5


def test_dimensions_cut_the_vectors(semantic_cli: Cli, store: Path, tiny_model: Path) -> None:
    configure(store, dimensions=8)
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    assert ids(semantic_cli, "relational store", "--mode", "semantic") == [postgres]

    from loa_mem.memory.semantic import model

    assert model.load(str(tiny_model), 8).encode(["sql"]).shape == (1, 8)


def test_offline_without_the_model_a_named_mode_fails_and_auto_stays_lexical(cli: Cli) -> None:
    postgres = support.remember(cli, POSTGRES, "decision", "--confidence", "0.95")

    failed = cli("recall", "database", "--mode", "hybrid")
    line = support.one_line_error(failed)
    assert "minishlab/potion-base-8M" in line and "HF_HUB_OFFLINE" in line
    assert "--mode lexical" in line

    found = cli.ok("recall", "database", "--json")
    assert [r["id"] for r in found.json()["results"]] == [postgres]
    assert found.stderr == ""  # auto mode never fetches, and says nothing until asked


def test_without_the_extra_recall_is_lexical_and_a_named_mode_says_what_to_install(
        cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    postgres = support.remember(cli, POSTGRES, "decision", "--confidence", "0.95")
    monkeypatch.setitem(sys.modules, "model2vec", None)

    found = cli.ok("recall", "database", "--json")
    assert [r["id"] for r in found.json()["results"]] == [postgres]
    assert found.stderr == ""
    line = support.one_line_error(cli("recall", "database", "--mode", "semantic"))
    assert "pip install 'loa-mem[semantic]'" in line


def test_an_unknown_mode_is_refused(cli: Cli, store: Path) -> None:
    assert "lexical, semantic or hybrid" in support.one_line_error(
        cli("recall", "x", "--mode", "fuzzy"))
    configure(store, mode="fuzzy")
    assert "retrieval" in support.one_line_error(cli("recall", "x"))


def test_context_query_ranks_by_meaning_too(semantic_cli: Cli) -> None:
    support.remember(semantic_cli, FLAKY, "learning")
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    out = semantic_cli.ok("context", "--query", "relational store", "--format", "json").json()
    found = [m["id"] for m in out["memories"]] if "memories" in out else json.dumps(out)
    assert postgres in found


def test_stop_words_do_not_match(cli: Cli) -> None:
    office = support.remember(cli, OFFICE, "fact")
    flaky = support.remember(cli, FLAKY, "learning")

    assert ids(cli, "what is the flaky suite", "--mode", "lexical") == [flaky]
    assert ids(cli, "the", "--mode", "lexical") == [office]  # only stop words: kept


def test_a_query_is_embedded_without_its_stop_words(semantic_cli: Cli) -> None:
    postgres = support.remember(semantic_cli, POSTGRES, "decision", "--confidence", "0.95")
    plain = cosine(semantic_cli, "relational store", postgres)
    assert cosine(semantic_cli, "which is the relational store", postgres) == plain

    from loa_mem.memory.semantic.fusion import content_words

    assert content_words("What is the relational store?") == "relational store?"
    assert content_words("what is it") == "what is it"  # only stop words: kept


def test_hybrid_keeps_the_entry_holding_the_querys_words_first(semantic_cli: Cli) -> None:
    # four entries near the query's meaning, none holding its words, and one holding them
    for text in ("Relational tables keep the schema.", "SQLite storage gives persistence.",
                 "Postgres tables hold the relational schema.", "SQL storage and schema."):
        support.remember(semantic_cli, text)
    rollout = support.remember(semantic_cli, "The kubernetes rollout starts on Monday.")

    assert ids(semantic_cli, "monday database", "--mode", "semantic")[0] != rollout
    # the word match weighs as much as the meaning: it is not buried under near meanings
    assert ids(semantic_cli, "monday database")[0] == rollout


def test_at_a_terminal_auto_mode_says_its_model_was_never_fetched(cli: Cli, store: Path,
                                                                   tiny_model: Path) -> None:
    support.remember(cli, POSTGRES, "decision", "--confidence", "0.95")

    shown, said = on_terminal_with_errors(store, "recall", "database")
    assert "PostgreSQL" in shown  # lexical recall still answers
    assert said.startswith("loa-mem: recall is lexical until the embedding model "
                           "minishlab/potion-base-8M is fetched")
    assert "--mode hybrid" in said and len(said.strip().splitlines()) == 1
    # a pipe (an agent, a script) gets the results alone
    assert cli.ok("recall", "database").stderr == ""

    configure(store, mode="lexical")  # lexical by choice: nothing to say
    assert on_terminal_with_errors(store, "recall", "database")[1] == ""


def test_at_a_terminal_a_model_at_hand_needs_no_note(cli: Cli, store: Path,
                                                     tiny_model: Path) -> None:
    support.remember(cli, POSTGRES, "decision", "--confidence", "0.95")
    configure(store, model=str(tiny_model))
    shown, said = on_terminal_with_errors(store, "recall", "database", columns=200)
    assert "PostgreSQL" in shown and said == ""
