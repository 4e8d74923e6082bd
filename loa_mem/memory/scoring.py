"""The recall score as SQL, shared by `recall` and the session-start context.

The formula is documented in `recall.py`. It lives here, free of dataclasses and typing, because
the session-start hook ranks memories too and must not pay for those imports (~20 ms each
process on a 2-core machine): one formula, two callers.
"""

from __future__ import annotations

import heapq

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from sqlite3 import Connection

HALF_LIFE_DAYS = 30.0
# bm25 weights of the full-text columns: content, summary, tags
FIELD_WEIGHTS = "1.0, 2.0, 2.0"

TIER_SQL = ("CASE c.tier WHEN 'high' THEN 0.1 WHEN 'review' THEN -0.1 "
            "WHEN 'ineffective' THEN -0.2 ELSE 0.0 END")
RECENCY_SQL = (f"CASE WHEN c.ts IS NULL THEN 0.0 ELSE "
               f"power(0.5, max(0.0, (? - c.ts) / 86400.0) / {HALF_LIFE_DAYS}) END")


def ensure_power(db: Connection) -> None:
    """SQLite builds without the math functions get a Python `power`."""
    try:
        db.execute("SELECT power(0.5, 1.0)")
    except Exception:  # sqlite3.OperationalError, without importing sqlite3 here
        import math

        db.create_function("power", 2, math.pow, deterministic=True)


def query_words(query: str) -> list[str]:
    """The query's words as the full-text match takes them: lower case, letters and digits."""
    return "".join(c if c.isalnum() else " " for c in query.lower()).split()


def match_expression(query: str) -> str | None:
    terms = query_words(query)
    if not terms:
        return None
    # -- stop words out of the match (loa_mem.memory.stopwords) --
    from loa_mem.memory.stopwords import STOP_WORDS

    return any_of([t for t in terms if t not in STOP_WORDS] or terms)


def any_of(terms: Sequence[str], prefixed: Callable[[str], bool] | None = None,
           forms: bool = True) -> str:
    """The full-text OR of `terms`, each a phrase, and a prefix too unless `prefixed` says
    not; with `forms`, a base form also brings its irregular forms as written, which the
    stemmer cannot join (go/went: `loa_mem.memory.wordforms`)."""
    from loa_mem.memory.wordforms import alternatives

    phrases = {f'"{t}"' + ("*" if prefixed is None or prefixed(t) else ""): None for t in terms}
    for term in terms if forms else ():
        phrases.update((f'"{form}"', None) for form in alternatives(term))
    return " OR ".join(phrases)


def conditions(min_confidence: float, now_iso: str, *, include_archived: bool = False,
               include_superseded: bool = False, include_expired: bool = False,
               categories: Sequence[str] = (), tags: Sequence[str] = ()
               ) -> tuple[list[str], list[object]]:
    """The candidate filter over `entries e`: SQL conditions and their arguments."""
    sql: list[str] = ["e.confidence >= ?"]
    args: list[object] = [min_confidence]
    if not include_archived:
        sql.append("e.retired = 0")
    if not include_superseded:
        sql.append("e.superseded_by IS NULL")
    if not include_expired:
        sql.append("(e.expires_at IS NULL OR e.expires_at > ?)")
        args.append(now_iso)
    if categories:
        sql.append(f"e.category IN ({','.join('?' * len(categories))})")
        args.extend(categories)
    for tag in tags:
        sql.append("e.tags LIKE ?")
        args.append(f"% {tag} %")
    return sql, args


