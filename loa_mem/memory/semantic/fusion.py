"""One relevance per candidate for a query: lexical, semantic or hybrid.

- lexical: bm25 over content, summary and tags (computed in SQL by `loa_mem.scoring`; this
  module returns None and leaves it there).
- semantic: the cosine of the query's vector (stop words left out) with the entry's, for the
  `depth` nearest.
- hybrid: reciprocal rank fusion of the two rankings, each cut at `depth`: 1 / (5 + rank)
  from the semantic one plus share / (5 + rank) from the lexical one, where share is the
  entry's bm25 relative to the best match. Fusing ranks needs no calibration between bm25
  and cosine, and the share keeps a weak word match from counting like a strong one. The two
  lists weigh alike. The lexical list once weighed a tenth, chosen on the tuning half of the
  project's conversational set, where half the questions are paraphrases and semantic
  recall finds more than lexical; on LoCoMo's conversations, where most questions share
  words with their evidence, that made hybrid recall find 0.38 of the evidence against
  lexical recall's 0.62 (`bench/bench_locomo.py`, with an offline stand-in model); alike,
  with the default model, 0.63 there and 0.60 on the project's held-out half. Without session
  neighbours hybrid recall stays just under lexical recall on LoCoMo (0.56 against 0.57), and
  no weighting lifts it much: the two top 10s together hold 0.62 of the evidence, and a
  heavier lexical list trades the paraphrases for it. k 5 found the most on the tuning half
  (`bench/bench_retrieval.py --tune`); fusing scores (cosine plus a share of bm25) found no
  more. The entries written next to the best fused matches in their session then join
  (`memory.neighbours`; `retrieval.neighbours: false` leaves them out).

The recall score then treats the result as it treats bm25: divided by the best candidate's, then
weighed with confidence, recency and tier.

Mode: `--mode`, else `memory_schema.retrieval.mode`, else `auto`: hybrid when the semantic
extra is installed and its model is in the cache, lexical otherwise. Auto mode never fetches
a model (a plain recall must not start a 30 MB download, nor need the network): the model is
fetched once when a semantic or hybrid recall is asked for by name (`--mode`, or the config);
a mode asked for by name that cannot have its model fails with the reason.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from loa_mem.memory.semantic import DEFAULT_MODEL, MODES, cached

RRF_K = 5
# the lexical ranking's weight in hybrid fusion (the semantic one's is 1), times its bm25
# relative to the best match
LEXICAL_WEIGHT = 1.0
_NEEDED = ("numpy", "tokenizers", "model2vec")


# NamedTuples, not dataclasses: `context --query` (the hook's process) imports this module,
# and dataclasses pulls in inspect (~10 ms)
class Settings(NamedTuple):
    mode: str  # lexical, semantic or hybrid
    model: str
    dimensions: int | None
    explicit: bool  # asked for by name: fail rather than fall back
    # lexical and hybrid recall also find what was written next to their best matches in
    # their session (`memory.neighbours`)
    neighbours: bool = True


class Relevance(NamedTuple):
    raw: dict[int, float]  # entry rowid -> relevance, best highest
    parts: dict[int, dict[str, float]]  # for --explain
    mode: str = "hybrid"


def installed() -> bool:
    """Whether the semantic extra's libraries can be imported (without importing them). Asks
    the import system's finders as `importlib.util.find_spec` does for a top-level name,
    without importing `importlib.util` (~5 ms of a recall)."""
    for name in _NEEDED:
        if name in sys.modules:
            if sys.modules[name] is None:
                return False
            continue
        if not any(getattr(finder, "find_spec", None) and finder.find_spec(name, None)
                   for finder in sys.meta_path):
            return False
    return True


def settings(retrieval: dict[str, Any], requested: str = "") -> Settings:
    """The mode to recall in. Auto mode learns whether a model is at hand from a few stats
    (`semantic.cached`) before anything is imported."""
    configured = str(retrieval.get("mode") or "auto")
    mode = requested or configured
    explicit = mode != "auto"
    name = str(retrieval.get("model") or DEFAULT_MODEL)
    if mode == "auto":
        mode = "hybrid" if cached(name) and installed() else "lexical"
    if mode not in MODES:
        from loa_mem.memory.semantic.model import ModelUnavailable

        raise ModelUnavailable(f"unknown recall mode {mode!r}", "use lexical, semantic or "
                               "hybrid")
    if mode != "lexical" and explicit and not installed():
        from loa_mem.memory.semantic.model import ModelUnavailable

        raise ModelUnavailable(f"{mode} recall needs the semantic extra",
                               "pip install 'loa-mem[semantic]', or recall with --mode lexical")
    dims = retrieval.get("dimensions")
    return Settings(mode, name, int(dims) if dims else None, explicit,
                    bool(retrieval.get("neighbours", True)))


def unfetched_model(retrieval: dict[str, Any], requested: str = "") -> str | None:
    """What a recall at a terminal says when auto mode stays lexical only because the model
    was never fetched (the semantic extra is installed): installing the extra does not start a
    download, so without this note its first recall would look like the extra did nothing."""
    if requested or str(retrieval.get("mode") or "auto") != "auto":
        return None
    name = str(retrieval.get("model") or DEFAULT_MODEL)
    if cached(name) or not installed():
        return None
    size = " (about 30 MB)" if name == DEFAULT_MODEL else ""
    return (f"recall is lexical until the embedding model {name} is fetched: recall once "
            f"with --mode hybrid to fetch it{size}, or set memory_schema.retrieval.mode to "
            "lexical to keep lexical recall without this note")


def relevance(db: Any, where: list[str], args: list[object], query: str, chosen: Settings,
              depth: int = 100, fetch: bool = True) -> Relevance | None:
    """The relevance of each candidate to `query`, or None for lexical recall (in auto mode
    also when the model cannot be had, with a notice saying why). Unless
    `retrieval.neighbours` is false, lexical and hybrid recall add the entries written next
    to their best matches in their session (`memory.neighbours`), when they have any."""
    if not query.strip():
        return None
    if chosen.mode == "lexical":
        if not chosen.neighbours:
            return None
        from loa_mem.memory import neighbours

        found = neighbours.relevance(db, where, args, query, depth)
        return Relevance(found.raw, found.parts, "lexical") if found else None
    from loa_mem.memory.semantic import model

    try:
        encoder = model.load(chosen.model, chosen.dimensions, fetch=fetch and chosen.explicit)
    except model.ModelUnavailable:
        if chosen.explicit:
            raise
        # auto mode: lexical until the model was fetched by an explicit recall
        return relevance(db, where, args, query, chosen._replace(mode="lexical"), depth)
    semantic = _semantic(db, where, args, encoder, query, depth)
    if chosen.mode == "semantic":
        return Relevance({r: c for r, c in semantic},
                         {r: {"semantic": round(c, 4)} for r, c in semantic}, "semantic")
    fused = fuse(_lexical(db, where, args, query, depth), semantic)
    return _with_neighbours(db, where, args, fused, depth) if chosen.neighbours else fused


def _with_neighbours(db: Any, where: list[str], args: list[object], fused: Relevance,
                     depth: int) -> Relevance:
    """Hybrid recall with the session neighbours of its best fused matches."""
    from loa_mem.memory import neighbours

    ranked = sorted(fused.raw.items(), key=lambda item: (-item[1], item[0]))
    if not ranked:
        return fused
    best = max(ranked[0][1], 1e-9)
    found = neighbours.joined(db, where, args, {rowid: score / best for rowid, score in ranked},
                              depth)
    if found is None:
        return fused
    raw, near, _ = found
    parts = {rowid: {**fused.parts.get(rowid, {"lexical": 0.0, "semantic": 0.0}),
                     "neighbour": round(near.get(rowid, 0.0), 4)} for rowid in raw}
    return Relevance(raw, parts, "hybrid")


def fuse(lexical: list[tuple[int, float]], semantic: list[tuple[int, float]]) -> Relevance:
    """Reciprocal rank fusion of the lexical ranking (rowid, bm25) and the semantic one
    (rowid, cosine), each best first."""
    fused: dict[int, float] = {}
    parts: dict[int, dict[str, float]] = {}
    best = lexical[0][1] if lexical else 1.0
    for rank, (rowid, score) in enumerate(lexical, 1):
        share = max(score, 0.0) / max(best, 1e-9)
        fused[rowid] = fused.get(rowid, 0.0) + LEXICAL_WEIGHT * share / (RRF_K + rank)
        parts.setdefault(rowid, {"lexical": 0.0, "semantic": 0.0})["lexical"] = round(share, 4)
    for rank, (rowid, cosine) in enumerate(semantic, 1):
        fused[rowid] = fused.get(rowid, 0.0) + 1.0 / (RRF_K + rank)
        parts.setdefault(rowid, {"lexical": 0.0, "semantic": 0.0})["semantic"] = round(cosine, 4)
    return Relevance(fused, parts, "hybrid")


def _semantic(db: Any, where: list[str], args: list[object], encoder: Any, query: str,
              depth: int) -> list[tuple[int, float]]:
    """The `depth` candidates nearest the query, nearest first (ties by row), cosine > 0."""
    from loa_mem.memory.semantic import vectors

    vector = encoder.vectors([content_words(query)])[0]
    try:
        return vectors.nearest(db, where, args, vector, vectors.sync(db, encoder), depth)
    except vectors.Disagreement:  # the coarse copy is not of these rows: written anew
        return vectors.nearest(db, where, args, vector, vectors.sync(db, encoder, True), depth)


def content_words(query: str) -> str:
    """The query as embedded: its stop words left out, as from the lexical match (a query made
    only of them keeps them). On the tuning half of the benchmark's conversations semantic
    recall found more with them out (r@10 0.64 -> 0.65, MRR 0.59 -> 0.62) and hybrid as much;
    entries are embedded whole."""
    from loa_mem.memory.stopwords import STOP_WORDS

    kept = [w for w in query.split()
            if "".join(c for c in w.lower() if c.isalnum()) not in STOP_WORDS]
    return " ".join(kept) if kept else query


def _lexical(db: Any, where: list[str], args: list[object], query: str, depth: int
             ) -> list[tuple[int, float]]:
    from loa_mem.memory import scoring

    match = scoring.match_expression(query)
    if match is None:
        return []
    sql = (f"SELECT e.rowid, -bm25(entry_text, {scoring.FIELD_WEIGHTS}) AS s "
           "FROM entry_text CROSS JOIN entries e ON e.rowid = entry_text.rowid "
           "WHERE entry_text MATCH ? AND " + " AND ".join(where) + " ORDER BY s DESC, e.id LIMIT ?")
    return [(int(r[0]), float(r[1])) for r in db.execute(sql, [match, *args, depth])]
