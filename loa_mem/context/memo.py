"""What the default session-start block reads from the index, computed ahead, with the time
span over which it provably stays what the index would say.

The hook's block needs three things from the index: the number of active memories, the
expiring-soon lines, and each category's top memories (recall's ranking over the shortlist,
see `shortlist`). All three change with time alone, never otherwise while the grimoire
files keep their signatures (which the side cache checks at every session start). So the slow
path (and any loa-mem write that keeps the side cache current) computes them once, with:
- `next_expiry`: the smallest `expires_at` of a live entry still unexpired at build time.
  Until the clock reaches it, no entry expires: the count and the expired line hold.
- `next_warning`: the smallest `expires_at` beyond the warning window at build time. Until
  the window's end reaches it, no entry enters the expiring-soon list.
- `from`/`until`: the ranking's span. A score is (1 - w) * confidence + w * 0.5 ** (age / 30)
  + tier bonus, so the gap between two entries is C + D * 2 ** (-(t - t0) / 30 days): it
  moves one way only, and the time it comes within `MARGIN` of zero (where the ranking's
  rounding to 9 decimals could order them otherwise) is solved exactly. `until` is the first
  such time over every pair whose order matters (neighbours in the block's order, and each
  category's last shown entry against every other of its shortlist), capped by the
  shortlist's own span.
The fast path uses the memo for the markdown block without --query (the JSON block shows
scores, which move with time): then it opens no SQLite database at all.

Standard library and `clock` only: the hook imports this module.
"""

from __future__ import annotations

import heapq
import itertools
import math

from loa_mem.core import clock, jsontext
from loa_mem.memory import scoring

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlite3 import Connection
    from typing import Any

DEFAULTS = {"budget_tokens": 2000, "per_category": 5}
HALF_LIFE = 30.0 * 86400  # seconds: scoring.HALF_LIFE_DAYS
MARGIN = 1e-6  # far above float error and the ranking's rounding (1e-9)
LIVE = "retired=0 AND superseded_by IS NULL"


def expiry_bounds(db: Connection, memory: dict[str, Any], now_iso: str) -> list[str | None]:
    """[next_expiry, next_warning] (see the module's text) at `now_iso`."""
    found: list[str | None] = []
    for after in (now_iso, warning_limit(memory, now_iso)):
        (first,) = db.execute(f"SELECT min(expires_at) FROM entries WHERE {LIVE} "
                              "AND expires_at IS NOT NULL AND expires_at>?", (after,)).fetchone()
        found.append(None if first is None else str(first))
    return found


def key(config: dict[str, Any]) -> str:
    """The settings a memo was made with (a memo made under other settings does not hold)."""
    return canonical([config["memory_schema"], settings(config)])


canonical = jsontext.dumps  # equal for equal settings, whatever the order of their dicts


def holds(memo: Any, config: dict[str, Any], now_iso: str) -> bool:
    """Whether `memo` (from `block.make_memo`) still says what the index would say at
    `now_iso` under `config`."""
    if not isinstance(memo, dict) or memo.get("key") != key(config):
        return False
    now = clock.parse(now_iso).timestamp()
    if not memo["from"] <= now < (math.inf if memo["until"] is None else memo["until"]):
        return False
    next_expiry, next_warning = memo["bounds"]
    return ((next_expiry is None or now_iso < next_expiry) and (
        next_warning is None or warning_limit(config["memory_schema"], now_iso) < next_warning))


def ranked_shortlist(db: Connection, memory: dict[str, Any], now_iso: str, ids: list[str]
                     ) -> list[Any]:
    """Every entry of the shortlist `ids` that ranks at all, in the ranking's order, without
    its data (no limit: an id found twice in the files gives two rows)."""
    return _ranked(db, memory, "", now_iso, None, -1, ids, with_data=False) if ids else []


def ranking_span(db: Connection, memory: dict[str, Any], now_iso: str, ids: list[str],
                 per_category: int, until: float) -> float:
    """Until when the memory sections' rows (`top_rows` over the shortlist `ids`) stay as
    they are, at most `until` (the shortlist's own span)."""
    start = clock.parse(now_iso).timestamp()
    if not ids:
        return until
    marks = ",".join("?" * len(ids))
    (future,) = db.execute(f"SELECT count(*) FROM entries WHERE id IN ({marks}) "
                           "AND created_ts>?", (*ids, start)).fetchone()
    if future:  # a recency that starts decaying later: not the curve solved below
        return start
    weight = float((memory.get("retrieval") or {}).get("recency_weight", 0.2))
    by_category: dict[str, list[Any]] = {}
    shown = []  # each category's first `per_category`, in the ranking's order
    for row in ranked_shortlist(db, memory, now_iso, ids):
        rows = by_category.setdefault(row[9], [])
        rows.append(row)
        if len(rows) <= per_category:
            shown.append(row)
    for rows in by_category.values():
        until = min(until, ranking_until(rows, per_category, weight, start))
    for above, below in itertools.pairwise(shown):
        until = min(until, pair_until(above, below, weight, start))
    return until


