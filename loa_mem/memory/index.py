"""The derived index: a SQLite file outside git (`<git dir>/loa-mem/index.sqlite3`).

It holds, for every grimoire file, the signature (mtime, size) it was built from and, for every
entry, its data, its line span and the columns recall filters on, plus a full-text table. It is
never the truth: any file whose signature changed is parsed again, and deleting the index only
costs one rebuild. Writers update it in the same step as the files they change, so their own
writes never force a parse.
"""

from __future__ import annotations

import bisect
import itertools
import os
import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

from loa_mem.core import spanhash
from loa_mem.memory import rowcodec
from loa_mem.memory.indexrows import (
    ADD_LAYOUT,
    ADD_PATH,
    INDEX_TEXT,
    INDEXES,
    INSERT_ENTRIES,
    TABLES,
    Prepared,
    Span,
    key_offsets,
    prepare,
)
from loa_mem.memory.rowcodec import SCHEMA_VERSION
from loa_mem.memory.rules import normalize as normalized
from loa_mem.memory.unsettled import UNSETTLED

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathlib is not imported at run time: the catch-up's budget
    from pathlib import Path
    from typing import Any

    Where = str | os.PathLike[str]


class Row(NamedTuple):  # not a dataclass: see `core.located`
    rowid: int
    id: str
    path: str
    in_archive: bool
    first_line: int
    last_line: int
    data: dict[str, Any]
    key_offsets: dict[str, int]

    def line_of(self, key: str) -> int:
        """The file line of a top-level key of this entry (its first line when absent)."""
        return self.first_line + self.key_offsets.get(key, 0)


Signature = tuple[int, int]

# the rows of one grimoire file (a path's number, looked up once per statement)
_IN_FILE = "file=(SELECT file FROM paths WHERE path=?)"
_PATH = "(SELECT path FROM paths WHERE paths.file=entries.file)"

def _writable(path: Where) -> bool:
    """Whether the index file can be created or changed (os.access also sees a read-only
    file system, which permission bits do not show)."""
    file = os.fspath(path)
    folder = os.path.dirname(file) or "."
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    return all(os.access(p, os.W_OK) for p in (file, f"{file}-wal") if os.path.exists(p))


def create(db: sqlite3.Connection, indexes: bool = True) -> None:
    """The tables (and, unless a cold build adds them after its rows, the indexes) of an empty
    index, stamped with the schema version."""
    db.executescript(TABLES + (INDEXES if indexes else ""))
    db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))


def add_names(db: sqlite3.Connection, rows: list[Prepared]) -> None:
    """Number the paths and the layouts of `rows` (from `prepare`) that have none yet."""
    db.executemany(ADD_PATH, ((path,) for path in dict.fromkeys(row[1] for row in rows)))
    db.executemany(ADD_LAYOUT, ((keys,) for keys in dict.fromkeys(row[14] for row in rows)))


def snapshot(source: Path, target: Path) -> None:
    """A consistent copy of the index file at `source` into `target`, through SQLite's backup
    (never a torn copy of a file being written); nothing when it cannot be read."""
    try:
        reader = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, ValueError):
        return
    writer = None
    try:
        writer = sqlite3.connect(target)
        reader.backup(writer)
    except sqlite3.Error:
        target.unlink(missing_ok=True)
    finally:
        reader.close()
        if writer is not None:
            writer.close()


