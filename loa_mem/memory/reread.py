"""Bring the index rows of one grimoire file up to date after it changed outside loa-mem (a git
pull, a checkout, an editor), parsing only the entries whose text changed.

The file's text is cut at each top-level list item (a line starting with `- ` at the list's
indentation); each piece, less its trailing blank and comment lines, is hashed as the index
hashed the entry it came from (`core.spanhash`). A piece whose hash an index row of the file has
is that entry, unchanged: its row only moves to its new lines. The other pieces are parsed
together by the full YAML reader; rows no piece claims are deleted. So a pull that adds 20
entries to a file of 20,000 costs hashing the file's text and parsing 20 entries.

Most outside changes are a pull that appends entries. Each time a file is caught up, the index
records a hash of its text beside the signature it gets (`meta`, key `reread:<path>`); when the
file changes again and its first characters still hash the same (BLAKE2b, C speed: 6 MB in
~10 ms), only the appended items are cut and read. Any write by loa-mem changes the signature,
which retires the record.

Anything this cutting cannot read with certainty (a flow-style list, line breaks other than
"\n", content before the first item, a piece that does not parse as one item, most of the file
changed) answers None, and the caller parses the whole file as before: its errors are reported
the same way as ever.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from loa_mem.core import spanhash, textfile, yamlfast
from loa_mem.core.errors import InvalidFile
from loa_mem.core.spanhash import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib are not imported at run time: the catch-up's budget
    from pathlib import Path

    from loa_mem.core.located import Located
    from loa_mem.memory.index import Index, Signature

# more changed pieces than this share of the file: parsing it whole is as cheap
_MOST = 0.5


@dataclass(frozen=True)
class Piece:
    """One top-level item's text: where it starts (0-based line), and its hash."""

    start: int
    text: str
    text_hash: int


def pieces(text: str, indent: int) -> list[Piece] | None:
    """The file cut at its top-level items, or None when it is not a plain block list."""
    found = yamlfast.cut(text, indent)
    if found is None:
        return None
    return [Piece(start, chunk, spanhash.digest(_content(chunk))) for start, chunk in found]


def _content(chunk: str) -> str:
    """The chunk without its trailing blank and comment lines and final line break."""
    body = chunk[:-1] if chunk.endswith("\n") else chunk
    last = body[body.rfind("\n") + 1:].lstrip(" ")
    if last and last[0] != "#":
        return body
    lines = chunk.split("\n")
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    return "\n".join(lines)


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
    APPENDED when `data` is the text the rows were read from (the recorded hash says so) with
    whole items added at its end, and only those were read; MATCHED when its items were matched
    with the rows by their hashes; None (nothing changed) when the file must be parsed whole
    instead. `signature`: the one the caller gives the file next, recorded with the text's
    hash for the next catch-up."""
    indent, flow = index.layout(path)
    if flow:
        return None
    how, found = APPENDED, _appended(index, path, in_archive, data, indent,
                                     _record(index, path))
    if found is None:
        try:
            text = textfile.decode(data, path)
        except InvalidFile:
            return None
        if not _matched(index, path, in_archive, text, indent):
            return None
        how, found = MATCHED, (blake2b(data, digest_size=16), text.count("\n"))
    if signature is not None:
        whole, lines = found
        value = {"signature": list(signature), "size": len(data), "hash": whole.hexdigest(),
                 "lines": lines}
        index.set_meta(_KEY + path, json.dumps(value))
    return how


_KEY = "reread:"


def _record(index: Index, path: str) -> dict[str, object] | None:
    """The hash recorded when `path` was last caught up, if its rows still are that text."""
    stored = index.meta(_KEY + path)
    if stored is None:
        return None
    record: dict[str, object] = json.loads(stored)
    signature = index.signature(path)
    return record if signature and list(signature) == record.get("signature") else None


def _appended(index: Index, path: str, in_archive: bool, data: bytes, indent: int,
              record: dict[str, object] | None) -> tuple[blake2b, int] | None:
    """When `data` is the recorded text with whole items added at its end, add their rows and
    return the hash of `data` and its number of lines; None (nothing changed) otherwise. Only
    the added bytes are decoded: the rest hashes as the text the rows were read from."""
    size = record.get("size") if record else None
    if not isinstance(size, int) or not 0 < size < len(data) or data[size - 1] != 10:
        return None
    view = memoryview(data)
    whole = blake2b(view[:size], digest_size=16)
    if record is None or whole.hexdigest() != record.get("hash"):
        return None
    try:
        tail = str(view[size:], "utf-8")
    except UnicodeDecodeError:
        return None
    found = pieces(tail, indent)  # None when the tail starts inside the last item
    if found is None:
        return None
    lines = record.get("lines")  # recorded since; counted in a record made before
    offset = lines if isinstance(lines, int) else data.count(b"\n", 0, size)
    read = _read([Piece(p.start + offset, p.text, p.text_hash) for p in found], indent, path)
    if read is None:
        return None
    index.insert(path, in_archive, [item.span() for item in read])
    whole.update(view[size:])
    return whole, offset + tail.count("\n")


def _matched(index: Index, path: str, in_archive: bool, text: str, indent: int) -> bool:
    """Every item of `text` matched with a row by its hash: rows move, the rest is read."""
    found = pieces(text, indent)
    if found is None:
        return False
    rows = index.hashes(path)
    by_hash: dict[int | None, list[tuple[int, int, int]]] = {}
    for rowid, text_hash, first, last in reversed(rows):
        by_hash.setdefault(text_hash, []).append((rowid, first, last))
    moves: list[tuple[int, int, int]] = []
    changed: list[Piece] = []
    for piece in found:
        claimed = by_hash.get(piece.text_hash)
        if not claimed:
            changed.append(piece)
            continue
        rowid, first, last = claimed.pop()
        if first != piece.start + 1:
            moves.append((piece.start + 1, piece.start + 1 + last - first, rowid))
    if len(changed) > max(20, _MOST * len(found)):
        return False
    read = _read(changed, indent, path)
    if read is None:
        return False
    index.delete_rows(rowid for left in by_hash.values() for rowid, _, _ in left)
    index.move_rows(moves)
    index.insert(path, in_archive, [item.span() for item in read])
    return True


def _read(changed: list[Piece], indent: int, path: str
          ) -> list[Located] | None:
    """The changed pieces read (fast where they are in loa-mem's layout), with their lines in
    the file; None when they do not read as one item each."""
    if indent != 0:
        return yamlfast.read_pieces([(p.start, p.text) for p in changed], path)
    found: list[Located] = []
    for piece in changed:  # each alone: splitting the whole file into lines costs more
        read = yamlfast.read(piece.text.split("\n"), [(0, piece.text)], path)
        if read is None:
            return None
        found.extend(item.moved(piece.start) for item in read)
    return found
