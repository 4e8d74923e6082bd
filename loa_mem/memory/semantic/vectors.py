"""Entry vectors in a memory-mapped file beside the derived index.

`<git dir>/loa-mem/vectors.bin` is a 64-byte header (magic, format, dimensions, row count, a
generation stamp and the model's fingerprint) followed by a float32 matrix, one unit vector per
row. A query maps the file (numpy memmap) and multiplies it by the query's vector: nothing is
loaded whole, nothing is copied out of SQLite.

Which row belongs to which entry is in the index itself: `entry_vectors(rowid, slot)`, with a
trigger that removes an entry's slot when its row of `entries` goes (a re-parsed file, a
forgotten entry) or its data is changed in place. `sync` embeds the entries that have no slot
and appends their vectors, so a remember costs the next recall one entry. The generation stamp
ties the file to the index: the index's `meta` row `vectors_generation` must equal the file's,
so a deleted or rebuilt index (a clone, a schema change), a deleted or damaged file, or another
model rebuilds the whole file (10,000 entries in about a second). Rows left unused by removed
entries are dropped by that rebuild once they outnumber the used ones.

An index held in memory (a read-only checkout) keeps its vectors in memory too.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import sqlite3

    import numpy as np
    import numpy.typing as npt

    from loa_mem.memory.semantic.model import Encoder

MAGIC = b"LOAVECS\0"
FORMAT = 1
HEADER = struct.Struct("<8sIIQ16s16s")  # magic, format, dim, rows, generation, model
HEADER_SIZE = 64
FILE_NAME = "vectors.bin"
BATCH = 2048  # entries embedded per encode call
WIDE = 4  # a query looks up the best WIDE x depth rows in the index first

_DDL = """
CREATE TABLE IF NOT EXISTS entry_vectors(rowid INTEGER PRIMARY KEY, slot INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS entry_vectors_slot ON entry_vectors(slot);
CREATE TRIGGER IF NOT EXISTS entry_vectors_gone AFTER DELETE ON entries
BEGIN DELETE FROM entry_vectors WHERE rowid = old.rowid; END;
CREATE TRIGGER IF NOT EXISTS entry_vectors_changed AFTER UPDATE OF data ON entries
BEGIN DELETE FROM entry_vectors WHERE rowid = old.rowid; END;
"""


class Header(NamedTuple):
    dim: int
    rows: int
    generation: str
    model: str


class Vectors(NamedTuple):
    matrix: npt.NDArray[np.float32]  # rows x dim, unit vectors (a memmap when on disk)
    dim: int


def text_of(content: str, summary: str, tags: str) -> str:
    """What is embedded: the content, the summary when it adds words, and the tags."""
    parts = [content]
    if summary and summary.rstrip(".…") not in content:
        parts.append(summary)
    if tags.strip():
        parts.append(tags.replace("-", " "))
    return "\n".join(parts)


def fingerprint(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:32]


def file_of(db: sqlite3.Connection) -> Path | None:
    """The vectors file beside the index file, or None for an index held in memory."""
    for _, name, path in db.execute("PRAGMA database_list"):
        if name == "main":
            return Path(path).with_name(FILE_NAME) if path else None
    return None


def read_header(path: Path) -> Header | None:
    try:
        with path.open("rb") as handle:
            raw = handle.read(HEADER_SIZE)
        magic, form, dim, rows, generation, model = HEADER.unpack_from(raw)
        size = path.stat().st_size
    except (OSError, struct.error):
        return None
    if magic != MAGIC or form != FORMAT or dim <= 0 or size < HEADER_SIZE + rows * dim * 4:
        return None
    return Header(dim, rows, generation.hex(), model.hex())


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row[0]) if row else None


def _current(db: sqlite3.Connection, path: Path, model: str) -> Header | None:
    """The file's header when the file is whole, of this index and model, and every entry has
    a row in it; else None (the file must be brought up to date)."""
    header = read_header(path)
    if header is None or header.model != model:
        return None
    if _meta(db, "vectors_generation") != header.generation:
        return None
    entries, slots, top = db.execute(
        "SELECT (SELECT count(*) FROM entries), (SELECT count(*) FROM entry_vectors), "
        "(SELECT max(slot) FROM entry_vectors)").fetchone()
    if entries != slots or (top is not None and top >= header.rows):
        return None
    return header


def sync(db: sqlite3.Connection, encoder: Encoder) -> Vectors:
    """The vectors of every entry of the index, embedding those that have none yet."""
    import numpy as np

    db.executescript(_DDL)
    path = file_of(db)
    model = fingerprint(encoder.key)
    if path is None:
        return _in_memory(db, encoder)
    header = _current(db, path, model)
    if header is None:
        db.execute("BEGIN IMMEDIATE")
        try:
            header = _current(db, path, model) or _update(db, path, encoder, model)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    if header.rows == 0:
        return Vectors(np.zeros((0, header.dim), dtype=np.float32), header.dim)
    matrix = np.memmap(path, dtype=np.float32, mode="r", offset=HEADER_SIZE,
                       shape=(header.rows, header.dim))
    return Vectors(matrix, header.dim)


def _texts(rows: list[Any]) -> list[str]:
    return [text_of(c or "", s or "", t or "") for _, c, s, t in rows]


_UNEMBEDDED = ("SELECT e.rowid, t.content, t.summary, t.tags FROM entries e "
               "JOIN entry_text t ON t.rowid = e.rowid "
               "WHERE e.rowid NOT IN (SELECT rowid FROM entry_vectors) ORDER BY e.rowid")


def _update(db: sqlite3.Connection, path: Path, encoder: Encoder, model: str) -> Header:
    """Append the missing entries' vectors, or rebuild the file when it does not belong to
    this index and model, is damaged, or holds more unused rows than used ones."""
    header = read_header(path)
    used = db.execute("SELECT count(*) FROM entry_vectors").fetchone()[0]
    if (header is None or header.model != model or header.dim != encoder.dim
            or _meta(db, "vectors_generation") != header.generation
            or header.rows - used > max(used, 1000)):
        return _rebuild(db, path, encoder, model)
    top = db.execute("SELECT max(slot) FROM entry_vectors").fetchone()[0]
    if top is not None and top >= header.rows:
        return _rebuild(db, path, encoder, model)
    missing = db.execute(_UNEMBEDDED).fetchall()
    if not missing:
        return header
    vectors = encoder.encode(_texts(missing))
    with path.open("r+b") as handle:
        handle.seek(HEADER_SIZE + header.rows * header.dim * 4)
        handle.write(vectors.tobytes())
        handle.flush()
        rows = header.rows + len(missing)
        handle.seek(0)
        handle.write(HEADER.pack(MAGIC, FORMAT, header.dim, rows,
                                 bytes.fromhex(header.generation), bytes.fromhex(model)))
    db.executemany("INSERT OR REPLACE INTO entry_vectors VALUES(?, ?)",
                   [(r[0], header.rows + i) for i, r in enumerate(missing)])
    return Header(header.dim, rows, header.generation, model)


def _rebuild(db: sqlite3.Connection, path: Path, encoder: Encoder, model: str) -> Header:
    import secrets

    db.execute("DELETE FROM entry_vectors")
    generation = secrets.token_hex(16)
    rows = db.execute(_UNEMBEDDED).fetchall()
    tmp = path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(HEADER.pack(MAGIC, FORMAT, encoder.dim, len(rows),
                                     bytes.fromhex(generation), bytes.fromhex(model)).ljust(
                HEADER_SIZE, b"\0"))
            for start in range(0, len(rows), BATCH):
                handle.write(encoder.encode(_texts(rows[start:start + BATCH])).tobytes())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    db.executemany("INSERT INTO entry_vectors VALUES(?, ?)",
                   [(r[0], slot) for slot, r in enumerate(rows)])
    db.execute("INSERT OR REPLACE INTO meta VALUES('vectors_generation', ?)", (generation,))
    return Header(encoder.dim, len(rows), generation, model)


def _in_memory(db: sqlite3.Connection, encoder: Encoder) -> Vectors:
    """An index held in memory (it cannot be written): every entry embedded for this query."""
    import numpy as np

    db.execute("DELETE FROM entry_vectors")
    rows = db.execute("SELECT e.rowid, t.content, t.summary, t.tags FROM entries e "
                      "JOIN entry_text t ON t.rowid = e.rowid ORDER BY e.rowid").fetchall()
    db.executemany("INSERT INTO entry_vectors VALUES(?, ?)",
                   [(r[0], slot) for slot, r in enumerate(rows)])
    matrix = encoder.encode(_texts(rows)) if rows else np.zeros((0, encoder.dim), np.float32)
    return Vectors(matrix, encoder.dim)


def nearest(db: sqlite3.Connection, where: list[str], args: list[object],
            query: npt.NDArray[np.float32], vectors: Vectors, depth: int
            ) -> list[tuple[int, float]]:
    """The `depth` candidates (entries `e` meeting `where`) nearest the unit vector `query`,
    nearest first (ties by row), with a cosine above 0. The product covers every row of the
    file; only the rows that can reach the top (the best `WIDE` x `depth`, ties included) are
    looked up in the index, or every candidate when too few of those are."""
    import numpy as np

    if len(vectors.matrix) == 0:
        return []
    scores = np.asarray(vectors.matrix @ query, dtype=np.float32)
    found: list[Any] = []
    wide = WIDE * depth
    if wide < len(scores):
        cutoff = np.partition(scores, len(scores) - wide)[len(scores) - wide]
        slots = np.flatnonzero(scores >= cutoff)
        found = db.execute(
            "SELECT v.rowid, v.slot FROM json_each(?) j CROSS JOIN entry_vectors v "
            "ON v.slot = j.value CROSS JOIN entries e ON e.rowid = v.rowid WHERE "
            + " AND ".join(where), [json.dumps(slots.tolist()), *args]).fetchall()
    if len(found) < depth:
        found = db.execute("SELECT v.rowid, v.slot FROM entries e JOIN entry_vectors v "
                           "ON v.rowid = e.rowid WHERE " + " AND ".join(where), args).fetchall()
    if not found:
        return []
    rowids = np.fromiter((r[0] for r in found), dtype=np.int64, count=len(found))
    cosines = scores[np.fromiter((r[1] for r in found), dtype=np.int64, count=len(found))]
    order = np.lexsort((rowids, -cosines))[:depth]
    return [(int(rowids[i]), float(cosines[i])) for i in order if cosines[i] > 0]
