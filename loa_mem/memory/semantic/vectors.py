"""Entry vectors in a memory-mapped file beside the derived index.

`<git dir>/loa-mem/vectors.bin` is a 64-byte header (magic, format, dimensions, row count, a
generation stamp and the model's fingerprint) followed by a float32 matrix, one unit vector per
row. A query maps the file and never imports numpy: `coarse.py` keeps an integer copy of the
rows beside it (`vectors.coarse`) that estimates every row's cosine within a known error, and
the rows whose estimate can reach the top are then read from the map and scored exactly, so
the ranking is the exact one. Nothing is loaded whole, nothing is copied out of SQLite.

Which row belongs to which entry is in the index itself: `entry_vectors(rowid, slot)`, with a
trigger that removes an entry's slot when its row of `entries` goes (a re-parsed file, a
forgotten entry) or its data is changed in place. `sync` embeds the entries that have no slot
and appends their vectors, so a remember costs the next recall one entry. The generation stamp
ties the file to the index: the index's `meta` row `vectors_generation` must equal the file's,
so a deleted or rebuilt index (a clone, a schema change), a deleted or damaged file, or another
model rebuilds the whole file (10,000 entries in about a second). Rows left unused by removed
entries are dropped by that rebuild once they outnumber the used ones. A few entries (a
remember's) are embedded in plain Python, many through numpy.

An index held in memory (a read-only checkout) keeps its vectors in memory too.
"""

from __future__ import annotations

import json
import os
import struct
from operator import add, mul
from typing import TYPE_CHECKING, Any, NamedTuple

from loa_mem.memory.semantic import coarse, sha1_hex

if TYPE_CHECKING:
    import sqlite3

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
    """Every entry's unit vector: float32 rows in `buffer` from `offset` (a memory map when on
    disk), and the coarse copy of its first `len(blocks) x coarse.BLOCK` rows."""

    buffer: Any
    offset: int
    dim: int
    rows: int
    blocks: list[coarse.Block]

    def row(self, slot: int) -> tuple[float, ...]:
        return struct.unpack_from(f"<{self.dim}f", self.buffer, self.offset + slot * self.dim * 4)


class Disagreement(Exception):
    """An exact cosine outside its estimate's bound: the coarse copy is not of these rows."""


def text_of(content: str, summary: str, tags: str) -> str:
    """What is embedded: the content, the summary when it adds words, and the tags."""
    parts = [content]
    if summary and summary.rstrip(".…") not in content:
        parts.append(summary)
    if tags.strip():
        parts.append(tags.replace("-", " "))
    return "\n".join(parts)


def fingerprint(key: str) -> str:
    return sha1_hex(key)[:32]


def file_of(db: sqlite3.Connection) -> str | None:
    """The vectors file beside the index file, or None for an index held in memory."""
    for _, name, path in db.execute("PRAGMA database_list"):
        if name == "main":
            return os.path.join(os.path.dirname(path), FILE_NAME) if path else None
    return None


def read_header(path: str) -> Header | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(HEADER_SIZE)
        magic, form, dim, rows, generation, model = HEADER.unpack_from(raw)
        size = os.stat(path).st_size
    except (OSError, struct.error):
        return None
    if magic != MAGIC or form != FORMAT or dim <= 0 or size < HEADER_SIZE + rows * dim * 4:
        return None
    return Header(dim, rows, generation.hex(), model.hex())


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return str(row[0]) if row else None


def _current(db: sqlite3.Connection, path: str, model: str) -> Header | None:
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


def sync(db: sqlite3.Connection, encoder: Encoder, recheck: bool = False) -> Vectors:
    """The vectors of every entry of the index, embedding those that have none yet, with the
    coarse copy of them (rebuilt first when `recheck`: an exact cosine contradicted it)."""
    db.executescript(_DDL)
    path = file_of(db)
    model = fingerprint(encoder.key)
    if path is None:
        return _in_memory(db, encoder)
    header = _current(db, path, model)
    blocks = None if header is None or recheck else _coarse_current(path, header)
    if header is None or blocks is None:
        db.execute("BEGIN IMMEDIATE")
        try:
            header = _current(db, path, model) or _update(db, path, encoder, model)
            blocks = _coarse_update(path, header, recheck)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    if header.rows == 0:
        return Vectors(b"", 0, header.dim, 0, [])
    import mmap

    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return Vectors(mapped, HEADER_SIZE, header.dim, header.rows, blocks)


def _unlink(path: str) -> None:
    if os.path.exists(path):  # a temporary file of this process: no one else removes it
        os.unlink(path)


def _coarse_file(path: str) -> str:
    return os.path.join(os.path.dirname(path), coarse.FILE_NAME)


