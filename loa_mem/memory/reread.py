"""Bring the index rows of one grimoire file up to date after it changed outside loa-mem (a git
pull, a checkout, an editor), parsing only the entries whose text changed.

The file's bytes are cut at each top-level list item (a line starting with `- ` at the list's
indentation); each piece, less its trailing blank and comment lines, is hashed as the index
hashed the entry it came from (`core.spanhash.cut`, without decoding the piece or splitting it
into lines). A piece whose hash an index row of the file has is that entry, unchanged: its row
only moves to its new lines. The other pieces are decoded and parsed; rows no piece claims are
deleted. So a change to a file of 20,000 entries costs one pass over its bytes, a hash per item
and parsing what changed; with the record below, a pass over what changed.

Each time a file is caught up, the index records its text in blocks of 256 items (`meta`, key
`reread:<path>`: each block's size in bytes, lines, items and BLAKE2b hash) beside the signature
the file gets. When the file changes again, the blocks still found byte for byte at its start
and at its end (hashed at C speed: 9 MB in ~10 ms) hold the same entries on the same lines, or
shifted by whole lines; only the bytes between them are cut, hashed and matched with the rows
of the recorded text's middle. So a pull that appends entries reads only those, and an edit in
the middle of a file of 20,000 entries cuts a few hundred. Any write by loa-mem changes the
signature, which retires the record: the next catch-up cuts the whole file again.

Anything this cutting cannot read with certainty (a flow-style list, line breaks other than
"\n", content before the first item, a piece that does not parse as one item, most of the file
changed, an entry deleted or rewritten in a file that may hold an alias) answers None, and the
caller parses the whole file as before: its errors are reported the same way as ever.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import NamedTuple

from loa_mem.core import spanhash, yamlfast
from loa_mem.core.spanhash import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathlib is not imported at run time: the catch-up's budget
    from pathlib import Path
    from typing import Any

    from loa_mem.core.located import Located
    from loa_mem.memory.index import Index, Signature

# more changed pieces than this share of the file: parsing it whole is as cheap
_MOST = 0.5


class Piece(NamedTuple):  # not a dataclass: see `core.located`
    """One top-level item's text: where it starts (0-based line), and its hash."""

    start: int
    text: str
    text_hash: int


APPENDED, MATCHED = "appended", "matched"


def catch_up(index: Index, file: str | Path, path: str, in_archive: bool,
             signature: Signature | None) -> str | None:
    """Update the rows of the indexed file `path` (on disk at `file`), which now has
    `signature`, in a transaction of its own (see `refresh`): APPENDED or MATCHED as there;
    None, nothing changed, when it must be parsed whole."""
    if signature is None or signature[1] == 0 or index.signature(path) is None:
        return None
    try:
        with open(file, "rb") as handle:
            data = handle.read()
    except OSError:  # gone, a directory: the whole parse names the problem
        return None
    index.begin()
    try:
        how = refresh(index, path, in_archive, data, signature)
        if how is None:
            index.rollback()
            return None
        index.set_file(path, signature, *index.layout(path))
        index.commit()
    except BaseException:
        index.rollback()
        raise
    return how


def refresh(index: Index, path: str, in_archive: bool, data: bytes,
            signature: tuple[int, int] | None = None) -> str | None:
    """Update the rows of `path` to its content `data` inside the caller's transaction:
    APPENDED when `data` is the text the rows were read from (the recorded blocks say so) with
    whole items added at its end, and only those were read; MATCHED when its items were matched
    with the rows by their hashes; None (nothing changed) when the file must be parsed whole
    instead. `signature`: the one the caller gives the file next, recorded with the text's
    blocks for the next catch-up."""
    indent, flow = index.layout(path)
    if flow:
        return None
    record = _record(index, path)
    found = _blocked(index, path, in_archive, data, indent, record) if record else None
    if found is None:
        whole = spanhash.cut(data, indent) if _utf8(data) else None
        if whole is None:
            return None
        plan = _plan(data, indent, path, whole, index.hashes(path), len(whole))
        if plan is None:
            return None
        _apply(index, path, in_archive, plan)
        found = MATCHED, _blocks(data, whole, 0, len(data))
    if signature is not None:
        index.set_meta(_KEY + path, _record_text(signature, len(data), found[1]))
    return found[0]