def ranking_until(rows: list[Any], shown: int, weight: float, start: float) -> float:
    """The time until which the order of `rows` (one category's ranked rows as
    `scoring.ranked` gives them, best first) stays as it is among the first `shown` and
    between them and the rest."""
    until = math.inf
    for i in range(min(shown, len(rows))):
        others = rows[i + 1:] if i == shown - 1 else rows[i + 1:i + 2]
        for below in others:
            until = min(until, pair_until(rows[i], below, weight, start))
    return until


def pair_until(above: Any, below: Any, weight: float, start: float) -> float:
    """When row `above` (id, confidence, _, recency, bonus, total, ...) could stop ranking
    above row `below`: inf when never, `start` when it may already not."""
    if (above[1], above[3], above[4]) == (below[1], below[3], below[4]):
        return math.inf  # equal scores at every moment: ordered by id, always
    gap = above[5] - below[5]
    if gap < MARGIN:
        return start
    slope = weight * (above[3] - below[3])  # D: the part of the gap that decays
    rest = gap - slope  # C: the part that stays
    if slope <= 0 or rest >= MARGIN:
        return math.inf
    x = (MARGIN - rest) / slope  # the gap is C + D * x, x = 2 ** (-(t - start) / HALF_LIFE)
    return start + HALF_LIFE * math.log2(1 / x)


def settings(config: dict[str, Any]) -> dict[str, Any]:
    """The `context` section of the config over the defaults (a cache written by an older
    loa-mem may lack the section)."""
    return {**DEFAULTS, **(config.get("context") or {})}


def warning_limit(memory: dict[str, Any], now_iso: str) -> str:
    """The end of the expiring-soon window that starts at `now_iso`."""
    days = int((memory.get("lifecycle") or {}).get("warn_before_archive_days", 7))
    return clock.iso(clock.parse(now_iso) + clock.days(days))


def active_count(db: Connection, now_iso: str) -> int:
    (active,) = db.execute(
        "SELECT count(*) FROM entries WHERE retired=0 AND superseded_by IS NULL "
        "AND (expires_at IS NULL OR expires_at>?)", (now_iso,)).fetchone()
    return int(active)


# -- ranking, and the shortlist: ranking every live entry once, not at every session start --
def top_rows(db: Connection, memory: dict[str, Any], query: str, now_iso: str,
             per_category: int, categories: int, ids: list[str] | None) -> list[Any]:
    """The rows the memory sections show: each category's top `per_category`, best first."""
    return _ranked(db, memory, query, now_iso, per_category, per_category * categories, ids)


def _ranked(db: Connection, memory: dict[str, Any], query: str, now_iso: str,
            per_category: int | None, limit: int, ids: list[str] | None = None,
            with_data: bool = True) -> list[Any]:
    retrieval = memory.get("retrieval") or {}
    where, args = scoring.conditions(float(retrieval.get("min_confidence", 0.6)), now_iso)
    if ids:
        # unary plus keeps the live filters off the covering index, so SQLite looks the
        # shortlist up by id instead of scanning every live entry (9 ms -> 3 ms at 10,000)
        where = [f"+{c}" if c.startswith("e.") else c for c in where]
        where.append(f"e.id IN ({','.join('?' * len(ids))})")
        args.extend(ids)
    # -- semantic and hybrid ranking of --query, as recall's (loa_mem.memory.semantic) --
    found = None
    if query:
        from loa_mem.memory.semantic import fusion

        # the session-start hook never waits for a download: recall fetches the model
        found = fusion.relevance(db, where, args, query, fusion.settings(retrieval), fetch=False)
    return scoring.ranked(db, where, args, query=query,
                          recency_weight=float(retrieval.get("recency_weight", 0.2)),
                          now_ts=clock.parse(now_iso).timestamp(), limit=limit,
                          per_category=per_category, given=found.raw if found else None,
                          with_data=with_data)


SHORTLIST_FACTOR = 10