# the blocks a long-lived process (the MCP server) read last, by the file's identity: blocks
# are only ever appended, a rewrite replaces the file, and any other write changes its mtime
_READ: dict[tuple[object, ...], list[coarse.Block]] = {}


def _coarse_current(path: str, header: Header) -> list[coarse.Block] | None:
    """The coarse copy's blocks when it is whole and covers every whole block of rows."""
    target = _coarse_file(path)
    found = coarse.read_blocks(target, header.generation, header.model, header.dim)
    if found != header.rows // coarse.BLOCK:
        return None
    try:
        stat = os.stat(target)
    except OSError:
        return None
    key = (target, stat.st_ino, stat.st_mtime_ns, stat.st_size, header, found)
    if key not in _READ:
        blocks = coarse.load(target, found, header.dim)
        if blocks is None:
            return None
        _READ.clear()
        _READ[key] = blocks
    return _READ[key]


def _coarse_update(path: str, header: Header, rebuild: bool) -> list[coarse.Block]:
    """Append the blocks the coarse copy lacks, or write it anew when it is not this file's,
    is damaged or was contradicted; then its blocks."""
    target = _coarse_file(path)
    wanted = header.rows // coarse.BLOCK
    found = None if rebuild else coarse.read_blocks(target, header.generation, header.model,
                                                    header.dim)
    if found is not None and found <= wanted:
        blocks = coarse.load(target, found, header.dim)
        if blocks is not None and found == wanted:  # the usual write: no whole block more
            return blocks
        if blocks is not None:
            with open(target, "r+b") as handle:
                handle.seek(coarse.HEADER_SIZE + found * coarse.block_bytes(header.dim))
                handle.write(_coarse_blocks(path, header, found, wanted))
                handle.flush()
                handle.seek(0)
                handle.write(coarse.header(header.generation, header.model, header.dim,
                                           wanted))
            added = coarse.load(target, wanted, header.dim, first=found)  # only what was written
            if added is not None:
                return blocks + added
    tmp = os.path.join(os.path.dirname(target), f".{coarse.FILE_NAME}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(coarse.header(header.generation, header.model, header.dim, wanted))
            handle.write(_coarse_blocks(path, header, 0, wanted))
        os.replace(tmp, target)
    finally:
        _unlink(tmp)
    written = coarse.load(target, wanted, header.dim)
    if written is None:
        raise OSError(f"could not write {target}")
    return written


def _coarse_blocks(path: str, header: Header, first: int, last: int) -> bytes:
    """Blocks `first` to `last` (excluded) of the coarse copy, from the rows of `path`."""
    size = coarse.BLOCK * header.dim * 4
    with open(path, "rb") as handle:
        handle.seek(HEADER_SIZE + first * size)
        return coarse.encode(handle.read((last - first) * size), header.dim)


def _texts(rows: list[Any]) -> list[str]:
    return [text_of(c or "", s or "", t or "") for _, c, s, t in rows]


_UNEMBEDDED = ("SELECT e.rowid, t.content, t.summary, t.tags FROM entries e "
               "JOIN entry_text t ON t.rowid = e.rowid "
               "WHERE e.rowid NOT IN (SELECT rowid FROM entry_vectors) ORDER BY e.rowid")


def _update(db: sqlite3.Connection, path: str, encoder: Encoder, model: str) -> Header:
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
    vectors = encoder.packed(_texts(missing))
    with open(path, "r+b") as handle:
        handle.seek(HEADER_SIZE + header.rows * header.dim * 4)
        handle.write(vectors)
        handle.flush()
        rows = header.rows + len(missing)
        handle.seek(0)
        handle.write(HEADER.pack(MAGIC, FORMAT, header.dim, rows,
                                 bytes.fromhex(header.generation), bytes.fromhex(model)))
    db.executemany("INSERT OR REPLACE INTO entry_vectors VALUES(?, ?)",
                   [(r[0], header.rows + i) for i, r in enumerate(missing)])
    return Header(header.dim, rows, header.generation, model)


def _rebuild(db: sqlite3.Connection, path: str, encoder: Encoder, model: str) -> Header:
    import secrets

    db.execute("DELETE FROM entry_vectors")
    generation = secrets.token_hex(16)
    rows = db.execute(_UNEMBEDDED).fetchall()
    tmp = os.path.join(os.path.dirname(path), f".{FILE_NAME}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(HEADER.pack(MAGIC, FORMAT, encoder.dim, len(rows),
                                     bytes.fromhex(generation), bytes.fromhex(model)).ljust(
                HEADER_SIZE, b"\0"))
            for start in range(0, len(rows), BATCH):
                handle.write(encoder.packed(_texts(rows[start:start + BATCH])))
        os.replace(tmp, path)
    finally:
        _unlink(tmp)
    db.executemany("INSERT INTO entry_vectors VALUES(?, ?)",
                   [(r[0], slot) for slot, r in enumerate(rows)])
    db.execute("INSERT OR REPLACE INTO meta VALUES('vectors_generation', ?)", (generation,))
    return Header(encoder.dim, len(rows), generation, model)


