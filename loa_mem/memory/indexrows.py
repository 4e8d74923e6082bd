"""The index's schema and its rows: what `index.Index` stores for each entry, computed where a file
was parsed (a worker process on a cold build), so only plain values travel.

An entry's values are stored once (see `rowcodec`): the columns recall filters and ranks on, the
content and summary the full-text index reads, and as JSON only the keys no column holds. The
grimoire paths and the entries' key layouts are numbered in tables of their own.

The full-text table holds no copy of the text: it is an external-content FTS5 table over the view
`entry_source`, which reads content, summary and tags out of each row's columns. Its rows are
therefore always indexed from that view (never from values passed alongside), so that deleting a
row removes exactly the words it added.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import NamedTuple

from loa_mem.core import spanhash
from loa_mem.core.clock import parse, written_epoch
from loa_mem.core.yamlfast import Spans
from loa_mem.memory import rowcodec
from loa_mem.memory.rules import normalize as normalized
from loa_mem.memory.rules import tier

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from loa_mem.core.located import ListFile
else:  # the aliases below are built at run time, without typing's special forms
    Any = object


TABLES = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,
    indent INTEGER, flow INTEGER);
CREATE TABLE IF NOT EXISTS paths(file INTEGER PRIMARY KEY, path TEXT UNIQUE);
CREATE TABLE IF NOT EXISTS layouts(layout INTEGER PRIMARY KEY, keys TEXT UNIQUE);
-- summary: its text, or its length when the content starts with it (rowcodec);
-- tier: high, review or ineffective (the tiers that move a score or are looked for), else NULL
CREATE TABLE IF NOT EXISTS entries(
    rowid INTEGER PRIMARY KEY, id TEXT, file INTEGER, in_archive INTEGER, retired INTEGER,
    category TEXT, confidence REAL, created_ts REAL, expires_at TEXT, superseded_by TEXT,
    norm INTEGER, tags TEXT, tier TEXT, first_line INTEGER, last_line INTEGER, layout INTEGER,
    text_hash INTEGER, content TEXT, summary, data TEXT);
CREATE VIEW IF NOT EXISTS entry_source(rowid, content, summary, tags) AS
    SELECT rowid, coalesce(content, ''), CASE typeof(summary) WHEN 'integer'
    THEN substr(content, 1, summary) ELSE coalesce(summary, '') END,
    substr(tags, 2, length(tags) - 2) FROM entries;
CREATE VIRTUAL TABLE IF NOT EXISTS entry_text USING fts5(content, summary, tags,
    content='entry_source', content_rowid='rowid', tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS forgotten(id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS events_state(path TEXT PRIMARY KEY, offset INTEGER, tail TEXT);
"""

# Created after the rows on a cold build (a sorted build: faster, and pages filled).
INDEXES = """
CREATE INDEX IF NOT EXISTS entries_id ON entries(id);
-- Covers a file's outline (catching up after an outside change, validate) without reading
-- each row's data.
CREATE INDEX IF NOT EXISTS entries_path ON entries(file, first_line, last_line, text_hash, id);
-- norm: the 64-bit hash (core.spanhash) of the normalized content, for duplicate detection
CREATE INDEX IF NOT EXISTS entries_norm ON entries(norm);
-- Covers the live-entry filters (recall's candidates, the context's counts and expiry
-- warnings) so they read this index instead of every row's JSON.
CREATE INDEX IF NOT EXISTS entries_live ON entries(retired, superseded_by, expires_at,
    confidence, category, created_ts, tier, id);
-- The entries written near a time (recall's session neighbours), without a pass over every
-- live entry.
CREATE INDEX IF NOT EXISTS entries_time ON entries(created_ts);
"""

# a row of `prepare` after its rowid; the path and the layout are looked up by their text
# (`index.add_names` numbers them first)
INSERT_ENTRIES = (
    "INSERT INTO entries(rowid, id, file, in_archive, retired, category, confidence, created_ts, "
    "expires_at, superseded_by, norm, tags, tier, first_line, last_line, layout, text_hash, "
    "content, summary, data) VALUES(?,?,(SELECT file FROM paths WHERE path=?),?,?,?,?,?,?,?,?,?,"
    "?,?,?,(SELECT layout FROM layouts WHERE keys=?),?,?,?,?)")
