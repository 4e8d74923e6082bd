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
TIER_BONUS = {"high": 0.1, "normal": 0.0, "untested": 0.0, "review": -0.1, "ineffective": -0.2}


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


def _recency(created: str, now_ts: float) -> float:
    try:
        age_days = max(0.0, (now_ts - clock.parse(created).timestamp()) / 86400)
    except ValueError:
        return 0.0
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


def rank(db: Any, filters: Filters, recency_weight: float) -> list[Hit]:
    """Score the candidates in the index `db` (a sqlite3 connection) and return the best."""
    now = clock.now()
    conditions, args = _conditions(filters, clock.iso(now))
    columns = "e.rowid, e.id, e.confidence, e.created, e.tier"
    if filters.query:
        terms = "".join(c if c.isalnum() else " " for c in filters.query.lower()).split()
        if not terms:
            return []
        match = " OR ".join(f'"{t}"*' for t in dict.fromkeys(terms))
        rows = db.execute(
            f"SELECT {columns}, -bm25(entry_text, 1.0, 2.0, 2.0) FROM entry_text "
            f"JOIN entries e ON e.rowid = entry_text.rowid WHERE entry_text MATCH ? AND "
            + " AND ".join(conditions), [match, *args]).fetchall()
    else:
        rows = db.execute(f"SELECT {columns}, NULL FROM entries e WHERE "
                          + " AND ".join(conditions), args).fetchall()
    best_text = max((r[5] for r in rows if r[5] is not None), default=0.0) or 1.0
    weight = recency_weight
    now_ts = now.timestamp()
    scored = []
    for rowid, memory_id, confidence, created, tier, text in rows:
        recency = _recency(created, now_ts)
        bonus = TIER_BONUS.get(tier, 0.0)
        if text is None:
            parts = {"confidence": confidence, "recency": recency, "tier": bonus}
            total = (1 - weight) * confidence + weight * recency + bonus
        else:
            relevance = max(0.0, text / best_text)
            parts = {"text": relevance, "confidence": confidence, "recency": recency,
                     "tier": bonus}
            total = (1 - weight) * (0.7 * relevance + 0.3 * confidence) + weight * recency + bonus
        scored.append((-round(total, 9), memory_id, rowid, total, parts))
    scored.sort(key=lambda s: (s[0], s[1]))
    top = scored[: filters.limit]
    details = {}
    if top:
        marks = ",".join("?" * len(top))
        for rowid, path, line, data in db.execute(
                f"SELECT rowid, path, first_line, data FROM entries WHERE rowid IN ({marks})",
                [s[2] for s in top]):
            details[rowid] = (path, line, json.loads(data))
    return [Hit(s[1], round(s[3], 4), {k: round(v, 4) for k, v in s[4].items()},
                details[s[2]][2], details[s[2]][0], details[s[2]][1]) for s in top]
