"""Ranking for recall: relevance, recency, confidence and the effectiveness tier.

    with a query:  score = (1 - w) * (0.7 * text + 0.3 * confidence) + w * recency + tier
    without one:   score = (1 - w) * confidence + w * recency + tier

w is `retrieval.recency_weight`; text is the entry's relevance divided by the best among the
candidates: lexical, its bm25 over content, summary and tags (stop words left out, words
stemmed, each query word also matching as a prefix, so 'postgres' finds 'PostgreSQL');
semantic, the cosine of its vector with the query's; hybrid, both rankings fused by
reciprocal rank (see `memory.semantic.fusion`); recency halves every 30 days since the entry was
written; tier adds +0.1 (high), 0 (normal, untested), -0.1 (review) or -0.2 (ineffective).
Ties break by id, so the same store and clock always give the same order.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from loa_mem.core import clock
from loa_mem.memory import rules, scoring


class Filters(NamedTuple):  # named tuples, not dataclasses: see `core.located`
    query: str = ""
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    min_confidence: float = 0.6
    limit: int = 10
    include_expired: bool = False
    include_superseded: bool = False
    include_archived: bool = False
    mode: str = ""  # lexical, semantic or hybrid; "" for the configured one


class Hit(NamedTuple):
    id: str
    score: float
    parts: dict[str, float]
    data: dict[str, Any]
    path: str = ""
    line: int = 0
    state: str = "active"


class Recalled(NamedTuple):
    query: str
    hits: list[Hit]
    explain: bool = False
    tracked: bool = False
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        results = []
        for hit in self.hits:
            item = {"id": hit.id, "category": hit.data.get("category"),
                    "content": hit.data.get("content"),
                    "summary": hit.data.get("summary") or rules.derive_summary(
                        str(hit.data.get("content", ""))),
                    "confidence": hit.data.get("confidence"), "score": hit.score,
                    "tags": hit.data.get("tags") or [], "expires_at": hit.data.get("expires_at"),
                    "tier": rules.tier(hit.data.get("effectiveness")),
                    "state": hit.state, "path": hit.path, "line": hit.line}
            if self.explain:
                item["explain"] = hit.parts
            results.append(item)
        return {"query": self.query, "results": results, "tracked": self.tracked,
                "commit": self.commit}


def _conditions(filters: Filters, now_iso: str) -> tuple[list[str], list[Any]]:
    return scoring.conditions(
        filters.min_confidence, now_iso, include_archived=filters.include_archived,
        include_superseded=filters.include_superseded, include_expired=filters.include_expired,
        categories=filters.categories, tags=filters.tags)


def rank(db: Any, filters: Filters, recency_weight: float,
         retrieval: dict[str, Any] | None = None) -> list[Hit]:
    """Score the candidates in the index `db` (a sqlite3 connection) and return the best.
    The whole score is computed inside SQLite (see `scoring.py`), so only the winners reach
    Python. `retrieval` is the config's retrieval section (mode, model)."""
    now = clock.now()
    conditions, args = _conditions(filters, clock.iso(now))
    # -- semantic and hybrid recall (loa_mem.memory.semantic): the text part comes from there --
    found = None
    if filters.query:
        from loa_mem.memory.semantic import fusion

        chosen = fusion.settings(retrieval or {}, filters.mode)
        found = fusion.relevance(db, conditions, args, filters.query, chosen,
                                 depth=max(100, 10 * filters.limit))
    hits = []
    rows = scoring.rows_by_id(db, list(found.parts)) if found is not None else {}
    for memory_id, conf, rel, rec, bonus, score, path, line, data, _ in scoring.ranked(
            db, conditions, args, query=filters.query, recency_weight=recency_weight,
            now_ts=now.timestamp(), limit=filters.limit,
            given=found.raw if found else None):
        parts = {"confidence": conf, "recency": rec, "tier": bonus}
        if rel is not None:
            text = found.parts.get(rows.get(memory_id, -1), {}) if found is not None else {}
            parts = {"text": rel, **text, **parts}
        entry = json.loads(data)
        hits.append(Hit(memory_id, round(score, 4), {k: round(v, 4) for k, v in parts.items()},
                        entry, path, line, rules.state(entry, False, clock.iso(now))))
    return hits