# the same, each row numbered after the last (a cold build: its rows come in order)
INSERT_NEXT = INSERT_ENTRIES.replace("(rowid, ", "(", 1).replace("VALUES(?,", "VALUES(", 1)
ADD_PATH = "INSERT OR IGNORE INTO paths(path) VALUES(?)"
ADD_LAYOUT = "INSERT OR IGNORE INTO layouts(keys) VALUES(?)"
INDEX_TEXT = ("INSERT INTO entry_text(rowid, content, summary, tags) "
              "SELECT rowid, content, summary, tags FROM entry_source WHERE rowid BETWEEN ? AND ?")

# (entry data, first line, last line, {key: line offset from the first line}, text hash)
Span = tuple[Any, int, int, dict[str, int], int]
# an entry's columns (all but its rowid), ready to insert
Prepared = tuple[Any, ...]

_encode = rowcodec.encode
_epochs: dict[str, float | None] = {}
_key_texts: dict[tuple[int, ...], str] = {}


def _epoch(timestamp: Any) -> float | None:
    written = written_epoch(timestamp)  # the form loa-mem writes: most entries, each its own
    if written is not None:
        return written
    text = str(timestamp) if timestamp else ""
    found = _epochs.get(text, -1.0)
    if found == -1.0:
        try:
            found = parse(text).timestamp() if text else None
        except ValueError:
            found = None
        if len(_epochs) < 4096:
            _epochs[text] = found
    return found


def _tier(effectiveness: Any) -> str | None:
    """The tier column: only the tiers that move a score or that commands look for."""
    found = tier(effectiveness if isinstance(effectiveness, dict) else None)
    return found if found in ("high", "review", "ineffective") else None


def key_text(data: Any, key_offsets: dict[str, int]) -> str:
    """The key lines as stored: the offsets alone ("0,1,2,4") when the keys are the data's keys
    in order, as both readers return them; JSON otherwise."""
    offsets = tuple(key_offsets.values())
    if isinstance(data, dict) and tuple(data) == tuple(key_offsets):
        found = _key_texts.get(offsets)
        if found is None:
            found = ",".join(map(str, offsets))
            if len(_key_texts) < 1024:
                _key_texts[offsets] = found
        return found
    return _encode(key_offsets)


def key_offsets(data: Any, text: str | None) -> dict[str, int]:
    """The {key: line offset} `key_text` stored."""
    if not text:
        return {}
    if text.startswith("{"):
        found: dict[str, int] = json.loads(text)
        return found
    return dict(zip(data, map(int, text.split(",")), strict=True))


def _columns(data: Any, path: str, in_archive: bool, first: int, last: int,
             offsets: dict[str, int], text_hash: int) -> Prepared:
    if not isinstance(data, dict):
        data = {"id": None, "content": str(data)}
    get = data.get
    source = get("source")
    tags = get("tags")
    tags = tags if isinstance(tags, list) else []
    confidence = get("confidence")
    effectiveness = get("effectiveness")
    content = get("content")
    created = _epoch(source.get("timestamp") if isinstance(source, dict) else None)
    layout, rest = rowcodec.pack(data, key_text(data, offsets), created)
    return (str(get("id")), path, int(in_archive), int(in_archive or bool(get("archived"))),
            str(get("category")), confidence if isinstance(confidence, (int, float)) else None,
            created,
            str(data["expires_at"]) if get("expires_at") else None,
            str(data["superseded_by"]) if get("superseded_by") else None,
            spanhash.digest(normalized(str(content or ""))),
            f" {' '.join(map(str, tags))} ",
            _tier(effectiveness) if effectiveness else None,  # none: untested
            first, last, layout, text_hash, rowcodec.text_column(content),
            rowcodec.summary_column(get("summary"), content), rest)


def prepare(path: str, in_archive: bool, items: Iterable[Span]) -> list[Prepared]:
    """The rows `Index.insert_rows` adds: plain values, cheap to send from a parsing process."""
    return [_columns(span[0], path, in_archive, *span[1:]) for span in items]


class FileRows(NamedTuple):  # not a dataclass: see `core.located`
    """A parsed grimoire file as the index stores it: its list's layout and its rows."""

    indent: int
    flow: bool
    rows: list[Prepared]


def file_rows(archived: frozenset[str], path: str, parsed: ListFile | Spans) -> FileRows:
    """Runs where the file was parsed (a worker process on a cold index of many entries);
    `parsed` from `yamlfast.load_list` or, without the objects, `yamlfast.load_spans`."""
    spans = parsed.spans if isinstance(parsed, Spans) else (item.span() for item in parsed.items)
    return FileRows(parsed.indent, parsed.flow, prepare(path, path in archived, spans))

