"""Whether semantic recall's ranking is the one a full exact scan gives, at the size the
speed part measures (`bench_retrieval.py` prints it after its timings).

Recall ranks every row by its coarse estimate (`loa_mem.memory.semantic.coarse`) and scores
exactly only the rows whose bound can reach the top; here numpy scores every row in float64
and each query's top 100 is compared.
"""

from __future__ import annotations

import os
from pathlib import Path


def check(root: Path, queries: list[str], now: str) -> None:
    """Print how many of `queries` get the exact scan's top 100 from recall's ranking."""
    import numpy as np

    from loa_mem.memory import scoring
    from loa_mem.memory.semantic import coarse, model, vectors
    from loa_mem.memory.semantic.fusion import content_words
    from loa_mem.memory.store import Store

    os.environ["LOA_MEM_NOW"] = now
    store = Store.open(str(root))
    db = store.index.db
    encoder = model.load(store.config.retrieval["model"], None)
    found = vectors.sync(db, encoder)
    matrix = np.frombuffer(found.buffer, dtype="<f4", offset=found.offset,
                           count=found.rows * found.dim).reshape(found.rows, found.dim)
    where, args = scoring.conditions(0.0, now)
    slots = dict(db.execute("SELECT v.rowid, v.slot FROM entries e JOIN entry_vectors v ON "
                            "v.rowid = e.rowid WHERE " + " AND ".join(where), args).fetchall())
    same, gap = 0, 0.0
    for query in queries:
        vector = encoder.vectors([content_words(query)])[0]
        scores = matrix.astype(np.float64) @ np.asarray(vector, dtype=np.float64)
        full = sorted(((r, float(scores[s])) for r, s in slots.items()),
                      key=lambda rc: (-rc[1], rc[0]))[:100]
        ours = vectors.nearest(db, where, args, vector, found, 100)
        same += [r for r, _ in ours] == [r for r, c in full if c > 0]
        gap = max([gap] + [abs(a - b) for (_, a), (_, b) in zip(ours, full, strict=False)])
    store.close()
    print(f"\nsemantic top 100 as a full exact scan's (numpy, float64): {same} of "
          f"{len(queries)} queries, cosines within {gap:.1e}, over {found.rows} rows "
          f"({len(found.blocks) * coarse.BLOCK} estimated first)")