def _ranking_key(config: dict[str, Any]) -> list[Any]:
    memory = config["memory_schema"]
    retrieval = memory.get("retrieval") or {}
    return [float(retrieval.get("min_confidence", 0.6)),
            float(retrieval.get("recency_weight", 0.2)), int(settings(config)["per_category"]),
            list(memory["categories"])]


def shortlist(db: Connection, config: dict[str, Any], now_iso: str) -> dict[str, Any]:
    """The ids among which each category's top K entries (K = per_category) are found from
    `now_iso` until `until`, and the ranking settings they hold for.

    Scoring every live entry costs ~100 ms at 10,000 entries, more than the hook's budget, so
    the slow path keeps each category's top 10 K and the fast path ranks only those, exactly as
    recall would. That is exact for as long as no entry outside them can overtake the K-th:
    scores move only through recency, and the difference between two entries' scores changes
    by at most w * ln 2 / 30 per day (the steepest slope of w * 0.5 ** (age / 30)), so the
    shortlist holds while that drift stays under the gap between the K-th score and the best
    score left out, and until the first listed entry expires. The grimoire files' signatures
    in the side cache make it stale on any change of the entries themselves."""
    key = _ranking_key(config)
    top, weight = key[2], key[1]
    keep = top * SHORTLIST_FACTOR
    start = clock.parse(now_iso).timestamp()
    until = math.inf
    drift = weight * math.log(2) / HALF_LIFE  # score per second
    ids = []
    for rows in _scored_by_category(db, key, now_iso).values():
        best = heapq.nsmallest(keep, rows, key=lambda r: (-r[0], r[1]))
        if len(rows) > keep and drift > 0:
            # MARGIN: these scores are Python's, not SQLite's (they may differ in the last bit)
            gap = _smallest_gap(best[:top], rows, {r[1] for r in best})
            until = min(until, start + max(0.0, gap - MARGIN) / drift)
        for _, memory_id, expires, _ in best:
            ids.append(memory_id)
            if expires:
                until = min(until, clock.parse(str(expires)).timestamp())
    return {"key": key, "from": start, "until": None if until == math.inf else until,
            "ids": ids}


def _smallest_gap(top: list[Scored], rows: list[Scored], kept: set[str]) -> float:
    """The smallest lead of one of `top` over an entry left out that can ever overtake it.
    One left out with the same confidence, age and tier as a top entry never does: the two
    scores stay equal, and ties go by id (the top one's is smaller, or it would not be kept).
    So a large group of entries made at once and equal in all that never blocks the span."""
    gap = math.inf
    for params in {r[3] for r in top}:
        lead = min(r[0] for r in top if r[3] == params)
        rival = max((r[0] for r in rows if r[3] != params and r[1] not in kept),
                    default=-math.inf)
        gap = min(gap, lead - rival)
    return gap


_TIER_BONUS = {"high": 0.1, "review": -0.1, "ineffective": -0.2}  # scoring.TIER_SQL


Scored = tuple[float, str, "str | None", tuple[float, "float | None", "str | None"]]


def _scored_by_category(db: Connection, key: list[Any], now_iso: str
                        ) -> dict[str, list[Scored]]:
    """Every live entry with recall's score without a query, by category, as (score, id,
    expires_at, (confidence, created_ts, tier)). Scored here rather than by `scoring.ranked`'s
    window over every live entry: one plain scan of the index, several times faster."""
    min_confidence, weight = key[0], key[1]
    where, args = scoring.conditions(min_confidence, now_iso)
    start = clock.parse(now_iso).timestamp()
    scored: dict[str, list[Scored]] = {}
    for memory_id, confidence, ts, tier, category, expires in db.execute(
            "SELECT e.id, e.confidence, e.created_ts, e.tier, e.category, e.expires_at "
            "FROM entries e WHERE " + " AND ".join(where), args):
        recency = 0.0 if ts is None else 0.5 ** (max(0.0, start - ts) / HALF_LIFE)
        score = (1 - weight) * confidence + weight * recency + _TIER_BONUS.get(tier, 0.0)
        scored.setdefault(category, []).append((score, memory_id, expires,
                                                (confidence, ts, tier)))
    return scored


def shortlist_ids(side: dict[str, Any], config: dict[str, Any], now_iso: str) -> list[str] | None:
    """The cached shortlist's ids when it holds at `now_iso` for these settings, else None."""
    found = side.get("shortlist")
    if not isinstance(found, dict) or found.get("key") != _ranking_key(config):
        return None
    now = clock.parse(now_iso).timestamp()
    if now < found["from"] or (found["until"] is not None and now > found["until"]):
        return None
    return [str(i) for i in found["ids"]]
