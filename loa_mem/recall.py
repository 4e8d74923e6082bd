"""Ranking for recall: relevance, recency, confidence and the effectiveness tier.

    with a query:  score = (1 - w) * (0.7 * text + 0.3 * confidence) + w * recency + tier
    without one:   score = (1 - w) * confidence + w * recency + tier

w is `retrieval.recency_weight`; text is the entry's bm25 relevance (content, summary and tags)
divided by the best among the candidates (each query word also matches as a prefix,
so 'postgres' finds 'PostgreSQL'); recency halves every 30 days since the entry was
written; tier adds +0.1 (high), 0 (normal, untested), -0.1 (review) or -0.2 (ineffective).
Ties break by id, so the same store and clock always give the same order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loa_mem import clock

HALF_LIFE_DAYS = 30.0


@dataclass(frozen=True)
class Filters:
    query: str = ""
    categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    min_confidence: float = 0.6
    limit: int = 10
    include_expired: bool = False
    include_superseded: bool = False
    include_archived: bool = False


@dataclass(frozen=True)
class Hit:
    id: str
    score: float
    parts: dict[str, float]
    data: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    line: int = 0


def _conditions(filters: Filters, now_iso: str) -> tuple[list[str], list[Any]]:
    sql: list[str] = ["e.confidence >= ?"]
    args: list[Any] = [filters.min_confidence]
    if not filters.include_archived:
        sql.append("e.retired = 0")
    if not filters.include_superseded:
        sql.append("e.superseded_by IS NULL")
    if not filters.include_expired:
        sql.append("(e.expires_at IS NULL OR e.expires_at > ?)")
        args.append(now_iso)
    if filters.categories:
        sql.append(f"e.category IN ({','.join('?' * len(filters.categories))})")
        args.extend(filters.categories)
    for tag in filters.tags:
        sql.append("e.tags LIKE ?")
        args.append(f"% {tag} %")
    return sql, args


_TIER_SQL = ("CASE c.tier WHEN 'high' THEN 0.1 WHEN 'review' THEN -0.1 "
             "WHEN 'ineffective' THEN -0.2 ELSE 0.0 END")
_RECENCY_SQL = (f"CASE WHEN c.ts IS NULL THEN 0.0 ELSE "
                f"power(0.5, max(0.0, (? - c.ts) / 86400.0) / {HALF_LIFE_DAYS}) END")


def _ensure_power(db: Any) -> None:
    """SQLite builds without the math functions get a Python `power`."""
    try:
        db.execute("SELECT power(0.5, 1.0)")
    except Exception:  # noqa: BLE001 - sqlite3.OperationalError, without importing sqlite3 here
        import math

        db.create_function("power", 2, math.pow, deterministic=True)


def _match_expression(query: str) -> str | None:
    terms = "".join(c if c.isalnum() else " " for c in query.lower()).split()
    if not terms:
        return None
    return " OR ".join(f'"{t}"*' for t in dict.fromkeys(terms))


def rank(db: Any, filters: Filters, recency_weight: float) -> list[Hit]:
    """Score the candidates in the index `db` (a sqlite3 connection) and return the best.
    The whole score is computed inside SQLite, so only the winners reach Python."""
    _ensure_power(db)
    now = clock.now()
    conditions, args = _conditions(filters, clock.iso(now))
    if filters.query:
        match = _match_expression(filters.query)
        if match is None:
            return []
        candidates = ("SELECT e.rowid AS rowid, e.id AS id, e.confidence AS conf, "
                      "e.created_ts AS ts, e.tier AS tier, -bm25(entry_text, 1.0, 2.0, 2.0) AS raw "
                      "FROM entry_text JOIN entries e ON e.rowid = entry_text.rowid "
                      "WHERE entry_text MATCH ? AND " + " AND ".join(conditions))
        args = [match, *args]
        relevance = "max(0.0, c.raw) / max(max(c.raw) OVER (), 1e-9)"
        total = "(1 - {w}) * (0.7 * rel + 0.3 * conf) + {w} * rec + bonus"
    else:
        candidates = ("SELECT e.rowid AS rowid, e.id AS id, e.confidence AS conf, "
                      "e.created_ts AS ts, e.tier AS tier, NULL AS raw FROM entries e WHERE "
                      + " AND ".join(conditions))
        relevance = "NULL"
        total = "(1 - {w}) * conf + {w} * rec + bonus"
    weight = float(recency_weight)
    sql = (f"WITH c AS ({candidates}), s AS (SELECT c.rowid, c.id, c.conf, {relevance} AS rel, "
           f"{_RECENCY_SQL} AS rec, {_TIER_SQL} AS bonus FROM c) "
           f"SELECT s.rowid, s.id, s.conf, s.rel, s.rec, s.bonus, "
           f"{total.format(w=weight)} AS total, e.path, e.first_line, e.data "
           f"FROM s JOIN entries e ON e.rowid = s.rowid "
           f"ORDER BY round(total, 9) DESC, s.id LIMIT ?")
    hits = []
    for _, memory_id, conf, rel, rec, bonus, score, path, line, data in db.execute(
            sql, [*args, now.timestamp(), filters.limit]):
        parts = {"confidence": conf, "recency": rec, "tier": bonus}
        if rel is not None:
            parts = {"text": rel, **parts}
        hits.append(Hit(memory_id, round(score, 4), {k: round(v, 4) for k, v in parts.items()},
                        json.loads(data), path, line))
    return hits
