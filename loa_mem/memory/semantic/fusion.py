"""One relevance per candidate for a query: lexical, semantic or hybrid.

- lexical: bm25 over content, summary and tags (computed in SQL by `loa_mem.scoring`; this
  module returns None and leaves it there).
- semantic: the cosine of the query's vector with the entry's, for the `depth` nearest.
- hybrid: reciprocal rank fusion of the two rankings, sum over both of 1 / (60 + rank), each
  ranking cut at `depth`. Fusing ranks, not scores, needs no calibration between bm25 and
  cosine.

The recall score then treats the result as it treats bm25: divided by the best candidate's, then
weighed with confidence, recency and tier.

Mode: `--mode`, else `memory_schema.retrieval.mode`, else `auto`: hybrid when the semantic
extra is installed and its model is in the cache, lexical otherwise. Auto mode never fetches
a model (a plain recall must not start a 30 MB download, nor need the network): the model is
fetched once when a semantic or hybrid recall is asked for by name (`--mode`, or the config);
a mode asked for by name that cannot have its model fails with the reason.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any, NamedTuple

from loa_mem.memory.semantic import MODES

RRF_K = 60
_NEEDED = ("numpy", "tokenizers", "model2vec")


# NamedTuples, not dataclasses: `context --query` (the hook's process) imports this module,
# and dataclasses pulls in inspect (~10 ms)
class Settings(NamedTuple):
    mode: str  # lexical, semantic or hybrid
    model: str
    dimensions: int | None
    explicit: bool  # asked for by name: fail rather than fall back


class Relevance(NamedTuple):
    raw: dict[int, float]  # entry rowid -> relevance, best highest
    parts: dict[int, dict[str, float]]  # for --explain
    mode: str = "hybrid"


def installed() -> bool:
    """Whether the semantic extra's libraries can be imported (without importing them)."""
    for name in _NEEDED:
        if name in sys.modules:
            if sys.modules[name] is None:
                return False
            continue
        if importlib.util.find_spec(name) is None:
            return False
    return True


def settings(retrieval: dict[str, Any], requested: str = "") -> Settings:
    from loa_mem.memory.semantic.model import DEFAULT_MODEL, ModelUnavailable

    configured = str(retrieval.get("mode") or "auto")
    mode = requested or configured
    explicit = mode != "auto"
    if mode == "auto":
        mode = "hybrid" if installed() else "lexical"
    if mode not in MODES:
        raise ModelUnavailable(f"unknown recall mode {mode!r}", "use lexical, semantic or "
                               "hybrid")
    if mode != "lexical" and explicit and not installed():
        raise ModelUnavailable(f"{mode} recall needs the semantic extra",
                               "pip install 'loa-mem[semantic]', or recall with --mode lexical")
    dims = retrieval.get("dimensions")
    return Settings(mode, str(retrieval.get("model") or DEFAULT_MODEL),
                    int(dims) if dims else None, explicit)


def relevance(db: Any, where: list[str], args: list[object], query: str, chosen: Settings,
              depth: int = 100, fetch: bool = True) -> Relevance | None:
    """The relevance of each candidate to `query`, or None for lexical recall (in auto mode
    also when the model cannot be had, with a notice saying why)."""
    if chosen.mode == "lexical" or not query.strip():
        return None
    from loa_mem.memory.semantic import model

    try:
        encoder = model.load(chosen.model, chosen.dimensions, fetch=fetch and chosen.explicit)
    except model.ModelUnavailable:
        if chosen.explicit:
            raise
        return None  # auto mode: lexical until the model was fetched by an explicit recall
    from loa_mem.memory.semantic import vectors  # numpy: only once there is a model to use
    vectors.sync(db, encoder)
    rowids, cosines = vectors.similarities(db, where, args, encoder.encode([query])[0],
                                           encoder.dim)
    order = sorted(range(len(rowids)), key=lambda i: (-float(cosines[i]), rowids[i]))[:depth]
    semantic = [(rowids[i], float(cosines[i])) for i in order if cosines[i] > 0]
    if chosen.mode == "semantic":
        return Relevance({r: c for r, c in semantic},
                         {r: {"semantic": round(c, 4)} for r, c in semantic}, "semantic")
    lexical = _lexical(db, where, args, query, depth)
    fused: dict[int, float] = {}
    parts: dict[int, dict[str, float]] = {}
    best = lexical[0][1] if lexical else 1.0
    for rank, (rowid, score) in enumerate(lexical, 1):
        fused[rowid] = fused.get(rowid, 0.0) + 1.0 / (RRF_K + rank)
        parts.setdefault(rowid, {"lexical": 0.0, "semantic": 0.0})["lexical"] = round(
            max(score, 0.0) / max(best, 1e-9), 4)
    for rank, (rowid, cosine) in enumerate(semantic, 1):
        fused[rowid] = fused.get(rowid, 0.0) + 1.0 / (RRF_K + rank)
        parts.setdefault(rowid, {"lexical": 0.0, "semantic": 0.0})["semantic"] = round(cosine, 4)
    return Relevance(fused, parts, "hybrid")


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