def ranked(db: Connection, where: list[str], args: list[object], *, query: str,
           recency_weight: float, now_ts: float, limit: int, per_category: int | None = None,
           given: Mapping[int, float] | None = None, shortlist: bool = True,
           with_data: bool = True
           ) -> list[tuple[str, float, float | None, float, float, float, str, int, str, str]]:
    """The best candidates, best first (ties by id): rows of (id, confidence, text relevance
    or None, recency, tier bonus, total, path, first line, data as JSON, category). With
    `per_category`, at most that many of each category. A query with no word finds nothing.
    `given` (entry rowid -> relevance) replaces bm25 for semantic and hybrid recall.
    A lexical query scores only its shortlist (see `_shortlist`); `shortlist=False` scores
    every candidate, the reference the shortlist is tested against. Without `with_data`, each
    row's data is "" (not read back: a caller that needs only the order and the scores)."""
    from loa_mem.memory import rowcodec  # not at the top: the hook's memo path imports this module

    ensure_power(db)
    if given is None and query and per_category is None and shortlist:
        match = match_expression(query)
        if match is None:
            return []
        given = _shortlist(db, where, args, match, float(recency_weight), now_ts, limit)
    if given is not None:
        # -- semantic and hybrid recall: the relevance comes from loa_mem.memory.semantic.fusion --
        db.execute("CREATE TEMP TABLE IF NOT EXISTS given_relevance"
                   "(rowid INTEGER PRIMARY KEY, raw REAL)")
        db.execute("DELETE FROM temp.given_relevance")
        db.executemany("INSERT INTO temp.given_relevance VALUES(?, ?)", given.items())
        candidates = ("SELECT e.rowid AS rowid, e.id AS id, e.confidence AS conf, "
                      "e.created_ts AS ts, e.tier AS tier, e.category AS cat, g.raw AS raw "
                      "FROM temp.given_relevance g CROSS JOIN entries e ON e.rowid = g.rowid "
                      "WHERE " + " AND ".join(where))
        relevance = "max(0.0, c.raw) / max(max(c.raw) OVER (), 1e-9)"
        total = "(1 - {w}) * (0.7 * rel + 0.3 * conf) + {w} * rec + bonus"
    elif query:
        match = match_expression(query)
        if match is None:
            return []
        candidates = _lexical_candidates(where)
        args = [match, *args]
        relevance = "max(0.0, c.raw) / max(max(c.raw) OVER (), 1e-9)"
        total = "(1 - {w}) * (0.7 * rel + 0.3 * conf) + {w} * rec + bonus"
    else:
        candidates = ("SELECT e.rowid AS rowid, e.id AS id, e.confidence AS conf, "
                      "e.created_ts AS ts, e.tier AS tier, e.category AS cat, NULL AS raw "
                      "FROM entries e WHERE " + " AND ".join(where))
        relevance = "NULL"
        total = "(1 - {w}) * conf + {w} * rec + bonus"
    weight = float(recency_weight)
    ctes = [f"c AS ({candidates})",
            f"s AS (SELECT c.rowid, c.id, c.conf, c.cat, {relevance} AS rel, "
            f"{RECENCY_SQL} AS rec, {TIER_SQL} AS bonus FROM c)",
            f"t AS (SELECT s.*, {total.format(w=weight)} AS total FROM s)"]
    order = "round(t.total, 9) DESC, t.id"
    params: list[object] = [*args, now_ts]
    source = "t"
    if per_category is not None:
        ctes.append(f"p AS (SELECT t.*, row_number() OVER (PARTITION BY t.cat ORDER BY {order})"
                    " AS n FROM t)")
        source = "(SELECT * FROM p WHERE n <= ?)"
        params.append(per_category)
    data = rowcodec.columns("e") if with_data else "NULL"
    sql = (f"WITH {', '.join(ctes)} SELECT t.id, t.conf, t.rel, t.rec, t.bonus, t.total, "
           "(SELECT path FROM paths WHERE paths.file = e.file), e.first_line, t.cat, "
           f"{data} FROM {source} t JOIN entries e ON e.rowid = t.rowid "
           f"ORDER BY {order} LIMIT ?")
    params.append(limit)
    if not with_data:
        return [(*row[:8], "", row[8]) for row in db.execute(sql, params)]
    return [(*row[:8], rowcodec.unpack_text(row[9:]), row[8])
            for row in db.execute(sql, params)]


def _lexical_candidates(where: list[str]) -> str:
    # CROSS JOIN keeps the full-text match outermost: with the covering index on the live
    # filters, the planner otherwise ran the MATCH once per live entry (0.6 s at 10,000)
    return ("SELECT e.rowid AS rowid, e.id AS id, e.confidence AS conf, "
            "e.created_ts AS ts, e.tier AS tier, e.category AS cat, "
            f"-bm25(entry_text, {FIELD_WEIGHTS}) AS raw "
            "FROM entry_text CROSS JOIN entries e ON e.rowid = entry_text.rowid "
            "WHERE entry_text MATCH ? AND " + " AND ".join(where))


# a candidate left out of the shortlist scores at least this much below the limit-th best
_MARGIN = 1e-6


def _shortlist(db: Connection, where: list[str], args: list[object], match: str,
               weight: float, now_ts: float, limit: int) -> dict[int, float]:
    """The candidates that can reach the best `limit` (entry rowid -> bm25), for the full
    score to rank: a common word matches tens of thousands of entries at 100,000, and the
    window over all of them (each one's relevance needs the best bm25) cost more than bm25
    itself. One pass reads each candidate's bm25 and the rest of its score, computed by the
    same SQL; Python adds the relevance part and keeps every candidate within `_MARGIN` of
    the limit-th best, plus the best match (whose bm25 divides every other). What it leaves
    out scores lower by far more than rounding, so the order is that of scoring them all."""
    rest = (f"(1 - {weight!r}) * 0.3 * c.conf + {weight!r} * {RECENCY_SQL} + {TIER_SQL}")
    rows = db.execute(f"SELECT c.rowid, c.raw, {rest} FROM ({_lexical_candidates(where)}) c",
                      [now_ts, match, *args]).fetchall()
    if len(rows) <= limit:
        return {rowid: raw for rowid, raw, _ in rows}
    best = max(rows, key=lambda row: row[1])
    scale = (1 - weight) * 0.7 / max(best[1], 1e-9)
    totals = [scale * max(0.0, raw) + other for _, raw, other in rows]
    floor = heapq.nlargest(limit, totals)[-1] - _MARGIN
    kept = {row[0]: row[1] for row, total in zip(rows, totals, strict=True) if total >= floor}
    kept[best[0]] = best[1]
    return kept


def rows_by_id(db: Connection, rowids: Sequence[int]) -> dict[str, int]:
    """The id of each of these rows -> its row (the active copy first, when git left an entry
    twice), read by row: no lookup by id (an index just built in the background may not have
    that index yet)."""
    found: dict[str, int] = {}
    for start in range(0, len(rowids), 500):
        part = rowids[start:start + 500]
        for rowid, memory_id, _ in sorted(db.execute(
                f"SELECT rowid, id, in_archive FROM entries WHERE rowid IN "
                f"({','.join('?' * len(part))})", part), key=lambda row: (row[2], row[0])):
            found.setdefault(memory_id, rowid)
    return found
