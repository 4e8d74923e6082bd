"""Session neighbours: recall also finds what was written next to its best matches.

A conversation kept as memories spreads one answer over consecutive entries ("the checkout
times out in Brazil", then "traces show the payment call waits on the fraud scorer"): the
question shares words with the first and none with the second. Unless `retrieval.neighbours`
is false, lexical and hybrid recall add the entries written just before and just after each
of the query's best `SOURCES` matches, in the same session (`source.session_id`) and at most
`WINDOW` seconds apart:

    relevance = (1 - WEIGHT) * share + WEIGHT * neighbour

where share is an entry's relevance relative to the best match (lexical recall: its bm25, 0
when the query's words are not in it; hybrid recall: its fused score) and neighbour is the
share of the best match it was written next to (0 when none). An entry found only as a
neighbour has a relevance of at most WEIGHT (0.3) against the best match's 0.7 at least, so
in text relevance the best match is never overtaken by an entry found only beside it. As in
hybrid recall, the query's best `depth` matches and their neighbours are then scored
(recency, confidence, tier) by `scoring.ranked`.

Only a session has neighbours: an entry written outside one (`NO_SESSIONS`: what `remember`
records without --session or LOA_MEM_SESSION, `capture` and a tool-result hook without a
session id; a developer's notes typed one after another, on any subject) neither lends nor
is one, so a plain `recall WORD` over such notes lists exactly the entries holding the
word. Semantic recall, asked for by name, ranks by meaning alone (with neighbours its MRR fell
from 0.60 to 0.53 on the held-out half).

Chosen on the tuning half of the benchmark's conversations (`bench/bench_retrieval.py
--neighbours`): 1 to 5 sources found the same, weight 0.3 found the most (lexical r@10 0.54
-> 0.58, MRR 0.56 unchanged; 0.2: 0.56, 0.45: 0.58 with MRR 0.545; hybrid with the default
model, the lists weighed alike, 0.64 -> 0.68; 0.2: 0.69, 0.45: 0.68 to 0.69). Held out:
lexical 0.51 -> 0.56, hybrid 0.55 -> 0.60; the team set moves by up to four evidence of 200.
On LoCoMo's ten conversations in one store (`bench/bench_locomo.py`), lexical 0.57 -> 0.62,
hybrid 0.56 -> 0.63. Feeding back the best matches' most distinctive words instead
(RM3-style, 1 to 5 matches, 3 to 12 words, weights 0.1 to 0.45) found no more evidence (r@10
0.54 at every setting) and was not kept.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any, NamedTuple

# entries written outside any session have no neighbours (the recall fast path imports rules
# already). The MCP server's `mcp` is a session: one server process serves one agent's
# conversation.
from loa_mem.memory.rules import NO_SESSIONS

SOURCES = 3
WEIGHT = 0.3
WINDOW = 1800.0  # seconds between an entry and its neighbour, at most


class Relevance(NamedTuple):
    """As `semantic.fusion.Relevance`: what `scoring.ranked` takes as `given`."""
    raw: dict[int, float]  # entry rowid -> relevance, best highest
    parts: dict[int, dict[str, float]]  # for --explain: lexical share, neighbour share
    mode: str = "lexical"


def relevance(db: Any, where: list[str], args: list[object], query: str, depth: int = 100
              ) -> Relevance | None:
    """The query's best `depth` matches and their sources' neighbours, or None when no best
    match has one (the plain lexical ranking then applies unchanged)."""
    from loa_mem.memory import scoring

    match = scoring.match_expression(query)
    if match is None:
        return None
    sql = (f"SELECT e.rowid, -bm25(entry_text, {scoring.FIELD_WEIGHTS}) AS s "
           "FROM entry_text CROSS JOIN entries e ON e.rowid = entry_text.rowid "
           "WHERE entry_text MATCH ? AND " + " AND ".join(where) + " ORDER BY s DESC, e.id "
           "LIMIT ?")
    matches = db.execute(sql, [match, *args, depth]).fetchall()
    if not matches:
        return None
    best = max(float(matches[0][1]), 1e-9)
    found = joined(db, where, args, {int(rowid): max(float(score), 0.0) / best
                                     for rowid, score in matches}, depth)
    if found is None:
        return None
    raw, near, shares = found
    parts = {rowid: {"lexical": round(shares.get(rowid, 0.0), 4),
                     "neighbour": round(near.get(rowid, 0.0), 4)} for rowid in raw}
    return Relevance(raw, parts)


def joined(db: Any, where: list[str], args: list[object], shares: dict[int, float],
           depth: int) -> tuple[dict[int, float], dict[int, float], dict[int, float]] | None:
    """A ranking's candidates (`shares`: rowid -> relevance relative to the best, best first)
    with the neighbours of its best `SOURCES`: (relevance of the best `depth`, each
    neighbour's share, `shares`), or None when those have no neighbour. Lexical recall joins
    its bm25 shares, hybrid recall its fused ones."""
    near = _neighbours(db, where, args, list(shares)[:SOURCES], shares)
    if not near:
        return None
    raw = {rowid: (1 - WEIGHT) * share for rowid, share in shares.items()}
    for rowid, share in near.items():
        raw[rowid] = raw.get(rowid, 0.0) + WEIGHT * share
    return dict(sorted(raw.items(), key=lambda item: (-item[1], item[0]))[:depth]), near, shares


def _neighbours(db: Any, where: list[str], args: list[object], sources: list[int],
                shares: dict[int, float]) -> dict[int, float]:
    """Entry rowid -> the share of the best source it was written just before or after. One
    pass over the live entries' times (a covering index) finds what is near each source;
    sessions are then read outwards from each source, nearest first, until one matches."""
    marks = ",".join("?" * len(sources))
    placed = [row for row in db.execute(
        "SELECT rowid, created_ts, json_extract(data, '$.source.session_id') FROM entries "
        f"WHERE rowid IN ({marks}) AND created_ts IS NOT NULL", sources)
        if row[2] is not None and row[2] not in NO_SESSIONS]
    if not placed:
        return {}
    spans = " OR ".join("n.created_ts BETWEEN ? AND ?" for _ in placed)
    bounds = [edge for _, ts, _ in placed for edge in (ts - WINDOW, ts + WINDOW)]
    # CROSS JOIN: the times first (by their index), then the filter on those rows alone
    nearby = sorted((ts, rowid) for rowid, ts in db.execute(
        "SELECT e.rowid, e.created_ts FROM entries n CROSS JOIN entries e ON e.rowid = n.rowid "
        f"WHERE ({spans}) AND " + " AND ".join(where), [*bounds, *args]))
    sessions: dict[int, Any] = {}

    def session(rowid: int) -> Any:
        if rowid not in sessions:
            sessions[rowid] = db.execute(
                "SELECT json_extract(data, '$.source.session_id') FROM entries WHERE rowid=?",
                (rowid,)).fetchone()[0]
        return sessions[rowid]

    found: dict[int, float] = {}
    for rowid, ts, name in placed:
        # outwards from the source in the sorted times, nearest first: entries written at
        # one time (a store filled in one go) would make a scan of them all for each source
        at = bisect_left(nearby, (ts, rowid))
        for indexes in (range(at - 1, -1, -1), range(at, len(nearby))):
            hit = None
            for i in indexes:
                when, other = nearby[i]
                if abs(when - ts) > WINDOW:
                    break
                if other != rowid and session(other) == name:
                    hit = other
                    break
            if hit is not None:
                found[hit] = max(found.get(hit, 0.0), shares[rowid])
    return found