def _record_text(signature: tuple[int, int], size: int, blocks: list[list[Any]]) -> str:
    return json.dumps({"signature": list(signature), "size": size,
                       "lines": sum(b[1] for b in blocks), "blocks": blocks})


def built_record(full: str, path: str, indent: int, signature: tuple[int, int]
                 ) -> tuple[str, str] | None:
    """(meta key, value) of the record `refresh` keeps, for the file `path` (on disk at `full`)
    that a whole build has just read with `signature` and the list indentation `indent`: so
    the first catch-up after a fresh clone or a rebuild cuts only what changed, as any later
    one does. Item starts are found by their lines alone; a record that does not describe the
    rows is harmless (its blocks fail to match and the file is cut whole). None when the file
    no longer has `signature`: the rows were read from another text."""
    import os

    try:
        before = os.stat(full)
        with open(full, "rb") as handle:
            data = handle.read()
        after = os.stat(full)
    except OSError:
        return None
    if not data or any((s.st_mtime_ns, s.st_size) != tuple(signature) for s in (before, after)):
        return None
    found = [(0, start, 0, 0) for start in spanhash.item_starts(data, indent)]
    return _KEY + path, _record_text(signature, len(data), _blocks(data, found, 0, len(data)))


def _utf8(data: bytes) -> bool:
    if data.isascii():  # ASCII is UTF-8: 9 MB checked in 1 ms instead of 10
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_KEY = "reread:"
_BLOCK = 256  # items per recorded block


def recorded_lines(index: Index, path: str) -> int | None:
    """The line breaks in the text of `path` the index holds rows of, when the blocks recorded
    at its last catch-up or build describe that text; else None."""
    record = _record(index, path)
    return None if record is None else int(record["lines"])


def _record(index: Index, path: str) -> dict[str, Any] | None:
    """The blocks recorded when `path` was last caught up, if its rows still are that text."""
    stored = index.meta(_KEY + path)
    if stored is None:
        return None
    record: dict[str, Any] = json.loads(stored)
    signature = index.signature(path)
    blocks = record.get("blocks")
    if not (signature and list(signature) == record.get("signature")
            and isinstance(blocks, list) and sum(b[0] for b in blocks) == record.get("size")):
        return None  # a record of another text, or of a version that recorded no blocks
    return record


def _blocks(data: bytes, found: list[Cut], low: int, high: int) -> list[list[Any]]:
    """[bytes, lines, items, hash] of `data[low:high]` in runs of `_BLOCK` of the items `found`
    there (the first run from `low`, with any comments before the first item)."""
    bounds = [low, *(found[k][1] for k in range(_BLOCK, len(found), _BLOCK)), high]
    view = memoryview(data)
    return [[end - start, data.count(b"\n", start, end), min(_BLOCK, len(found) - n * _BLOCK),
             blake2b(view[start:end], digest_size=16).hexdigest()]
            for n, (start, end) in enumerate(pairwise(bounds)) if end > start]


def _blocked(index: Index, path: str, in_archive: bool, data: bytes, indent: int,
             record: dict[str, Any]) -> tuple[str, list[list[Any]]] | None:
    """The rows updated when the recorded blocks still begin and end `data`: only the bytes
    between the last block found at its start and the first found at its end are cut and
    matched with the rows of the recorded text's middle; the rows after it move by whole
    lines. Returns how (APPENDED when every block was found at the start) and the new blocks;
    None, nothing changed, otherwise."""
    blocks: list[list[Any]] = record["blocks"]
    view, lead = memoryview(data), b" " * indent + b"-"
    low = lines = head = 0
    for size, count, _, digest in blocks:
        if not _boundary(data, low + size, lead) or _digest(view, low, low + size) != digest:
            break
        low, lines, head = low + size, lines + count, head + 1
    appended = head == len(blocks) and low < len(data)
    if head and blocks[head - 1][2] < _BLOCK:  # a short block grows with what follows it
        head -= 1
        low, lines = low - blocks[head][0], lines - blocks[head][1]
    tail, high, after = len(blocks), len(data), 0
    while tail > head:
        size, count, _, digest = blocks[tail - 1]
        if high - size < low or not _boundary(data, high - size, lead) or _digest(
                view, high - size, high) != digest:
            break
        tail, high, after = tail - 1, high - size, after + count
    middle = spanhash.cut(data[low:high], indent) if _utf8(data[low:high]) else None
    if middle is None:
        return None
    found = [(line + lines, start + low, end + low, text_hash)
             for line, start, end, text_hash in middle]
    old_end = int(record["lines"]) - after  # the first line (0-based) of the old suffix
    total = len(found) + sum(b[2] for b in blocks[:head]) + sum(b[2] for b in blocks[tail:])
    plan = _plan(data, indent, path, found, index.hashes(path, lines, old_end), total)
    if plan is None:
        return None
    index.shift_rows(path, old_end, lines + data.count(b"\n", low, high) - old_end)
    _apply(index, path, in_archive, plan)
    new = [*blocks[:head], *_blocks(data, found, low, high), *blocks[tail:]]
    return (APPENDED if appended else MATCHED), new