def _in_memory(db: sqlite3.Connection, encoder: Encoder) -> Vectors:
    """An index held in memory (it cannot be written): every entry embedded for this query,
    and every row scored exactly."""
    db.execute("DELETE FROM entry_vectors")
    rows = db.execute("SELECT e.rowid, t.content, t.summary, t.tags FROM entries e "
                      "JOIN entry_text t ON t.rowid = e.rowid ORDER BY e.rowid").fetchall()
    db.executemany("INSERT INTO entry_vectors VALUES(?, ?)",
                   [(r[0], slot) for slot, r in enumerate(rows)])
    packed = b"".join(encoder.packed(_texts(rows[start:start + BATCH]))
                      for start in range(0, len(rows), BATCH))
    return Vectors(packed, 0, encoder.dim, len(rows), [])


def nearest(db: sqlite3.Connection, where: list[str], args: list[object],
            query: tuple[float, ...], vectors: Vectors, depth: int
            ) -> list[tuple[int, float]]:
    """The `depth` candidates (entries `e` meeting `where`) nearest the unit vector `query`,
    nearest first (ties by row), with a cosine above 0: exactly the ranking of every
    candidate by its exact cosine. Every row is estimated (`coarse.estimate`, the rows after
    its blocks exactly); only the best `WIDE` x `depth` estimates, and any row whose bound
    could still reach the top, are looked up in the index (or every candidate, when too few
    of those are one); only the candidates whose bound reaches the `depth`-th best lower bound
    are scored exactly. Raises `Disagreement` when an exact cosine falls outside its bound."""
    if vectors.rows == 0 or not any(query):  # no word of the query known to the model
        return []
    estimates, bounds = coarse.estimate(vectors.blocks, query)
    for slot in range(len(estimates), vectors.rows):
        estimates.append(sum(map(mul, query, vectors.row(slot))))
        bounds.append(coarse.EPSILON)
    upper = list(map(add, estimates, bounds))
    found: dict[int, int] = {}  # slot -> rowid
    wide = WIDE * depth
    if wide < vectors.rows:
        cutoff = sorted(estimates)[-wide]
        best = [s for s, e in enumerate(estimates) if e >= cutoff]  # ties at the cutoff too
        found = _lookup(db, where, args, best)
        if len(found) >= depth:
            floor = _floor(found, estimates, bounds, depth)
            taken = set(best)
            found.update(_lookup(db, where, args, [
                s for s, u in enumerate(upper) if u >= floor and s not in taken]))
    if len(found) < depth:
        found = {slot: rowid for rowid, slot in db.execute(
            "SELECT v.rowid, v.slot FROM entries e JOIN entry_vectors v ON v.rowid = e.rowid "
            "WHERE " + " AND ".join(where), args)}
    floor = _floor(found, estimates, bounds, depth)
    scored = []
    for slot, rowid in found.items():
        if upper[slot] >= floor:
            cosine = sum(map(mul, query, vectors.row(slot)))
            if abs(cosine - estimates[slot]) > bounds[slot]:
                raise Disagreement(slot)
            scored.append((rowid, cosine))
    scored.sort(key=lambda rc: (-rc[1], rc[0]))
    return [(r, c) for r, c in scored[:depth] if c > 0]


def _lookup(db: sqlite3.Connection, where: list[str], args: list[object], slots: list[int]
            ) -> dict[int, int]:
    """Which of `slots` are candidates: slot -> rowid."""
    if not slots:
        return {}
    return {slot: rowid for rowid, slot in db.execute(
        "SELECT v.rowid, v.slot FROM json_each(?) j CROSS JOIN entry_vectors v "
        "ON v.slot = j.value CROSS JOIN entries e ON e.rowid = v.rowid WHERE "
        + " AND ".join(where), [json.dumps(slots), *args])}


def _floor(found: dict[int, int], estimates: list[float], bounds: list[float], depth: int
           ) -> float:
    """The `depth`-th best lower bound among the candidates `found`: no candidate whose upper
    bound is below it can be among the `depth` nearest."""
    if len(found) < depth:
        return float("-inf")
    import heapq

    return heapq.nlargest(depth, (estimates[s] - bounds[s] for s in found))[-1]
