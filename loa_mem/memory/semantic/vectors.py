"""Entry vectors in the derived index, beside the full-text table.

`entry_vectors(rowid, vec)` holds one float32 unit vector per entry row of `entries`. A trigger
removes a row's vector when the row goes (a re-parsed file, a forgotten entry), and `sync`
embeds whatever rows have none, so vectors follow the files without any writer knowing about
them. The meta key `vectors_model` names the prepared model they came from; another model
clears them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    import numpy as np
    import numpy.typing as npt

    from loa_mem.memory.semantic.model import Encoder

_DDL = """
CREATE TABLE IF NOT EXISTS entry_vectors(rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TRIGGER IF NOT EXISTS entry_vectors_gone AFTER DELETE ON entries
BEGIN DELETE FROM entry_vectors WHERE rowid = old.rowid; END;
"""


def text_of(content: str, summary: str, tags: str) -> str:
    """What is embedded: the content, the summary when it adds words, and the tags."""
    parts = [content]
    if summary and summary.rstrip(".…") not in content:
        parts.append(summary)
    if tags.strip():
        parts.append(tags.replace("-", " "))
    return "\n".join(parts)


def sync(db: sqlite3.Connection, encoder: Encoder) -> int:
    """Embed every entry row that has no vector yet; return how many were embedded."""
    import numpy as np

    db.executescript(_DDL)
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute("SELECT value FROM meta WHERE key='vectors_model'").fetchone()
        if row is None or row[0] != encoder.key:
            db.execute("DELETE FROM entry_vectors")
            db.execute("INSERT OR REPLACE INTO meta VALUES('vectors_model', ?)", (encoder.key,))
        missing = db.execute(
            "SELECT e.rowid, t.content, t.summary, t.tags FROM entries e "
            "JOIN entry_text t ON t.rowid = e.rowid "
            "WHERE e.rowid NOT IN (SELECT rowid FROM entry_vectors)").fetchall()
        if missing:
            vectors = encoder.encode([text_of(c or "", s or "", t or "")
                                      for _, c, s, t in missing])
            db.executemany("INSERT OR REPLACE INTO entry_vectors VALUES(?, ?)",
                           [(r[0], np.ascontiguousarray(v).tobytes())
                            for r, v in zip(missing, vectors, strict=False)])
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return len(missing)


def similarities(db: sqlite3.Connection, where: list[str], args: list[object],
                 query: npt.NDArray[np.float32], dim: int) -> tuple[list[int],
                                                                    npt.NDArray[np.float32]]:
    """The candidates (entries `e` meeting `where`) that have a vector, and the cosine of each
    with the unit vector `query`."""
    import numpy as np

    rows = db.execute("SELECT v.rowid, v.vec FROM entries e JOIN entry_vectors v "
                      "ON v.rowid = e.rowid WHERE " + " AND ".join(where), args).fetchall()
    if not rows:
        return [], np.zeros(0, dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim)
    return [int(r[0]) for r in rows], matrix @ query