Cut = tuple[int, int, int, int]  # spanhash.cut: first line, start, end, hash


def _boundary(data: bytes, at: int, lead: bytes) -> bool:
    """Whether `at` is where a top-level item starts in `data`, or its start or end."""
    if at in (0, len(data)):
        return True
    return (0 < at < len(data) and data[at - 1] == 10 and data.startswith(lead, at)
            and data[at + len(lead):at + len(lead) + 1] in (b" ", b"\n", b""))


def _digest(view: memoryview, start: int, end: int) -> str:
    return blake2b(view[start:end], digest_size=16).hexdigest() if end <= len(view) else ""


Plan = tuple[list["Located"], list[tuple[int, int, int]], list[int]]  # read, moves, deleted


def _plan(data: bytes, indent: int, path: str, found: list[Cut],
          rows: list[tuple[int, int | None, int, int]], total: int) -> Plan | None:
    """Every item `found` in `data` matched with one of `rows` by its hash (`total`: the
    items of the whole file): the items no row claims read (only they are decoded), the rows
    that move, the rows left; None when they are too many or do not read."""
    by_hash: dict[int | None, list[tuple[int, int, int]]] = {}
    for rowid, text_hash, first, last in reversed(rows):
        by_hash.setdefault(text_hash, []).append((rowid, first, last))
    moves: list[tuple[int, int, int]] = []
    changed: list[Cut] = []
    for piece in found:
        # the file's last item is read again: whether a line break ends the file changes a
        # block scalar there (`|`), which its hash does not see
        claimed = by_hash.get(piece[3]) if piece[2] < len(data) else None
        if not claimed:
            changed.append(piece)
            continue
        rowid, first, last = claimed.pop()
        if first != piece[0] + 1:
            moves.append((piece[0] + 1, piece[0] + 1 + last - first, rowid))
    if len(changed) > max(20, _MOST * total):
        return None
    deleted = [rowid for left in by_hash.values() for rowid, _, _ in left]
    if deleted and _may_alias(data):
        return None
    read = _read([Piece(line, data[start:end].decode("utf-8"), text_hash)
                  for line, start, end, text_hash in changed], indent, path)
    if read is None:
        return None
    return read, moves, deleted


def _may_alias(data: bytes) -> bool:
    """Whether the file may hold an alias: then an entry deleted or rewritten may have held the
    anchor an unchanged entry's alias reads, and the file is read whole (the alias may no
    longer read, or read another value). A file without a `*` is told by one pass of bytes."""
    return b"*" in data and yamlfast.may_anchor(data.decode("utf-8", "replace"), "*")


def _apply(index: Index, path: str, in_archive: bool, plan: Plan) -> None:
    read, moves, deleted = plan
    index.delete_rows(deleted)
    index.move_rows(moves)
    index.insert(path, in_archive, [item.span() for item in read])


def _read(changed: list[Piece], indent: int, path: str
          ) -> list[Located] | None:
    """The changed pieces read (fast where they are in loa-mem's layout), with their lines in
    the file; None when they do not read as one item each, or may hold an anchor (an
    unchanged entry's alias may read it: the whole file is read again; an alias in a changed
    entry whose anchor is elsewhere does not read alone)."""
    if any(yamlfast.may_anchor(piece.text, "&") for piece in changed):
        return None
    if indent != 0:
        return yamlfast.read_pieces([(p.start, p.text) for p in changed], path)
    found: list[Located] = []
    for piece in changed:  # each alone: splitting the whole file into lines costs more
        read = yamlfast.read(piece.text.split("\n"), [(0, piece.text)], path)
        if read is None:
            return None
        found.extend(item.moved(piece.start) for item in read)
    return found