class Index:
    """The index database; in memory (a copy of the file when it can be read) where its folder
    or file cannot be written: a read-only checkout, a read-only `.git/loa-mem` or a full disk.
    Reads then work as usual, only slower (the copy is brought up to date each time)."""

    def __init__(self, path: Where, in_memory: bool = False) -> None:
        self.in_memory = False
        try:
            if in_memory or not _writable(path):
                raise sqlite3.OperationalError("read-only")
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA busy_timeout=30000")
            # derived data: a power cut may lose the last commit (WAL keeps the file whole),
            # which the next command rebuilds from the files; fsync on every commit costs more
            self.db.execute("PRAGMA synchronous=NORMAL")
            if self._version() != SCHEMA_VERSION:
                self._reset()
            elif self.meta(UNSETTLED) is not None:
                from loa_mem.memory import unsettled

                unsettled.resume(path)  # a settler that was killed, or not started
        except sqlite3.OperationalError:
            self._open_in_memory(path)

    def _open_in_memory(self, path: Where) -> None:
        from pathlib import Path

        if getattr(self, "db", None) is not None:
            self.db.close()
        self.in_memory = True
        self.db = sqlite3.connect(":memory:", isolation_level=None)
        try:
            source = sqlite3.connect(f"{Path(path).as_uri()}?mode=ro&immutable=1", uri=True)
            try:
                source.backup(self.db)
            finally:
                source.close()
        except (sqlite3.Error, ValueError):
            pass  # no readable copy: built from the files
        if self._version() != SCHEMA_VERSION:
            self._reset()

    def _version(self) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.OperationalError:
            return None
        return str(row[0]) if row else None

    def _reset(self) -> None:
        if not self.in_memory:
            self.db.execute("PRAGMA journal_mode=WAL")
        for kind, name in self.db.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'entry_text_%'").fetchall():
            self.db.execute(f"DROP {kind.upper()} IF EXISTS {name}")
        create(self.db)

    def close(self) -> None:
        self.db.close()

    # -- transactions -------------------------------------------------------------------
    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    # -- files --------------------------------------------------------------------------
    def signature(self, path: str) -> Signature | None:
        row = self.db.execute("SELECT mtime_ns, size FROM files WHERE path=?", (path,)).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def file_paths(self) -> set[str]:
        """The grimoire files the index holds rows of."""
        return {str(row[0]) for row in self.db.execute("SELECT path FROM files")}

    def layout(self, path: str) -> tuple[int, bool]:
        row = self.db.execute("SELECT indent, flow FROM files WHERE path=?", (path,)).fetchone()
        return (int(row[0]), bool(row[1])) if row else (0, False)

    def set_file(self, path: str, signature: Signature | None, indent: int = 0,
                 flow: bool = False) -> None:
        if signature is None:
            self.db.execute("DELETE FROM files WHERE path=?", (path,))
            return
        self.db.execute("INSERT OR REPLACE INTO files VALUES(?,?,?,?,?)",
                        (path, signature[0], signature[1], indent, int(flow)))

    def drop_file(self, path: str) -> None:
        self.db.execute(
            f"DELETE FROM entry_text WHERE rowid IN (SELECT rowid FROM entries WHERE {_IN_FILE})",
            (path,))
        self.db.execute(f"DELETE FROM entries WHERE {_IN_FILE}", (path,))

    # -- entries ------------------------------------------------------------------------
    def insert(self, path: str, in_archive: bool, items: Iterable[Span]) -> None:
        self.insert_rows(prepare(path, in_archive, items))

    def insert_rows(self, prepared: list[Prepared]) -> None:
        """Add entries from `prepare` (rowids assigned here, so both tables are filled in one
        statement each)."""
        if not prepared:
            return
        (first,) = self.db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM entries").fetchone()
        add_names(self.db, prepared)
        self.db.executemany(INSERT_ENTRIES, ((first + offset, *row)
                                             for offset, row in enumerate(prepared)))
        self.db.execute(INDEX_TEXT, (first, first + len(prepared) - 1))

    def delete_rows(self, rowids: Iterable[int]) -> None:
        for rowid in rowids:
            self.db.execute("DELETE FROM entry_text WHERE rowid=?", (rowid,))
            self.db.execute("DELETE FROM entries WHERE rowid=?", (rowid,))

    def hashes(self, path: str, after: int = -1, upto: int | None = None
               ) -> list[tuple[int, int | None, int, int]]:
        """(rowid, text hash, first line, last line) of every row of `path` whose first line is
        above `after` and at most `upto`, in file order."""
        return self.db.execute(  # integer columns: each value comes back as an int
            f"SELECT rowid, text_hash, first_line, last_line FROM entries WHERE {_IN_FILE} "
            "AND first_line > ? AND first_line <= ? ORDER BY first_line",
            (path, after, (1 << 62) if upto is None else upto)).fetchall()

    def shift_rows(self, path: str, after: int, delta: int) -> None:
        """Move every row of `path` whose first line is above `after` by `delta` lines."""
        if delta:
            self.db.execute(f"UPDATE entries SET first_line=first_line+?, last_line=last_line+? "
                            f"WHERE {_IN_FILE} AND first_line > ?", (delta, delta, path, after))

    def outline(self, path: str) -> list[tuple[int, int | None, str, int]]:
        """(rowid, text hash, id, first line) of every row of `path`, in file order."""
        return [(int(r), h, str(i), int(f)) for r, h, i, f in self.db.execute(
            f"SELECT rowid, text_hash, id, first_line FROM entries WHERE {_IN_FILE} "
            "ORDER BY first_line", (path,))]

    def move_rows(self, moves: list[tuple[int, int, int]]) -> None:
        """Give rows new line spans: (first line, last line, rowid)."""
        self.db.executemany("UPDATE entries SET first_line=?, last_line=? WHERE rowid=?", moves)

    def shift_many(self, path: str, edits: list[tuple[int, int]]) -> None:
        """Move each row of `path` by the sum of the deltas of the edits that end above it
        (`edits`: (last line of the edited span, lines added or removed), sorted by line)."""
        edits = [(line, delta) for line, delta in edits if delta]
        if not edits:
            return
        ends = [line for line, _ in edits]
        totals = list(itertools.accumulate(delta for _, delta in edits))
        moves = []
        for rowid, first in self.db.execute(
                f"SELECT rowid, first_line FROM entries WHERE {_IN_FILE} AND first_line>?",
                (path, ends[0])).fetchall():
            delta = totals[bisect.bisect_left(ends, first) - 1]
            if delta:
                moves.append((delta, delta, rowid))
        self.db.executemany("UPDATE entries SET first_line=first_line+?, last_line=last_line+? "
                            "WHERE rowid=?", moves)

    def _rows(self, sql: str, args: tuple[Any, ...]) -> list[Row]:
        found = []
        for rowid, path, in_archive, first, last, *values in self.db.execute(
                f"SELECT rowid, {_PATH}, in_archive, first_line, last_line, "
                f"{rowcodec.columns('entries')} FROM entries " + sql, args):
            data = rowcodec.unpack(*values)
            found.append(Row(rowid, values[1], path, bool(in_archive), first, last, data,
                             key_offsets(data, rowcodec.layout(values[0])[2])))
        return found

    def by_id(self, memory_id: str) -> list[Row]:
        return self._rows(f"WHERE id=? ORDER BY in_archive, {_PATH}", (memory_id,))

    def in_file(self, path: str) -> list[Row]:
        return self._rows(f"WHERE {_IN_FILE} ORDER BY first_line", (path,))

    def by_rowids(self, rowids: Iterable[int]) -> list[Row]:
        wanted = list(rowids)
        if not wanted:
            return []
        return self._rows(f"WHERE rowid IN ({','.join('?' * len(wanted))})", tuple(wanted))

    def count(self) -> int:
        (found,) = self.db.execute("SELECT count(*) FROM entries").fetchone()
        return int(found)

    def states(self) -> list[tuple[str, bool, bool, str | None, str | None]]:
        """(category, in archive, retired, superseded_by, expires_at) of every entry."""
        return [(str(c), bool(a), bool(r), s, e) for c, a, r, s, e in self.db.execute(
            "SELECT category, in_archive, retired, superseded_by, expires_at FROM entries")]

    def schema_version(self) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        return str(row[0]) if row else ""

    def count_in_file(self, path: str) -> int:
        row = self.db.execute(f"SELECT count(*) FROM entries WHERE {_IN_FILE}",
                              (path,)).fetchone()
        return int(row[0])

    def all_rows(self) -> list[Row]:
        return self._rows("ORDER BY id", ())

    def where(self, condition: str, args: tuple[Any, ...] = ()) -> list[Row]:
        return self._rows("WHERE " + condition, args)

    def duplicate_of(self, category: str, content: str, now_iso: str = "") -> str | None:
        # Only an active entry absorbs a duplicate: an expired one has left recall, so the same
        # content remembered again must become a new entry (spec section 3).
        row = self.db.execute(
            "SELECT id FROM entries WHERE norm=? AND category=? AND retired=0 "
            "AND superseded_by IS NULL AND (expires_at IS NULL OR expires_at>?) "
            "ORDER BY id LIMIT 1", (spanhash.digest(normalized(content)), category, now_iso)
        ).fetchone()
        return str(row[0]) if row else None

    # -- what readers record about files -----------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    def fingerprints(self, up_to: dict[str, int] | None = None) -> dict[str, list[int]]:
        """Per grimoire file: [rows, rows with a text hash, the sums of the hashes' two 32-bit
        halves, the last line of its last entry]; with `up_to`, only the files named there and
        their rows starting at or before that line. Appending entries leaves a file's
        fingerprint up to its old last line as it was."""
        halves = "sum(text_hash & 4294967295), sum((text_hash >> 32) & 4294967295)"
        rows: Iterable[tuple[Any, ...]]
        if up_to is None:
            rows = self.db.execute(f"SELECT {_PATH}, count(*), count(text_hash), {halves}, "
                                   "max(last_line) FROM entries GROUP BY file")
        else:
            rows = (self.db.execute(f"SELECT ?, count(*), count(text_hash), {halves}, "
                                    f"max(last_line) FROM entries WHERE {_IN_FILE} "
                                    "AND first_line<=?", (path, path, last)).fetchone()
                    for path, last in up_to.items())
        return {str(path): [int(n), int(hashed), int(low or 0), int(high or 0), int(end or 0)]
                for path, n, hashed, low, high, end in rows}

    def after_line(self, path: str, line: int
                   ) -> list[tuple[str, int | None, int, bool, str | None]]:
        """The entries of `path` that start after `line`, in file order: (id, text hash, last
        line, neither retired nor superseded, expires_at)."""
        return [(str(i), h, int(last), not retired and by is None, expires)
                for i, h, last, retired, by, expires in self.db.execute(
                    "SELECT id, text_hash, last_line, retired, superseded_by, expires_at "
                    f"FROM entries WHERE {_IN_FILE} AND first_line>? ORDER BY first_line",
                    (path, line))]

    def expiries(self, ids: list[str]) -> list[str]:
        """The expiry times set on the entries `ids`."""
        marks = ",".join("?" * len(ids))
        return [str(e) for (e,) in self.db.execute(
            f"SELECT expires_at FROM entries WHERE id IN ({marks}) AND expires_at IS NOT NULL",
            ids)]

    # -- events -------------------------------------------------------------------------
    def events_state(self, path: str) -> tuple[int, str]:
        row = self.db.execute("SELECT offset, tail FROM events_state WHERE path=?",
                              (path,)).fetchone()
        return (int(row[0]), str(row[1])) if row else (0, "")

    def set_events_state(self, path: str, offset: int, tail: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO events_state VALUES(?,?,?)", (path, offset, tail))

    def event_paths(self) -> set[str]:
        """The files of the events log the index has read."""
        return {str(row[0]) for row in self.db.execute("SELECT path FROM events_state")}

    def reset_events(self) -> None:
        """Forget what was read of the events log: the next refresh reads all of it."""
        self.db.execute("DELETE FROM forgotten")
        self.db.execute("DELETE FROM events_state")

    def set_forgotten(self, memory_id: str, forgotten: bool) -> None:
        if forgotten:
            self.db.execute("INSERT OR IGNORE INTO forgotten VALUES(?)", (memory_id,))
        else:
            self.db.execute("DELETE FROM forgotten WHERE id=?", (memory_id,))

    def was_forgotten(self, memory_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM forgotten WHERE id=?", (memory_id,)).fetchone() \
            is not None

    def forgotten_ids(self) -> set[str]:
        return {str(r[0]) for r in self.db.execute("SELECT id FROM forgotten")}


__all__ = ["SCHEMA_VERSION", "Index", "Prepared", "Row", "Signature", "Span", "add_names", "create",
           "prepare", "snapshot"]
