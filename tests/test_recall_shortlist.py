"""A lexical recall scores only the shortlist of matches that can reach the top (a common word
matches most of a large store): its results, scores and order are those of scoring every match.

Property tests over generated indexes built by the real index code, with few words so that
most entries match, many scores tie and the tie-break by id decides.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loa_mem.core import clock
from loa_mem.memory import scoring
from loa_mem.memory.index import Index

WORDS = ["redis", "timeout", "retry", "deploy", "deployment", "kafka", "queue", "auth", "vpn",
         "build", "the"]
NOW = clock.parse("2026-02-01T10:30:00Z")
CATEGORIES = ["fact", "decision", "learning", "error", "preference"]
EFFECTIVENESS: list[dict[str, int] | None] = [
    None, {"applications": 5, "successes": 5, "failures": 0, "score": 100},
    {"applications": 5, "successes": 3, "failures": 2, "score": 60},
    {"applications": 5, "successes": 1, "failures": 4, "score": 20},
    {"applications": 9, "successes": 1, "failures": 8, "score": 11}]

entries = st.lists(st.fixed_dictionaries({
    "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
    "tags": st.lists(st.sampled_from(WORDS), max_size=2),
    "confidence": st.sampled_from([0.5, 0.6, 0.7, 0.85, 0.95, 1.0]),
    "day": st.one_of(st.none(), st.integers(1, 28)),
    "category": st.sampled_from(CATEGORIES),
    "effectiveness": st.sampled_from(EFFECTIVENESS),
    "retired": st.booleans(),
}), max_size=80)


def index_of(items: list[dict[str, Any]], folder: Path) -> Index:
    index = Index(folder / "index.sqlite3", in_memory=True)
    spans = []
    for n, item in enumerate(items):
        data: dict[str, Any] = {
            "id": f"MEM-20260101-{n % 7:03d}{n:04d}", "category": item["category"],
            "content": " ".join(item["words"]), "confidence": item["confidence"],
            "tags": item["tags"], "archived": item["retired"],
            "source": {"timestamp": f"2026-01-{item['day']:02d}T10:00:00Z"}
            if item["day"] else {}}
        if item["effectiveness"]:
            data["effectiveness"] = item["effectiveness"]
        spans.append((data, 10 * n + 1, 10 * n + 9, {}, n))
    index.insert("grimoires/loa/memory/facts.yaml", False, spans)
    return index


def both(index: Index, query: str, weight: float, limit: int, categories: list[str]
         ) -> tuple[list[Any], list[Any]]:
    where, args = scoring.conditions(0.6, clock.iso(NOW), categories=categories)
    found = [scoring.ranked(index.db, where, list(args), query=query, recency_weight=weight,
                            now_ts=NOW.timestamp(), limit=limit, shortlist=shortlist)
             for shortlist in (True, False)]
    return found[0], found[1]


@settings(max_examples=150, deadline=None)
@given(items=entries, query=st.lists(st.sampled_from([*WORDS, "deplo", "q"]), min_size=1,
                                     max_size=3),
       weight=st.sampled_from([0.0, 0.2, 0.5, 1.0]), limit=st.integers(1, 12),
       categories=st.lists(st.sampled_from(CATEGORIES), max_size=2))
def test_the_shortlist_ranks_as_scoring_every_match(
        tmp_path_factory: Any, items: list[dict[str, Any]], query: list[str], weight: float,
        limit: int, categories: list[str]) -> None:
    index = index_of(items, tmp_path_factory.mktemp("index"))
    try:
        shortlisted, everything = both(index, " ".join(query), weight, limit, categories)
    finally:
        index.close()
    assert shortlisted == everything


def test_a_common_word_over_thousands_of_entries_ranks_as_scoring_all(tmp_path: Path) -> None:
    rng = random.Random(17)
    items = [{"words": rng.sample(WORDS, rng.randint(1, 5)), "tags": rng.sample(WORDS, 1),
              "confidence": rng.choice([0.6, 0.8, 0.95]), "day": rng.choice([None, 1, 15, 28]),
              "category": rng.choice(CATEGORIES), "effectiveness": rng.choice(EFFECTIVENESS),
              "retired": rng.random() < 0.1} for _ in range(4000)]
    index = index_of(items, tmp_path)
    try:
        for query in ("redis", "deploy retry", "the kafka queue", "auth vpn build"):
            shortlisted, everything = both(index, query, 0.2, 10, [])
            assert len(everything) == 10
            assert shortlisted == everything
    finally:
        index.close()


def test_the_best_match_sets_the_relevance_even_when_it_ranks_low(tmp_path: Path) -> None:
    # the closest match is old, barely confident and ineffective: it falls out of the top
    # three, yet every other entry's text relevance is measured against it
    closest = {"words": ["redis", "redis", "redis"], "tags": ["redis"], "confidence": 0.6,
               "day": None, "category": "fact", "effectiveness": EFFECTIVENESS[4],
               "retired": False}
    others = [{"words": ["redis", *WORDS[n % 5 + 1:n % 5 + 4]], "tags": [], "confidence": 0.95,
               "day": 28, "category": "fact", "effectiveness": EFFECTIVENESS[1],
               "retired": False} for n in range(30)]
    index = index_of([closest, *others], tmp_path)
    try:
        shortlisted, everything = both(index, "redis", 0.2, 3, [])
    finally:
        index.close()
    assert "MEM-20260101-0000000" not in [row[0] for row in everything]
    assert max(row[2] for row in everything) < 1.0
    assert shortlisted == everything
